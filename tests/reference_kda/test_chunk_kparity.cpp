// The kparity-chunk precision profile's model of kda/chunk (reference/kda/chunk_kparity.cpp: kparity's
// chunked kernel in scalar fp32, 16-token chunks, TF32 tensor-core operands) against the oracle:
//   * cvt.rna's rounding, on values that tell it from truncation and from ties-to-even;
//   * exact inputs (testing.md 1.4) on which every product and sum of both forms (tensor-core and
//     exact fp32) is exact: the model must equal the oracle bit for bit, through chunk boundaries,
//     sequences ending mid-chunk, an empty sequence, grouped heads and both state layouts;
//   * gates at the contract's extremes (its lower bound, -8, -inf in places): finite, and as close
//     to the oracle as on ordinary gates;
//   * the size of its error (recipe at ErrorIsTf32Sized).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "../../reference/kda/chunk_kparity.hpp"  // round_to_tf32 (private to reference/kda)
#include "kda_test_util.hpp"
#include "kparity/reference/kda_chunk.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kdatest {
namespace {

using kparity::kda::ChunkArgs;
using kparity::reference::PrecisionProfile;
using kparity::reference::PrecisionProfileScope;
namespace r = kparity::reference;

TEST(KparityChunkProfile, ParsesAndNames) {
  EXPECT_EQ(r::parse_profile("kparity-chunk"), PrecisionProfile::kparity_chunk);
  EXPECT_EQ(r::profile_name(PrecisionProfile::kparity_chunk), "kparity-chunk");
  EXPECT_FALSE(r::parse_profile("kparity").has_value());
}

TEST(KparityChunkProfile, RoundToTf32IsRoundToNearestTiesAway) {
  using ref::detail::round_to_tf32;
  const float ulp = std::ldexp(1.0f, -10);  // TF32's unit in the last place at 1
  EXPECT_EQ(round_to_tf32(1.0f + ulp / 2), 1.0f + ulp);  // a tie: away from zero (ties-to-even gives 1)
  EXPECT_EQ(round_to_tf32(-(1.0f + ulp / 2)), -(1.0f + ulp));
  EXPECT_EQ(round_to_tf32(1.0f + ulp / 2 - std::ldexp(1.0f, -23)), 1.0f);  // below the tie: down
  EXPECT_EQ(round_to_tf32(1.0f + ulp * 0.75f), 1.0f + ulp);                 // above it: up (truncation gives 1)
  EXPECT_EQ(round_to_tf32(2.0f - ulp / 2), 2.0f);                           // the carry into the exponent
  EXPECT_EQ(round_to_tf32(std::numeric_limits<float>::max()), INFINITY);    // and past the largest
  EXPECT_EQ(round_to_tf32(-INFINITY), -INFINITY);
  EXPECT_TRUE(std::isnan(round_to_tf32(NAN)));
  EXPECT_EQ(std::bit_cast<std::uint32_t>(round_to_tf32(0.7f)), 0x3f334000u);  // 0x3f333333: low bits 0x1333, up
  EXPECT_EQ(std::bit_cast<std::uint32_t>(round_to_tf32(0.1f)), 0x3dccc000u);  // 0x3dcccccd: low bits 0x0ccd, down
}

// One fp32 kda/chunk call (B = 1, varlen) with a precomputed gate and beta as probabilities.
struct Call {
  std::int64_t T, H, HV, K, V, N;
  bool v_first;
  Tensor q, k, v, g, beta, S0, Sf, out, cu;
  ChunkArgs a;

