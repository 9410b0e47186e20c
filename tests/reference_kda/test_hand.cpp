// Tiny cases whose expected numbers are derived by hand in the comments (independent of the
// reference code), plus the beta-rounding case of spec D.4 AP-K14.
#include "kda_test_util.hpp"

namespace kdatest {
namespace {

// K and V below 16 are a kparity check (spec C.3 O13); the tiny cases opt out of kparity extras.
const ValidateOptions kTiny{Entry::reference, false, false, true};

// One packed-decode row, H = HV = 1, K = V = 2, one slot.
struct Tiny {
  Tensor mixed{DType::f32, {1, 6}}, a{DType::f32, {1, 2}}, b{DType::f32, {1, 1}}, A_log{DType::f32, {1}},
      dt_bias{DType::f32, {2}}, state{DType::f32, {1, 1, 2, 2}}, out{DType::f32, {1, 1, 1, 2}},
      idx = index_tensor({0});
  Tiny() {
    // q = [1, 2], k = [1, -1], v = [3, 1]; S0 = [[1, 0], [2, 1]] (rows = value channel j).
    const double m[] = {1, 2, 1, -1, 3, 1};
    for (std::int64_t i = 0; i < 6; ++i) mixed.view().store_flat(i, m[i]);
    const double s[] = {1, 0, 2, 1};
    for (std::int64_t i = 0; i < 4; ++i) state.view().store_flat(i, s[i]);
    out.poison();
  }
  kparity::kda::PackedDecodeArgs args(std::optional<double> lb) {
    return {mixed, a, b, A_log, dt_bias, 0.5, state, out, idx, false, lb};
  }
};

TEST(KdaHand, PackedDecodeZeroGate) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Tiny t;
    // lower_bound 0: g = 0, alpha = 1; b = 0: beta = 1/2; scale 1/2, so q_s = [0.5, 1].
    // u = S0 k = [1*1 + 0*(-1), 2*1 + 1*(-1)] = [1, 1]; d = 0.5 * (v - u) = [1, 0].
    // S1 = S0 + d k^T = [[2, -1], [2, 1]]; o = S1 q_s = [2*0.5 - 1, 2*0.5 + 1] = [0, 2].
    ref::packed_decode(t.args(0.0), p, kTiny);
    EXPECT_EQ(t.out.view().load_flat(0), 0.0);
    EXPECT_EQ(t.out.view().load_flat(1), 2.0);
    const double s1[] = {2, -1, 2, 1};
    for (int i = 0; i < 4; ++i) EXPECT_EQ(t.state.view().load_flat(i), s1[i]) << i;
  }
}

TEST(KdaHand, PackedDecodeSoftplusGate) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Tiny t;
    // A_log = 0 (A = 1), a + dt_bias = 0: g = -softplus(0) = -ln 2, alpha = 1/2.
    // Decayed S = [[0.5, 0], [1, 0.5]]; u = [0.5, 0.5]; d = 0.5 (v - u) = [1.25, 0.25].
    // S1 = [[1.75, -1.25], [1.25, 0.25]]; o = [0.875 - 1.25, 0.625 + 0.25] = [-0.375, 0.875].
    ref::packed_decode(t.args(std::nullopt), p, kTiny);
    // alpha = exp(-log 2) is within 2 fp32 ulp of 1/2; through magnitudes <= 2 and four
    // operations, 1e-6 covers it (8 ulp at 2) while catching any wrong term (>= 0.125 apart).
    EXPECT_NEAR(t.out.view().load_flat(0), -0.375, 1e-6);
    EXPECT_NEAR(t.out.view().load_flat(1), 0.875, 1e-6);
    const double s1[] = {1.75, -1.25, 1.25, 0.25};
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(t.state.view().load_flat(i), s1[i], 1e-6) << i;
  }
}

