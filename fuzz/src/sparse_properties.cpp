// Metamorphic properties of the sparse-attention references (sparse_attention.md G.2): the result
// depends on each token's multiset of selected rows and nothing else.
#include <algorithm>
#include <cmath>
#include <rapidcheck.h>

#include "kparity/fuzz/property.hpp"
#include "kparity/fuzz/sparse_case.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::fuzz {
namespace {

constexpr auto kOracle = reference::Precision::oracle;

SparseShape draw_shape() {
  SparseShape s;
  s.T = *rc::gen::inRange<std::int64_t>(1, 6);
  s.H = *rc::gen::inRange<std::int64_t>(1, 5);
  s.D = *rc::gen::element<std::int64_t>(1, 8, 16, 64);
  s.P = *rc::gen::inRange<std::int64_t>(1, 12);
  s.N_e = *rc::gen::inRange<std::int64_t>(1, 6);
  s.dtype = *rc::gen::element(DType::bf16, DType::f16);
  s.sentinels = *rc::gen::arbitrary<bool>();
  s.sink = *rc::gen::arbitrary<bool>();
  s.shift = *rc::gen::element(0.0, 0.5, -1.25);
  return s;
}

// Both sides are fp64 oracles of the same value, summed in another order (~1e-15 apart), then
// rounded once into the storage dtype: at most one ulp apart, 2^-7 relative for bf16 (8-bit
// significand), 2^-10 for fp16. LSE is stored in fp32: a few fp32 ulps.
double out_rtol(DType t) { return t == DType::bf16 ? 1.0 / 128 : 1.0 / 1024; }
constexpr double kOutAtol = 1e-6, kLseRtol = 4e-7, kLseAtol = 1e-6;

struct Result {
  Tensor out, lse;
};
Result run(SparseCase& c) {
  reference::sparse::paged_prefill(c.prefill_args(), kOracle);
  return {c.out, c.lse};
}

void assert_same(const Result& a, const Result& b, DType t) {
  const auto d_out = compare_close(a.out.view(), b.out.view(), kOutAtol, out_rtol(t));
  const auto d_lse = compare_close(a.lse.view(), b.lse.view(), kLseAtol, kLseRtol);
  RC_LOG() << "out: " << d_out << "\nlse: " << d_lse << "\n";
  RC_ASSERT(d_out.empty());
  RC_ASSERT(d_lse.empty());
}

std::string describe(const SparseShape& s, std::uint64_t seed) {
  return "T=" + std::to_string(s.T) + " H=" + std::to_string(s.H) + " D=" + std::to_string(s.D) +
         " P=" + std::to_string(s.P) + " N_e=" + std::to_string(s.N_e) + " dtype=" +
         std::string(dtype_name(s.dtype)) + " sentinels=" + std::to_string(s.sentinels) +
         " sink=" + std::to_string(s.sink) + " shift=" + std::to_string(s.shift) + " seed=" + std::to_string(seed);
}

void permutation_invariant() {
  const SparseShape s = draw_shape();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed) << "\n";
  SparseCase c(s, seed);
  const Result base = run(c);
  for (auto* lists : {&c.prefix, &c.extend})
    for (auto& l : lists->rows) std::reverse(l.begin(), l.end());
  // Rotate too, so lists of three or more see an order that is not a reversal.
  for (auto& l : c.prefix.rows)
    if (l.size() > 2) std::rotate(l.begin(), l.begin() + 1, l.end());
  assert_same(run(c), base, s.dtype);
}