  Call(std::vector<std::int64_t> offs, std::int64_t H_, std::int64_t HV_, std::int64_t K_, std::int64_t V_, bool vf,
       DType act = DType::f32)
      : T(offs.back()), H(H_), HV(HV_), K(K_), V(V_), N(static_cast<std::int64_t>(offs.size()) - 1), v_first(vf) {
    q = Tensor(act, {1, T, H, K}), k = Tensor(act, {1, T, H, K}), v = Tensor(act, {1, T, HV, V});
    g = Tensor(DType::f32, {1, T, HV, K}).fill(0.0), beta = Tensor(act, {1, T, HV});
    S0 = Tensor(DType::f32, state()), Sf = Tensor(DType::f32, state()), out = Tensor(act, {1, T, HV, V});
    cu = index_tensor(offs, DType::i64);
    a.q = q, a.k = k, a.v = v, a.g = g, a.beta = beta, a.out = out, a.cu_seqlens = cu.view();
    a.initial_state = S0.view(), a.final_state = Sf.view(), a.output_final_state = true, a.state_v_first = v_first;
  }
  Shape state() const { return v_first ? Shape{N, HV, V, K} : Shape{N, HV, K, V}; }

  // out and final_state of one run, from poisoned outputs.
  std::pair<Tensor, Tensor> run(Precision p, PrecisionProfile profile) {
    const PrecisionProfileScope scope(profile);
    out.poison(), Sf.poison();
    ref::chunk(a, p, ValidateOptions{Entry::reference, false, false});  // -inf gates: no deep data checks
    return {Tensor(out), Tensor(Sf)};
  }
};

// Exact inputs: q, v, S0 small integers; k one-hot on channel (t + 5h) mod 16 (within a chunk
// distinct channels, so k_i . k_j = 0, A_kk = 0 and (I + A_kk)^-1 = I, while A_qk = q_i . k_j is
// not zero); beta 1/2; scale 1/4; gates 0 (decay 1) or, where `neg_inf`, -inf on a few (token,
// channel) pairs (decay 0, and the exact form for their chunks). Every value then keeps few bits:
// a state row halves towards v at each token that touches its channel (S = S/2 + v/2), at most
// ceil(T/16) times per sequence, so TF32 operands (11 bits) and fp32 sums are exact.
Call exact_call(bool v_first, bool neg_inf) {
  Call c({0, 5, 21, 21, 54}, 2, 4, 32, 16, v_first);
  c.q.fill_int(seed("xq"), -3, 3), c.v.fill_int(seed("xv"), -4, 4), c.S0.fill_int(seed("xS"), -4, 4);
  c.k.fill(0.0), c.beta.fill(0.5);
  c.a.scale = 0.25;
  for (std::int64_t t = 0; t < c.T; ++t)
    for (std::int64_t h = 0; h < c.H; ++h) c.k.view().store(std::vector<std::int64_t>{0, t, h, (t + 5 * h) % 16}, 1.0);
  if (neg_inf)
    for (std::int64_t t = 3; t < c.T; t += 7)
      for (std::int64_t hv = 0; hv < c.HV; ++hv)
        for (std::int64_t ch = hv; ch < c.K; ch += 3) c.g.view().store(std::vector<std::int64_t>{0, t, hv, ch}, -INFINITY);
  return c;
}

TEST(KparityChunkProfile, ExactInputsGiveTheOracleBitForBit) {
  for (const bool v_first : {false, true})
    for (const bool neg_inf : {false, true}) {
      SCOPED_TRACE(std::string(v_first ? "V-first" : "K-first") + (neg_inf ? ", -inf gates" : ", zero gates"));
      Call c = exact_call(v_first, neg_inf);
      const auto [o_out, o_state] = c.run(Precision::oracle, PrecisionProfile::faithful);
      const auto [m_out, m_state] = c.run(Precision::faithful, PrecisionProfile::kparity_chunk);
      ASSERT_GT(max_abs(o_out.view()), 1.0);  // never test on zeros
      EXPECT_TRUE(same_values(m_out.view(), o_out.view())) << "out";
      EXPECT_TRUE(same_values(m_state.view(), o_state.view())) << "final_state";
    }
}

// A random bf16 call: normalised q/k in kernel, the in-kernel bounded gate or a given log-decay.
Call random_call(std::string_view tag, const std::vector<std::int64_t>& offs, bool v_first) {
  Call c(offs, 2, 4, 32, 32, v_first, DType::bf16);
  c.q = randn(DType::bf16, {1, c.T, c.H, c.K}, std::string(tag) + "q", 0, 1.0);
  c.k = randn(DType::bf16, {1, c.T, c.H, c.K}, std::string(tag) + "k", 0, 1.0);
  c.v = randn(DType::bf16, {1, c.T, c.HV, c.V}, std::string(tag) + "v", 0, 1.0);
  c.S0 = randn(DType::f32, c.state(), std::string(tag) + "S", 0, 0.5);
  c.beta.fill_uniform(seed(std::string(tag) + "b"), 0.05, 0.95);
  c.g.fill_uniform(seed(std::string(tag) + "g"), -0.7, 0.0);
  // out in fp32 (fla's is q's dtype; the reference takes any float dtype without the extra checks), so
  // that out's error is the model's and not a bf16 rounding of the output that flips either way.
  c.out = Tensor(DType::f32, {1, c.T, c.HV, c.V});
  c.a.q = c.q, c.a.k = c.k, c.a.v = c.v, c.a.initial_state = c.S0.view(), c.a.out = c.out;
  c.a.use_qk_l2norm_in_kernel = true;
  return c;
}

// max |a - b| over elements where b is finite, and whether a is finite there.
double max_err(const Tensor& a, const Tensor& b, bool* finite = nullptr) {
  double m = 0;
  bool ok = true;
  each(b.view(), [&](auto i) {
    const double x = a.view().load(i), y = b.view().load(i);
    if (!std::isfinite(y)) return;
    ok = ok && std::isfinite(x);
    m = std::max(m, std::fabs(x - y));
  });
  if (finite) *finite = ok;
  return m;
}

// Errors of one profile's model against the oracle: {out, final_state}.
std::pair<double, double> model_errors(Call& c, PrecisionProfile p) {
  const auto [o_out, o_state] = c.run(Precision::oracle, PrecisionProfile::faithful);
  const auto [m_out, m_state] = c.run(Precision::faithful, p);
  bool fo = false, fs = false;
  const std::pair<double, double> e{max_err(m_out, o_out, &fo), max_err(m_state, o_state, &fs)};
  EXPECT_TRUE(fo && fs) << "the model is not finite where the oracle is";
  return e;
}

// Recipe. A TF32 operand rounded to nearest errs by at most u = 2^-11 relative, a product of two by
// 2u; fp32 accumulation adds at most 32 * 2^-24 relative, far below. Every TF32 product of the model
// has the state or a term of its size as a factor or result (v_new = u - w S, out = (q e^Gc) S + ...,
// S = e^Gc S + kg^T v_new) with normalised q and k, so each stage errs by a few 2u * max|S|, with
// signs that mostly cancel; the state carries its error from chunk to chunk, decayed. Bound:
// 4 u max|S| for out and final_state alike (S: the oracle's final state; here |S| ~ 2, out ~ 0.2).
// Measured on these calls: final_state 0.4-0.6 u max|S|, out about 0.15 u max|S|, so the bound has
// a margin of 7x and more, while a structural slip (a token or a decay lost) errs by O(|S|). The error
// must also be TF32-sized, not fp32-sized: larger than the recurrence's fp32 model (kda/chunk's
// default faithful model), else the model would not round where the kernel rounds; and smaller than
// the fla-chunk model's (fla stores bf16 intermediates, u = 2^-9), which is the bar for the
// kernel (measured: 5-9x smaller).
double tf32_bound(const Tensor& oracle_state) { return 4 * std::ldexp(1.0, -11) * max_abs(oracle_state.view()); }

TEST(KparityChunkProfile, ErrorIsTf32Sized) {
  double kp_total = 0, fla_total = 0;
  int kp_above_faithful = 0, calls = 0;
  for (int i = 0; i < 6; ++i) {
    SCOPED_TRACE("call " + std::to_string(i) + ", " + seed_note());
    Call c = random_call("size" + std::to_string(i), {0, 16, 16, 47, 111}, i % 2 == 1);
    if (i >= 3) {  // the in-kernel bounded gate near its limit: spans of 16 x -5 per chunk
      c.a.use_gate_in_kernel = true, c.a.lower_bound = -5.0;
      c.g.fill_uniform(seed("gate" + std::to_string(i)), 2.0, 6.0);
    }
    const auto [o_out, o_state] = c.run(Precision::oracle, PrecisionProfile::faithful);
    const auto kp = model_errors(c, PrecisionProfile::kparity_chunk);
    const auto fl = model_errors(c, PrecisionProfile::fla_chunk);
    const auto ff = model_errors(c, PrecisionProfile::faithful);
    EXPECT_LE(kp.first, tf32_bound(o_state)) << "out";
    EXPECT_LE(kp.second, tf32_bound(o_state)) << "final_state";
    kp_total += kp.first + kp.second, fla_total += fl.first + fl.second;
    kp_above_faithful += (kp.first > ff.first) + (kp.second > ff.second);
    calls += 2;
    std::printf("call %d: out kparity-chunk %.3g fla-chunk %.3g faithful %.3g (max|o| %.3g) | state %.3g %.3g %.3g (max|o| %.3g)\n",
                i, kp.first, fl.first, ff.first, max_abs(o_out.view()), kp.second, fl.second, ff.second, max_abs(o_state.view()));
  }
  EXPECT_GE(kp_above_faithful, calls - 1) << "kparity-chunk's model should err more than the fp32 recurrence";
  EXPECT_LT(kp_total, fla_total) << "TF32 operands should err less than fla's bf16 intermediates";
}

// The bar, predicted on the CPU at a Kimi-Linear head's size (K = V = 128, one sequence of
// KPARITY_PREDICT_T tokens, default 512, bf16 inputs, q/k normalised in kernel): the kernel's model
// errs no more than fla chunk_kda's (whose model reproduces fla's captured errors: ctest
// bench.kda_chunk_accuracy.fla_chunk_model), in max |e| and in rms, on out (fp32 here, so the
// models' errors are not hidden under a bf16 rounding) and final_state; with a given log-decay and
// with Kimi's in-kernel gate (A_log, dt_bias, lower_bound -5, beta logits). Measured at 4096 tokens
// (log-decay / in-kernel gate): out max 4.9e-05 / 3.2e-05 against fla-chunk's 5.8e-04 / 5.9e-04,
// final_state 1.8e-04 / 3.1e-04 against 1.9e-03 / 2.1e-03, rms 9-10x below on both.
TEST(KparityChunkProfile, BeatsTheFlaChunkModelAtKimiShapes) {
  const char* env = std::getenv("KPARITY_PREDICT_T");
  const std::int64_t T = env ? std::atoll(env) : 512;
  const auto rms = [](const Tensor& x, const Tensor& o) {
    double ss = 0;
    each(o.view(), [&](auto i) { ss += std::pow(x.view().load(i) - o.view().load(i), 2); });
    return std::sqrt(ss / static_cast<double>(o.numel()));
  };
  for (const bool kimi_gate : {false, true}) {
    SCOPED_TRACE(std::string(kimi_gate ? "in-kernel gate" : "given log-decay") + ", " + seed_note());
    const std::string tag = kimi_gate ? "kimi1" : "kimi0";
    Call c({0, T}, 2, 2, 128, 128, false, DType::bf16);
    c.q = randn(DType::bf16, {1, T, 2, 128}, tag + "q", 0, 1.0), c.k = randn(DType::bf16, {1, T, 2, 128}, tag + "k", 0, 1.0);
    c.v = randn(DType::bf16, {1, T, 2, 128}, tag + "v", 0, 1.0), c.S0 = randn(DType::f32, c.state(), tag + "S", 0, 0.1);
    c.out = Tensor(DType::f32, {1, T, 2, 128});
    const Tensor A_log = randn(DType::f32, {2}, tag + "A", 0, 0.3), dt_bias = randn(DType::f32, {256}, tag + "dt", 0, 0.5);
    if (kimi_gate) {
      c.g = randn(DType::f32, {1, T, 2, 128}, tag + "g", 0, 1.0), c.beta = randn(DType::bf16, {1, T, 2}, tag + "b", 0, 1.0);
      c.a.use_gate_in_kernel = true, c.a.lower_bound = -5.0, c.a.A_log = A_log.view(), c.a.dt_bias = dt_bias.view();
      c.a.use_beta_sigmoid_in_kernel = true;
    } else {
      c.g.fill_uniform(seed(tag + "g"), -0.3, 0.0), c.beta.fill_uniform(seed(tag + "b"), 0.05, 0.95);
    }
    c.a.q = c.q, c.a.k = c.k, c.a.v = c.v, c.a.g = c.g, c.a.beta = c.beta, c.a.initial_state = c.S0.view();
    c.a.out = c.out, c.a.use_qk_l2norm_in_kernel = true;
    const auto [o_out, o_state] = c.run(Precision::oracle, PrecisionProfile::faithful);
    const auto [k_out, k_state] = c.run(Precision::faithful, PrecisionProfile::kparity_chunk);
    const auto [f_out, f_state] = c.run(Precision::faithful, PrecisionProfile::fla_chunk);
    const double ko = max_err(k_out, o_out), fo = max_err(f_out, o_out), ks = max_err(k_state, o_state),
                 fs = max_err(f_state, o_state);
    std::printf("T %lld, %s: out max %.3e vs fla-chunk %.3e, rms %.3e vs %.3e; state max %.3e vs %.3e, rms %.3e vs %.3e\n",
                static_cast<long long>(T), kimi_gate ? "in-kernel gate" : "log-decay", ko, fo, rms(k_out, o_out),
                rms(f_out, o_out), ks, fs, rms(k_state, o_state), rms(f_state, o_state));
    EXPECT_LE(ko, fo) << "out";
    EXPECT_LE(ks, fs) << "final_state";
    EXPECT_LE(rms(k_out, o_out), rms(f_out, o_out)) << "out";
    EXPECT_LE(rms(k_state, o_state), rms(f_state, o_state)) << "final_state";
  }
}

// Gates at the extremes (kernel doc 3.7: the tensor-core form takes a chunk whose |Gc_i - Gc_7| are
// all <= 64): the lower bound (every token's g = -5: spans up to 40, tensor cores), -8 everywhere
// (spans up to 64: still tensor cores, at the limit), -12 everywhere (spans up to 96: the exact
// form) and -inf on some tokens (the exact form, decays of 0). Finite wherever the oracle is, and
// within the recipe above.
TEST(KparityChunkProfile, ExtremeGatesStayFiniteAndClose) {
  for (int mode = 0; mode < 4; ++mode) {
    SCOPED_TRACE("gate mode " + std::to_string(mode));
    Call c = random_call("extreme" + std::to_string(mode), {0, 7, 40, 40, 73}, mode == 1);
    if (mode == 0) {
      c.a.use_gate_in_kernel = true, c.a.lower_bound = -5.0;
      c.g.fill(30.0);  // sigmoid(30) = 1 in fp32: g = -5
    } else if (mode == 1 || mode == 2) {
      c.g.fill(mode == 1 ? -8.0 : -12.0);
    } else {
      for (std::int64_t t = 2; t < c.T; t += 5)
        for (std::int64_t ch = 0; ch < c.K; ch += 2)
          for (std::int64_t hv = 0; hv < c.HV; ++hv) c.g.view().store(std::vector<std::int64_t>{0, t, hv, ch}, -INFINITY);
    }
    const auto [o_out, o_state] = c.run(Precision::oracle, PrecisionProfile::faithful);
    ASSERT_TRUE(all_finite(o_out.view()) && all_finite(o_state.view()));
    const auto kp = model_errors(c, PrecisionProfile::kparity_chunk);
    EXPECT_LE(kp.first, tf32_bound(o_state)) << "out";
    EXPECT_LE(kp.second, tf32_bound(o_state)) << "final_state";
    std::printf("gate mode %d: out %.3g state %.3g (4u max|S| %.3g)\n", mode, kp.first, kp.second, tf32_bound(o_state));
  }
}

}  // namespace
}  // namespace kdatest
