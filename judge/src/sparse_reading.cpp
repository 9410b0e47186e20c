// Reading a sparse-attention call (sparse_reading.hpp).
#include "kparity/judge/sparse_reading.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/reference/elements.hpp"
#include "row_max.hpp"

namespace kparity::judging::sparse_reading {

std::vector<Source> sources_of(std::string_view op) {
  if (op == kparity::sparse::kPagedPrefillOp)
    return {{"kv_indptr_prefix", "kv_indices_prefix", "unified_kv", false, true},
            {"kv_indptr_extend", "kv_indices_extend", "kv", true, true}};
  if (op == kparity::sparse::kPagedDecodeOp) return {{"kv_indptr", "kv_indices", "unified_kv", false, false}};
  throw std::invalid_argument("sparse_fuzz: '" + std::string(op) + "' is not a sparse-attention op");
}

std::int64_t tokens(const Call& c) { return c.at("q").view().size(0); }
std::int64_t heads(const Call& c) { return c.at("q").view().size(1); }

Lists read_lists(const Call& c, const Source& s) {
  const TensorView ptr = c.at(s.indptr).view(), idx = c.at(s.indices).view();
  const std::int64_t T = tokens(c);
  Lists out(static_cast<std::size_t>(T));
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t b = ptr.load_int_flat(t), e = ptr.load_int_flat(t + 1);
    for (std::int64_t j = b; j < e; ++j) out[static_cast<std::size_t>(t)].push_back(idx.load_int_flat(j));
  }
  return out;
}

// A run of n elements of v from `offset`, `stride` apart, widened as TensorView::load widens them
// (one dtype dispatch a run instead of a bounds-checked load an element; issue 32 B: the per-element
// loads here were a tenth of a kernel-sized sparse case's host time).
namespace {
void load_row(const TensorView& v, std::int64_t offset, std::int64_t stride, std::int64_t n, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(n));
  reference::elements::load_run(v, offset, stride, n, out.data());
}
}  // namespace

Magnitudes magnitudes(const Call& c) {
  Magnitudes m;
  const TensorView q = c.at("q").view();
  const std::int64_t T = tokens(c), H = heads(c), D = q.size(2);
  std::vector<double> row;
  // q[t, h, :] for every t, h: the finite |q| maximum (order-free) and, below, the logit bound.
  const auto q_row = [&](std::int64_t t, std::int64_t h) {
    load_row(q, t * q.strides[0] + h * q.strides[1], q.strides[2], D, row);
  };
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t h = 0; h < H; ++h) {
      q_row(t, h);
      m.max_q = rows::finite_abs_max(D, row.data(), m.max_q);
    }
  const auto shift_it = c.scalars.find("replicated_logit_shift");
  const double shift = shift_it == c.scalars.end() ? 0.0 : std::fabs(shift_it->second);
  const double scale = std::fabs(c.scalars.at("softmax_scale"));
  // Per token and channel, the largest |value| among its selected rows: |logit| <= scale *
  // sum_d |q[t, h, d]| * kmax[t][d] (+ |shift|), far closer to the real logits than D * max|q| *
  // max|row| while costing T * (H + keys) * D.
  std::vector<std::vector<double>> kmax(static_cast<std::size_t>(T), std::vector<double>(static_cast<std::size_t>(D), 0.0));
  std::vector<std::int64_t> keys(static_cast<std::size_t>(T), 0);
  for (const auto& s : sources_of(c.op)) {
    const TensorView rows = c.at(s.rows).view();
    if (rows.rank != 2) throw std::invalid_argument(std::string(s.rows) + " is not [rows, D]");
    const auto lists = read_lists(c, s);
    for (std::size_t t = 0; t < lists.size(); ++t)
      for (auto r : lists[t]) {
        if (r < 0 || r >= rows.size(0)) continue;
        ++keys[t];
        load_row(rows, r * rows.strides[0], rows.strides[1], D, row);
        rows::finite_abs_max_into(D, row.data(), kmax[t].data(), m.max_selected);
      }
  }
  for (std::int64_t t = 0; t < T; ++t) {
    m.max_keys = std::max(m.max_keys, keys[static_cast<std::size_t>(t)]);
    if (keys[static_cast<std::size_t>(t)] == 0) continue;
    const double* km = kmax[static_cast<std::size_t>(t)].data();
    for (std::int64_t h = 0; h < H; ++h) {
      q_row(t, h);
      double b = 0.0;
      // A non-finite |q| adds 0 * km[d] = +0 (km is finite and >= 0): the same sum as skipping it,
      // without a branch an element.
      for (std::int64_t d = 0; d < D; ++d) {
        const double v = std::fabs(row[static_cast<std::size_t>(d)]);
        b += (v <= DBL_MAX ? v : 0.0) * km[d];
      }
      m.max_logit = std::max(m.max_logit, scale * b + shift);
    }
  }
  const TensorView sink = c.at("attn_sink").view();
  for (std::int64_t h = 0; h < heads(c); ++h) {
    const double v = std::fabs(static_cast<double>(static_cast<float>(sink.load_flat(h))));
    if (std::isfinite(v)) m.max_logit = std::max(m.max_logit, v + shift);
  }
  return m;
}

double dtype_eps(DType t) {
  switch (t) {
    case DType::bf16: return 0x1p-7;
    case DType::f16: return 0x1p-10;
    case DType::f32: return 0x1p-23;
    default: throw std::invalid_argument("dtype_eps: not a float dtype");
  }
}

double dtype_min_subnormal(DType t) {
  switch (t) {
    case DType::bf16: return 0x1p-133;
    case DType::f16: return 0x1p-24;
    case DType::f32: return 0x1p-149;
    default: throw std::invalid_argument("dtype_min_subnormal: not a float dtype");
  }
}

}  // namespace kparity::judging::sparse_reading