TEST(KdaHand, PackedDecodeBoundedGateAndLogitBeta) {
  Tiny t;
  // lower_bound -1, A_log = ln 2 (A = 2), a + dt_bias = 0.25 per channel: g = -sigmoid(A * 0.25) with
  // A = exp(float(ln 2)); b = 1: beta = sigmoid(1). Recompute A.7 here in fp64 straight from the spec's formulas.
  const double beta = 1.0 / (1.0 + std::exp(-1.0));
  t.A_log.view().store_flat(0, static_cast<float>(std::log(2.0)));
  t.a.fill(0.125);
  t.dt_bias.fill(0.125);
  t.b.fill(1.0);
  const double A = std::exp(static_cast<double>(static_cast<float>(std::log(2.0))));
  const double g_exact = -1.0 / (1.0 + std::exp(-A * 0.25)), al_exact = std::exp(g_exact);
  double S[2][2] = {{1 * al_exact, 0}, {2 * al_exact, 1 * al_exact}};
  const double k[2] = {1, -1}, v[2] = {3, 1}, qs[2] = {0.5, 1};
  double o[2];
  for (int j = 0; j < 2; ++j) {
    const double d = beta * (v[j] - (S[j][0] * k[0] + S[j][1] * k[1]));
    S[j][0] += d * k[0];
    S[j][1] += d * k[1];
    o[j] = S[j][0] * qs[0] + S[j][1] * qs[1];
  }
  ref::packed_decode(t.args(-1.0), Precision::oracle, kTiny);
  // Oracle results are fp64 rounded once to fp32: half an ulp at magnitude <= 4 is 2.4e-7.
  for (int j = 0; j < 2; ++j) EXPECT_NEAR(t.out.view().load_flat(j), o[j], 2.4e-7) << j;
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(t.state.view().load_flat(i), S[i / 2][i % 2], 2.4e-7) << i;
}

// ReplaySSM with K = V = 1, L = 4, cursor 2: the ring holds two tokens. Check B.2.4's exclusive
// suffix by hand: S_prev = S0 e^{g0+g1} + d0 k0 e^{g1} + d1 k1 (entry i is decayed only by later
// gates), then B.2.5/B.2.7 with the current token on a forced flush.
TEST(KdaHand, ReplayReconstructionExclusiveSuffix) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Tensor mixed(DType::f32, {1, 3}), a(DType::f32, {1, 1}), b(DType::f32, {1, 1}), A_log(DType::f32, {1}),
        dt_bias(DType::f32, {1}), state(DType::f32, {1, 1, 1, 1}), dc(DType::f32, {1, 1, 4, 1}),
        kc(DType::f32, {1, 1, 4, 1}), gc(DType::f32, {1, 1, 4, 1}), out(DType::f32, {1, 1, 1, 1});
    Tensor idx = index_tensor({0}), wp = index_tensor({2}), ff = index_tensor({1});
    // q = 2, k = 1, v = 3 (current token); lower_bound 0 so the current gate is 0 (alpha = 1).
    const double m[] = {2, 1, 3};
    for (int i = 0; i < 3; ++i) mixed.view().store_flat(i, m[i]);
    state.fill(4.0);
    const double d[] = {1.0, -2.0}, kk[] = {0.5, 1.5}, g[] = {-0.25, -0.75};
    for (std::int64_t i = 0; i < 2; ++i) {
      dc.view().store_flat(i, d[i]);
      kc.view().store_flat(i, kk[i]);
      gc.view().store_flat(i, g[i]);
    }
    for (std::int64_t i = 2; i < 4; ++i) {  // garbage at positions >= cursor must be ignored
      dc.view().store_flat(i, NAN);
      kc.view().store_flat(i, NAN);
      gc.view().store_flat(i, NAN);
    }
    out.poison();
    kparity::kda::ReplaySsmDecodeArgs args{mixed, a, b, A_log, dt_bias, 1.0, state, dc, kc, gc, out, idx, wp,
                                           ff.view(), false, 0.0, BetaRounding::fp32};
    const std::vector<std::byte> ring_d = dc.storage(), ring_k = kc.storage(), ring_g = gc.storage();
    ref::replayssm_decode(args, p, kTiny);
    // S_prev = 4 e^{-1} + 1 * 0.5 e^{-0.75} + (-2) * 1.5; beta = sigmoid(0) = 0.5; kq = 1 * 2 = 2;
    // d = 0.5 (3 - S_prev); o = 2 S_prev + 2 d; S_new = S_prev + d.
    const double sp = 4 * std::exp(-1.0) + 0.5 * std::exp(-0.75) - 3.0, dd = 0.5 * (3 - sp);
    // Magnitudes <= 8: fp32 exp/sum errors are a few ulp (ulp(8) = 9.5e-7), 4e-6 leaves room.
    EXPECT_NEAR(out.view().load_flat(0), 2 * sp + 2 * dd, 4e-6);
    EXPECT_NEAR(state.view().load_flat(0), sp + dd, 4e-6);
    // Forced flush (B.2.7 item 4): no ring byte written.
    EXPECT_EQ(dc.storage(), ring_d);
    EXPECT_EQ(kc.storage(), ring_k);
    EXPECT_EQ(gc.storage(), ring_g);
  }
}

