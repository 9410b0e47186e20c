// Large magnitudes and near-overflow exponents in the KDA ops (issue 18 item 1c): what fp32 (the
// faithful reference, whose rounding points upstream and our kernels share) does where the exact
// result is finite, and whether the a-priori bound (reference/kda/error_bound.cpp) admits it.
#include <algorithm>

#include "kda_test_util.hpp"

namespace kdatest {
namespace {

ValidateOptions no_data_checks() { return {Entry::reference, true, false, true}; }

// q of 2^70 (bf16) with the l2 norm: fp32's sum of squares overflows, q / sqrt(inf) = 0, so the
// output loses the q term entirely; the exact q^ is the unit vector. Upstream computes the norm
// the same way (fp32, no rescaling by max |q|), so the faithful reference shows it and the bound
// is +inf there.
TEST(KdaLargeMagnitude, L2NormOfHugeQOverflowsInFp32) {
  const Shape5 s{1, 1, 1, 16, 16};
  DecodeStep in = random_step(s, DType::bf16, "l2big", 0);
  for (std::int64_t c = 0; c < s.K; ++c) in.mixed.view().store(std::vector<std::int64_t>{0, c}, 0x1p70);
  Tensor A_log = randn(DType::f32, {1}, "l2A", 0, 0.3), dt = randn(DType::f32, {s.K}, "l2dt", 0, 0.1);
  Tensor state = randn(DType::f32, {1, 1, s.V, s.K}, "l2S", 0, 0.5), idx = index_tensor({0});
  auto run = [&](Precision p, Tensor& st, Tensor& out) {
    ref::packed_decode({in.mixed, in.a, in.b, A_log, dt, 0.25, st, out, idx, true, std::nullopt}, p, no_data_checks());
  };
  Tensor so = state, sf = state, oo(DType::f32, {1, 1, 1, s.V}), of(DType::f32, {1, 1, 1, s.V});
  run(Precision::oracle, so, oo);
  run(Precision::faithful, sf, of);
  EXPECT_TRUE(all_finite(oo));
  EXPECT_GT(max_abs(oo), 1e-3);
  // fp32: the q term vanishes; what is left is dl * 0.
  EXPECT_EQ(max_abs(of), 0.0);
  const auto b = kparity::reference::kda::packed_decode_error_bound(
      {in.mixed, in.a, in.b, A_log, dt, 0.25, state, oo, idx, true, std::nullopt});
  EXPECT_EQ(*std::min_element(b.at("out").begin(), b.at("out").end()), INFINITY);
}

struct Ring {
  Shape5 s{1, 1, 1, 16, 16};
  std::int64_t L = 4;
  DecodeStep in = random_step(s, DType::f32, "ring", 0);
  Tensor A_log = randn(DType::f32, {1}, "ringA", 0, 0.3), dt = randn(DType::f32, {16}, "ringdt", 0, 0.1);
  Tensor state = randn(DType::f32, {1, 1, 16, 16}, "ringS", 0, 0.5);
  Tensor dc = randn(DType::f32, {1, 1, 4, 16}, "ringd", 0, 0.5), kc = randn(DType::f32, {1, 1, 4, 16}, "ringk", 0, 0.3);
  Tensor gc = Tensor(DType::f32, {1, 1, 4, 16}), idx = index_tensor({0}), wp = index_tensor({3});
  Ring(double g0, double g_rest) {
    for (std::int64_t c = 0; c < 16; ++c)
      for (std::int64_t i = 0; i < 4; ++i) gc.view().store(std::vector<std::int64_t>{0, 0, i, c}, i == 0 ? g0 : g_rest);
  }
  Tensor run(Precision p) {
    Tensor st = state, d = dc, k = kc, g = gc, out(DType::f32, {1, 1, 1, 16});
    ref::replayssm_decode({in.mixed, in.a, in.b, A_log, dt, 0.25, st, d, k, g, out, idx, wp, std::nullopt, true,
                           std::nullopt, BetaRounding::through_b_dtype},
                          p, no_data_checks());
    return out;
  }
};

// ReplaySSM forms the ring decays as exp(Gtot - P_i) from an fp32 inclusive prefix P (B.2.4 item 4,
// upstream's formula, our kernel's too). After a gate of -1e6, the later gates of -0.01 vanish
// into the prefix (fp32 spacing 0.0625 at 1e6): W = 1 instead of e^-0.02, a 2% error in the ring's
// contribution, beyond AP-K5's 1e-2 relative tolerance. The exact suffix sums do not lose them.
// The a-priori bound sees the cancellation (2 gamma_m sum |g|) and admits it.
TEST(KdaLargeMagnitude, PrefixDifferenceLosesSmallGatesAfterAHugeOne) {
  Ring r(-1e6, -0.01);
  const Tensor o = r.run(Precision::oracle), f = r.run(Precision::faithful);
  double worst_rel = 0;
  for (std::int64_t j = 0; j < 16; ++j) {
    const double ov = o.view().at({0, 0, 0, j}), fv = f.view().at({0, 0, 0, j});
    worst_rel = std::max(worst_rel, std::fabs(fv - ov) / (5e-4 + std::fabs(ov)));
  }
  EXPECT_GT(worst_rel, 1e-2);
  Tensor st = r.state, d = r.dc, k = r.kc, g = r.gc, out(DType::f32, {1, 1, 1, 16});
  const auto b = kparity::reference::kda::replayssm_decode_error_bound(
      {r.in.mixed, r.in.a, r.in.b, r.A_log, r.dt, 0.25, st, d, k, g, out, r.idx, r.wp, std::nullopt, true,
       std::nullopt, BetaRounding::through_b_dtype});
  for (std::int64_t j = 0; j < 16; ++j)
    EXPECT_LE(std::fabs(f.view().at({0, 0, 0, j}) - o.view().at({0, 0, 0, j})), b.at("out")[j]) << j;
}

// A gate of -inf in the ring (from a = +inf upstream, which checks no data): the prefix difference
// computes -inf - (-inf) = NaN for every later entry's decay, so the output is NaN, while the exact
// decays (e^g of the later gates, 0 for the checkpoint) give a finite output, as the packed decode
// would. The faithful reference carries the same formula, so the differential rule, which accepts
// a kernel's non-finite value where the faithful one is non-finite, cannot see this: reported.
TEST(KdaLargeMagnitude, NegativeInfiniteGateMakesThePrefixDifferenceNaN) {
  Ring r(-INFINITY, -0.01);
  const Tensor o = r.run(Precision::oracle), f = r.run(Precision::faithful);
  EXPECT_TRUE(all_finite(o));
  bool any_nan = false;
  for (std::int64_t j = 0; j < 16; ++j) any_nan = any_nan || std::isnan(f.view().at({0, 0, 0, j}));
  EXPECT_TRUE(any_nan);
}

}  // namespace
}  // namespace kdatest
