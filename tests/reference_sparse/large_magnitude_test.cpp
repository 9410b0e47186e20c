// Large magnitudes and near-overflow exponents (issue 18 item 1c): what fp32 (the faithful reference,
// and the kernels, which share its rounding points) does where the exact result is finite, and that
// the a-priori bound (reference/sparse/error_bound.cpp) sees it coming.
#include <cfloat>
#include <cmath>

#include "sparse_case.hpp"

namespace kpt {
namespace {

kparity::reference::ErrorBounds bound_of(const Case& c) {
  Csr pre = make_csr(c.pre), ext = make_csr(c.ext);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  kparity::sparse::PagedPrefillArgs a;
  a.q = c.q, a.unified_kv = c.ukv, a.kv = c.kv;
  a.kv_indices_prefix = pre.indices, a.kv_indptr_prefix = pre.indptr;
  a.kv_indices_extend = ext.indices, a.kv_indptr_extend = ext.indptr;
  a.attn_sink = c.sink, a.softmax_scale = c.scale, a.replicated_logit_shift = c.shift, a.return_lse = true;
  a.out = out, a.lse = lse.view();
  return kparity::reference::sparse::paged_prefill_error_bound(a);
}

Case two_channel(DType dt, std::int64_t rows) {
  Case c;
  c.dt = dt;
  c.T = 1, c.H = 1, c.D = 2;
  c.q = Tensor(dt, {1, 1, 2});
  c.ukv = Tensor(dt, {rows, 2});
  c.kv = Tensor(dt, {1, 2});
  c.sink = Tensor(DType::f32, {1});
  c.sink.fill(-kInf);
  c.ext = {{}};
  return c;
}

// f16 out near 65504: the numerator's weights are rounded to f16 for P.V (C.4 item 4), the
// denominator's are not, so a row of weights that all round up lifts out = 65504 (every value
// row holds 65504) by up to 2^-11 relative, past f16's overflow threshold 65520: +inf. Upstream
// (sglang's Triton kernel) and our kernels share this rounding point, so the faithful reference
// shows it too and the rule accepts the kernel's +inf through it; the exact result is 65504.
TEST(SparseLargeMagnitude, F16OutputOverflowsFromRoundedWeights) {
  Case c = two_channel(DType::f16, 2);
  c.q.view().store(std::array<std::int64_t, 3>{0, 0, 1}, 1.0);  // logit = channel 1 of the row
  c.ukv.view().store(std::array<std::int64_t, 2>{0, 0}, 65504.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{1, 0}, 65504.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{1, 1}, -1.0);
  // e^-scale just above the f16 midpoint 0.5 + 2^-12: every weight of row 1 rounds up by ~2^-12.
  c.scale = -std::log(0.5 + 0x1p-12 + 0x1p-19);
  List keys{0};
  keys.insert(keys.end(), 200, 1);
  c.pre = {keys};
  const Result o = run_prefill(c, Precision::oracle, {}, shallow());
  const Result f = run_prefill(c, Precision::faithful, {}, shallow());
  EXPECT_EQ(o.out[0], 65504.0);
  EXPECT_EQ(f.out[0], kInf);
  // The bound predicts it: |o| + bound reaches the f16 store's overflow threshold.
  EXPECT_GE(65504.0 + bound_of(c).at("out")[0], 65520.0);
}

// bf16 queries of 2^64 and keys of 2^63: each product is 2^127, their sum 2^128 overflows the fp32
// accumulator before the scale 2^-10 would bring the logit (2^118) back into range. fp32 then has
// an infinite logit and inf - inf = NaN in the denominator, which upstream's Z > 0 test turns into
// zeros with lse -inf (docs/upstream_conventions.md); the exact result is finite. The bound is
// +inf: any value is an fp32 implementation's legitimate answer there.
TEST(SparseLargeMagnitude, LogitOverflowGetsAnInfiniteBound) {
  Case c = two_channel(DType::bf16, 2);
  for (std::int64_t d = 0; d < 2; ++d) {
    c.q.view().store(std::array<std::int64_t, 3>{0, 0, d}, 0x1p64);
    c.ukv.view().store(std::array<std::int64_t, 2>{0, d}, 0x1p63);
    c.ukv.view().store(std::array<std::int64_t, 2>{1, d}, d ? -0x1p63 : 0x1p63);
  }
  c.scale = 0x1p-10;
  c.pre = {{0, 1}};
  const Result o = run_prefill(c, Precision::oracle, {}, shallow());
  const Result f = run_prefill(c, Precision::faithful, {}, shallow());
  EXPECT_TRUE(std::isfinite(o.out[0]) && std::isfinite(o.lse[0]));
  EXPECT_EQ(f.out[0], 0.0);
  EXPECT_EQ(f.lse[0], -kInf);
  const auto b = bound_of(c);
  EXPECT_EQ(b.at("out")[0], kInf);
  EXPECT_EQ(b.at("lse")[0], kInf);
}

// Logits of 1e30 - 500 and 1e30 + 500: fp32 (spacing 2^76 there) and even fp64 (2^47) see them
// equal; the oracle takes the exponents from exact differences q.(k_j - k_max), re-centred on the
// true max, and gets the weights e^-1000 : 1. Not a kernel defect: the bound (gamma_D sum |q k|)
// admits fp32's equal weights.
TEST(SparseLargeMagnitude, HugeNearlyEqualLogitsAreUndetermined) {
  Case c = two_channel(DType::bf16, 2);
  c.q.view().store(std::array<std::int64_t, 3>{0, 0, 0}, 1.0);
  c.q.view().store(std::array<std::int64_t, 3>{0, 0, 1}, 1.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{0, 0}, 1e30);
  c.ukv.view().store(std::array<std::int64_t, 2>{0, 1}, -500.0);  // the first of the tied logits is
  c.ukv.view().store(std::array<std::int64_t, 2>{1, 0}, 1e30);     // 1000 below the other: centred on
  c.ukv.view().store(std::array<std::int64_t, 2>{1, 1}, 500.0);    // it, e^1000 would overflow
  c.scale = 1.0;
  c.pre = {{0, 1}};
  const Result o = run_prefill(c, Precision::oracle, {}, shallow());
  const Result f = run_prefill(c, Precision::faithful, {}, shallow());
  EXPECT_EQ(o.out[1], 500.0);                 // weights 1 : e^-1000
  EXPECT_EQ(f.out[1], 0.0);                   // fp32: equal logits, equal weights
  EXPECT_GE(bound_of(c).at("out")[1], 1000);  // the range of the values
}

}  // namespace
}  // namespace kpt