// Faithful-mode rounding points of ReplaySSM (B.2.4 item 1, B.2.9), K = V = 1, L = 4, cursor 2,
// bf16 out, fp32 rings and state, forced flush. Ring: d = [1 + 2^-10, 0], k = [1, 0],
// g = [0, -0.1], so S_prev = rt(d0, bf16) * rt(k0 e^{-0.1}, bf16). The current token has
// k = v = 0 and gate -softplus(0) = -ln 2, so the flushed state is S_prev / 2.
// faithful: rt(1 + 2^-10) = 1, rt(0.9048374) = 0.90625 (232/256, the nearest bf16) -> 0.90625.
// oracle:   (1 + 2^-10) * e^{-0.1} = 0.9057210..., no intermediate rounding.
// Also the literal softplus tail (A.3 notes): a + dt_bias = -18 gives 1 + exp(-18) == 1 in fp32,
// so the faithful g is exactly 0 (log1p would give -1.5e-8); the append writes it to g_cache.
TEST(KdaHand, ReplayRoundingPointsAndSoftplusTail) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Tensor mixed(DType::f32, {2, 3}), a(DType::f32, {2, 1}), b(DType::f32, {2, 1}), A_log(DType::f32, {1}),
        dt_bias(DType::f32, {1}), state(DType::f32, {2, 1, 1, 1}), dc(DType::f32, {2, 1, 4, 1}),
        kc(DType::f32, {2, 1, 4, 1}), gc(DType::f32, {2, 1, 4, 1}), out(DType::bf16, {2, 1, 1, 1});
    mixed.view().store(std::vector<std::int64_t>{0, 0}, 1.0);  // row 0: q = 1, k = v = 0
    dc.view().store_flat(0, 1.0 + std::ldexp(1.0, -10));
    kc.view().store_flat(0, 1.0);
    gc.view().store_flat(1, -0.1);
    a.view().store_flat(1, -18.0);  // row 1 appends with the softplus gate
    Tensor idx = index_tensor({0, 1}), wp = index_tensor({2, 0}), ff = index_tensor({1, 0});
    ref::replayssm_decode({mixed, a, b, A_log, dt_bias, 1.0, state, dc, kc, gc, out, idx, wp, ff.view(), false,
                           std::nullopt, BetaRounding::fp32},
                          p, kTiny);
    const double alpha = 0.5;  // exp(-ln 2)
    if (p == Precision::faithful) {
      EXPECT_NEAR(state.view().load_flat(0), 0.90625 * alpha, 1e-7);  // alpha within 2 ulp of 1/2: < 1e-7
      EXPECT_EQ(gc.view().at({1, 0, 0, 0}), 0.0);
    } else {
      EXPECT_NEAR(state.view().load_flat(0), (1.0 + std::ldexp(1.0, -10)) * std::exp(-0.1) * alpha, 1e-7);
      EXPECT_NEAR(gc.view().at({1, 0, 0, 0}), -std::exp(-18.0), 1e-10);  // fp64: log(1 + e^-18) ~ e^-18
    }
  }
}