// Moving a selected pool row into the extend source (appending it to kv and re-indexing) changes
// nothing: one softmax runs over the union of both sources.
void source_split_invariant() {
  SparseShape s = draw_shape();
  s.shift = 0.0;  // the shift applies to the replicated (extend) terms only, so moving rows would move it
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed) << "\n";
  SparseCase c(s, seed);
  const Result base = run(c);
  std::vector<std::pair<std::int64_t, std::int64_t>> moved;  // (token, pool row)
  for (std::int64_t t = 0; t < s.T; ++t) {
    auto& l = c.prefix.rows[static_cast<std::size_t>(t)];
    auto it = std::find_if(l.begin(), l.end(), [](std::int64_t v) { return v >= 0; });
    if (it == l.end()) continue;
    moved.emplace_back(t, *it);
    l.erase(it);
  }
  RC_PRE(!moved.empty());
  Tensor kv2(s.dtype, {s.N_e + static_cast<std::int64_t>(moved.size()), s.D});
  for (std::int64_t r = 0; r < s.N_e; ++r)
    for (std::int64_t d = 0; d < s.D; ++d) kv2.view().store(std::array<std::int64_t, 2>{r, d}, c.kv.view().at({r, d}));
  for (std::size_t m = 0; m < moved.size(); ++m) {
    const std::int64_t row = s.N_e + static_cast<std::int64_t>(m);
    for (std::int64_t d = 0; d < s.D; ++d)
      kv2.view().store(std::array<std::int64_t, 2>{row, d}, c.unified_kv.view().at({moved[m].second, d}));
    c.extend.rows[static_cast<std::size_t>(moved[m].first)].push_back(row);
  }
  c.kv = kv2;
  assert_same(run(c), base, s.dtype);
}

// A repeated index weighs its row twice, exactly like a physical copy of the row.
void duplicate_equals_copy() {
  SparseShape s = draw_shape();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed) << "\n";
  SparseCase c(s, seed);
  const std::int64_t t = *rc::gen::inRange<std::int64_t>(0, s.T);
  const std::int64_t row = *rc::gen::inRange<std::int64_t>(0, s.N_e);
  c.extend.rows[static_cast<std::size_t>(t)].push_back(row);
  c.extend.rows[static_cast<std::size_t>(t)].push_back(row);
  const Result dup = run(c);
  Tensor kv2(s.dtype, {s.N_e + 1, s.D});
  for (std::int64_t r = 0; r <= s.N_e; ++r)
    for (std::int64_t d = 0; d < s.D; ++d)
      kv2.view().store(std::array<std::int64_t, 2>{r, d}, c.kv.view().at({r < s.N_e ? r : row, d}));
  c.kv = kv2;
  c.extend.rows[static_cast<std::size_t>(t)].back() = s.N_e;
  assert_same(run(c), dup, s.dtype);
}

// The decode sibling is the prefill with an empty extend source and no sentinels (F.0); in the
// oracle both are the same fp64 softmax (decode's log2 domain is a kernel detail).
void decode_equals_prefill() {
  SparseShape s = draw_shape();
  s.sentinels = false;
  s.shift = 0.0;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed) << "\n";
  SparseCase c(s, seed);
  for (auto& l : c.extend.rows) l.clear();
  const Result pre = run(c);
  Tensor idx = c.prefix.indices(), ptr = c.prefix.indptr();
  Tensor out(s.dtype, {s.T, s.H, s.D}), lse(DType::f32, {s.T, s.H});
  out.poison();
  lse.poison();
  sparse::PagedDecodeArgs d;
  d.q = c.q.view();
  d.unified_kv = c.unified_kv.view();
  d.kv_indices = idx.view();
  d.kv_indptr = ptr.view();
  d.attn_sink = c.attn_sink.view();
  d.softmax_scale = c.softmax_scale;
  d.return_lse = true;
  d.out = out.view();
  d.lse = lse.view();
  reference::sparse::paged_decode(d, kOracle);
  assert_same({out, lse}, pre, s.dtype);
}

}  // namespace

std::vector<Property> sparse_properties() {
  return {
      {"sparse/paged_prefill/permutation-invariant", "metamorphic", permutation_invariant},
      {"sparse/paged_prefill/source-split-invariant", "metamorphic", source_split_invariant},
      {"sparse/paged_prefill/duplicate-equals-copy", "metamorphic", duplicate_equals_copy},
      {"sparse/paged_decode/equals-prefill-without-extend", "metamorphic", decode_equals_prefill},
  };
}

}  // namespace kparity::fuzz
