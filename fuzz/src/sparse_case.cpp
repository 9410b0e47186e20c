#include "kparity/fuzz/sparse_case.hpp"

#include <cmath>
#include <limits>

#include "kparity/core/random.hpp"

namespace kparity::fuzz {

Tensor CsrLists::indices() const {
  std::int64_t n = 0;
  for (const auto& r : rows) n += static_cast<std::int64_t>(r.size());
  Tensor t(DType::i32, {n});
  std::int64_t j = 0;
  for (const auto& r : rows)
    for (auto v : r) {
      const std::int64_t idx[1] = {j++};
      t.view().store_int(idx, v);
    }
  return t;
}

Tensor CsrLists::indptr() const {
  Tensor t(DType::i32, {static_cast<std::int64_t>(rows.size()) + 1});
  std::int64_t acc = 0;
  for (std::size_t i = 0; i <= rows.size(); ++i) {
    const std::int64_t idx[1] = {static_cast<std::int64_t>(i)};
    t.view().store_int(idx, acc);
    if (i < rows.size()) acc += static_cast<std::int64_t>(rows[i].size());
  }
  return t;
}

namespace {
std::vector<std::vector<std::int64_t>> draw_lists(Rng& rng, std::int64_t T, std::int64_t rows,
                                                  std::int64_t max_len, bool sentinels) {
  std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(T));
  for (auto& l : out) {
    const std::int64_t n = rows == 0 ? 0 : rng.integer(0, max_len);
    for (std::int64_t j = 0; j < n; ++j) {
      // About one entry in six is a sentinel; repeats of a row happen naturally.
      if (sentinels && rng.integer(0, 5) == 0) {
        l.push_back(-1 - rng.integer(0, 2));
      } else {
        l.push_back(rng.integer(0, rows - 1));
      }
    }
  }
  return out;
}
}  // namespace

SparseCase::SparseCase(const SparseShape& s, std::uint64_t seed) : s_(s) {
  q = Tensor(s.dtype, {s.T, s.H, s.D});
  unified_kv = Tensor(s.dtype, {s.P, s.D});
  kv = Tensor(s.dtype, {s.N_e, s.D});
  attn_sink = Tensor(DType::f32, {s.H});
  out = Tensor(s.dtype, {s.T, s.H, s.D});
  lse = Tensor(DType::f32, {s.T, s.H});
  q.fill_normal(seed ^ 0x11, 0.0, 1.0);
  unified_kv.fill_normal(seed ^ 0x22, 0.0, 1.0);
  kv.fill_normal(seed ^ 0x33, 0.0, 1.0);
  if (s.sink) {
    attn_sink.fill_normal(seed ^ 0x44, 0.0, 1.0);
  } else {
    attn_sink.fill(-std::numeric_limits<double>::infinity());
  }
  softmax_scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  Rng rng(seed ^ 0x55);
  prefix.rows = draw_lists(rng, s.T, s.P, s.max_prefix, s.sentinels);
  extend.rows = draw_lists(rng, s.T, s.N_e, s.max_extend, s.sentinels);
}

void SparseCase::rebuild_csr() {
  prefix_idx_ = prefix.indices();
  prefix_ptr_ = prefix.indptr();
  extend_idx_ = extend.indices();
  extend_ptr_ = extend.indptr();
}

sparse::PagedPrefillArgs SparseCase::prefill_args() {
  rebuild_csr();
  out.poison();
  lse.poison();
  sparse::PagedPrefillArgs a;
  a.q = q.view();
  a.unified_kv = unified_kv.view();
  a.kv_indices_prefix = prefix_idx_.view();
  a.kv_indptr_prefix = prefix_ptr_.view();
  a.kv = kv.view();
  a.kv_indices_extend = extend_idx_.view();
  a.kv_indptr_extend = extend_ptr_.view();
  a.attn_sink = attn_sink.view();
  a.softmax_scale = softmax_scale;
  a.return_lse = true;
  a.replicated_logit_shift = s_.shift;
  a.out = out.view();
  a.lse = lse.view();
  return a;
}

}  // namespace kparity::fuzz