// A.5: the epsilon 1e-6 is added to the sum of squares. k = [3e-3, 4e-3]: |k|^2 = 2.5e-5, so
// k_hat = k / sqrt(2.6e-5) = [0.58835, 0.78446] (not the unit vector [0.6, 0.8]).
TEST(KdaHand, L2EpsilonOnSumOfSquares) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Tiny t;
    t.mixed.view().store_flat(2, 3e-3);
    t.mixed.view().store_flat(3, 4e-3);
    t.state.fill(0.0);
    auto args = t.args(0.0);
    args.use_qk_l2norm_in_kernel = true;
    ref::packed_decode(args, p, kTiny);
    // Zero state, beta 1/2: S1[j][c] = 0.5 v_j k_hat_c. Stored fp32 values of the inputs are used.
    const double k0 = static_cast<float>(3e-3), k1 = static_cast<float>(4e-3), n = std::sqrt(k0 * k0 + k1 * k1 + 1e-6);
    // fp32: a few ulp of values <= 1.5: 1e-6.
    EXPECT_NEAR(t.state.view().load_flat(0), 0.5 * 3 * k0 / n, 1e-6);
    EXPECT_NEAR(t.state.view().load_flat(1), 0.5 * 3 * k1 / n, 1e-6);
  }
}

// Spec D.4 AP-K14 (from D.3): one step, L = 1, K = V = 16, zero state, one-hot k and v, no
// normalisation, alpha = 1, bf16 b = 0.5: state[0][0] = beta.
TEST(KdaHand, BetaRoundingThroughBDtype) {
  const std::int64_t K = 16, V = 16;
  auto run = [&](bool replay, BetaRounding br, Precision p) {
    Tensor mixed(DType::f32, {1, 2 * K + V}), a(DType::f32, {1, K}), b(DType::bf16, {1, 1}), A_log(DType::f32, {1}),
        dt_bias(DType::f32, {K}), state(DType::f32, {1, 1, V, K}), out(DType::f32, {1, 1, 1, V});
    mixed.view().store_flat(0, 1.0);      // q one-hot
    mixed.view().store_flat(K, 1.0);      // k one-hot on channel 0
    mixed.view().store_flat(2 * K, 1.0);  // v one-hot on channel 0
    b.fill(0.5);
    Tensor idx = index_tensor({0});
    if (replay) {
      Tensor dc(DType::f32, {1, 1, 1, V}), kc(DType::f32, {1, 1, 1, K}), gc(DType::f32, {1, 1, 1, K});
      Tensor wp = index_tensor({0});
      ref::replayssm_decode({mixed, a, b, A_log, dt_bias, 0.25, state, dc, kc, gc, out, idx, wp, std::nullopt, false,
                             0.0, br},
                            p);
    } else {
      ref::packed_decode({mixed, a, b, A_log, dt_bias, 0.25, state, out, idx, false, 0.0}, p);
    }
    return state.view().load_flat(0);
  };
  // Spec D.3 numbers; tolerance 1e-6 as in AP-K14.
  EXPECT_NEAR(run(true, BetaRounding::fp32, Precision::faithful), 0.622459352016449, 1e-6);
  EXPECT_NEAR(run(true, BetaRounding::through_b_dtype, Precision::faithful), 0.62109375, 1e-6);
  EXPECT_NEAR(run(false, BetaRounding::through_b_dtype, Precision::faithful), 0.622459352016449, 1e-6);
  // beta_rounding is an op parameter (A.4 item 6): the oracle applies the rounding it selects too.
  EXPECT_NEAR(run(true, BetaRounding::through_b_dtype, Precision::oracle), 0.62109375, 1e-6);
  EXPECT_NEAR(run(true, BetaRounding::fp32, Precision::oracle), 0.622459352016449, 1e-6);
}

TEST(KdaHand, PrecisionNames) {
  using kparity::reference::parse_precision;
  using kparity::reference::precision_name;
  EXPECT_EQ(precision_name(Precision::oracle), "oracle");
  EXPECT_EQ(precision_name(Precision::faithful), "faithful");
  EXPECT_EQ(parse_precision("oracle"), Precision::oracle);
  EXPECT_EQ(parse_precision("faithful"), Precision::faithful);
  EXPECT_FALSE(parse_precision("fp64").has_value());
}

}  // namespace
}  // namespace kdatest
