// The a-priori error bounds of the KDA ops (reference/kda/error_bound.cpp): fp32 implementations
// that differ from the faithful reference as kernels do stay within them, they stay small over long
// normalised recurrences, and the planted bugs of the self-test leave them.
#include <algorithm>

#include "kda_test_util.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kdatest {
namespace {

using kparity::reference::ErrorBounds;

ValidateOptions upstream_only() {
  ValidateOptions o = ValidateOptions::upstream();
  o.entry = Entry::reference;
  return o;
}

Tensor widened(const Tensor& t) {
  Tensor w(DType::f32, t.shape());
  w.copy_from(t.view());
  return w;
}

std::vector<double> values(const TensorView& v) {
  std::vector<double> r(static_cast<std::size_t>(v.numel()));
  for (std::int64_t i = 0; i < v.numel(); ++i) r[static_cast<std::size_t>(i)] = v.load_flat(i);
  return r;
}

// |b - o| <= bound + the backend's store into b's dtype + the oracle's fp32 store, elementwise.
::testing::AssertionResult within_bound(const std::string& name, const TensorView& b, const TensorView& o,
                                        const ErrorBounds& eb) {
  const std::vector<double> bv = values(b), ov = values(o), bound = eb.at(name);
  const double ub = kparity::reference::unit_roundoff(b.dtype), fb = kparity::reference::underflow_unit(b.dtype);
  std::size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (std::size_t i = 0; i < bv.size(); ++i) {
    const double allowed = bound[i] + ub * (std::fabs(ov[i]) + bound[i]) + fb + 0x1p-24 * std::fabs(ov[i]) + 0x1p-150;
    const double ratio = std::fabs(bv[i] - ov[i]) / allowed;
    if (!(ratio <= 1)) ++bad;
    if (!(ratio <= worst_ratio)) worst_ratio = ratio, worst = i;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << name << ": " << bad << " / " << bv.size() << " beyond the bound; worst ["
                                       << worst << "]: b " << bv[worst] << ", o " << ov[worst] << ", bound "
                                       << bound[worst] << " (" << worst_ratio << "x); " << seed_note();
}

// ---- packed decode --------------------------------------------------------------------------

// A kernel-like fp32 packed step, independent of the reference's code: channels in reverse order,
// fused multiply-adds, the l2 norm by a reciprocal square root, expf/logf as in the CUDA kernels.
void kernel_like_packed(Packed& p, Tensor& state, Tensor& out) {
  const auto& s = p.s;
  const std::int64_t K = s.K, V = s.V, H = s.H, G = s.HV / s.H;
  const TensorView m = p.in.mixed;
  for (std::int64_t b = 0; b < s.B; ++b) {
    const std::int64_t slot = p.idx.view().at_int({b});
    for (std::int64_t hv = 0; hv < s.HV; ++hv) {
      if (slot < 0) {
        for (std::int64_t j = 0; j < V; ++j) out.view().store(std::vector<std::int64_t>{b, 0, hv, j}, 0.0);
        continue;
      }
      const std::int64_t h = hv / G;
      std::vector<float> q(K), k(K), al(K);
      float nq = 0, nk = 0;
      for (std::int64_t c = K - 1; c >= 0; --c) {
        q[c] = static_cast<float>(m.at({b, h * K + c}));
        k[c] = static_cast<float>(m.at({b, H * K + h * K + c}));
        nq = std::fma(q[c], q[c], nq);
        nk = std::fma(k[c], k[c], nk);
        const float x = static_cast<float>(p.in.a.view().at({b, hv * K + c})) + static_cast<float>(p.dt_bias.view().at({hv * K + c}));
        const float A = std::exp(static_cast<float>(p.A_log.view().at({hv})));
        const float g = p.lb ? static_cast<float>(*p.lb) * (1.f / (1.f + std::exp(-A * x)))
                             : -A * (x > 20.f ? x : std::log(1.f + std::exp(x)));
        al[c] = std::exp(g);
      }
      if (p.l2) {
        const float rq = 1.f / std::sqrt(nq + 1e-6f), rk = 1.f / std::sqrt(nk + 1e-6f);
        for (std::int64_t c = 0; c < K; ++c) q[c] *= rq, k[c] *= rk;
      }
      for (float& e : q) e *= static_cast<float>(p.scale);
      const float beta = 1.f / (1.f + std::exp(-static_cast<float>(p.in.b.view().at({b, hv}))));
      for (std::int64_t j = 0; j < V; ++j) {
        std::vector<float> row(K);
        float u = 0;
        for (std::int64_t c = K - 1; c >= 0; --c) {
          row[c] = static_cast<float>(state.view().at({slot, hv, j, c})) * al[c];
          u = std::fma(row[c], k[c], u);
        }
        const float d = beta * (static_cast<float>(m.at({b, 2 * H * K + hv * V + j})) - u);
        float o = 0;
        for (std::int64_t c = K - 1; c >= 0; --c) {
          row[c] = std::fma(d, k[c], row[c]);
          o = std::fma(row[c], q[c], o);
        }
        out.view().store(std::vector<std::int64_t>{b, 0, hv, j}, o);
        for (std::int64_t c = 0; c < K; ++c) state.view().store(std::vector<std::int64_t>{slot, hv, j, c}, row[c]);
      }
    }
  }
}

TEST(KdaErrorBound, PackedControlsStayWithin) {
  int n = 0;
  for (DType act : {DType::f32, DType::bf16})
    for (DType st : {DType::f32, DType::bf16})
      for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)})
        for (bool l2 : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(act)) + "/" + std::string(dtype_name(st)) + (lb ? " bounded" : " softplus") +
                       (l2 ? " l2" : ""));
          Packed p({4, 2, 4, 32, 16}, "bound", act, st, 4, false);
          p.state.copy_from(randn(st, {4, 4, 16, 32}, "boundS", 0, 0.5));
          p.idx = index_tensor({1, -1, 3, 0});
          p.lb = lb, p.l2 = l2;
          const ErrorBounds eb = kparity::reference::kda::packed_decode_error_bound(p.args(p.state, p.out));
          Tensor o_state = widened(p.state), o_out(DType::f32, p.out.shape());
          ref::packed_decode(p.args(o_state, o_out), Precision::oracle, upstream_only());
          Tensor f_state = p.state, f_out = p.out;
          ref::packed_decode(p.args(f_state, f_out), Precision::faithful);
          EXPECT_TRUE(within_bound("out", f_out, o_out, eb));
          EXPECT_TRUE(within_bound("initial_state", f_state, o_state, eb));
          // The same recipe with fp64-sized units rejects the fp32 results: the bound's size comes
          // from fp32's unit roundoff, not from slack.
          const kparity::reference::Fp32Model fp64_units{0x1p-53, 0x1p-53, 0x1p-52};
          const ErrorBounds tiny = kparity::reference::kda::packed_decode_error_bound(p.args(p.state, p.out), fp64_units);
          if (act == DType::f32 && st == DType::f32) {
            EXPECT_FALSE(within_bound("out", f_out, o_out, tiny));
            EXPECT_FALSE(within_bound("initial_state", f_state, o_state, tiny));
          }
          Tensor k_state = p.state, k_out = p.out;
          kernel_like_packed(p, k_state, k_out);
          EXPECT_TRUE(within_bound("out", k_out, o_out, eb));
          EXPECT_TRUE(within_bound("initial_state", k_state, o_state, eb));
          ++n;
        }
  EXPECT_EQ(n, 16);
}

// ---- recurrent ------------------------------------------------------------------------------

TEST(KdaErrorBound, LongNormalisedRecurrenceStaysTight) {
  const std::int64_t T = 64, H = 1, HV = 2, K = 32, V = 16;
  Tensor q = randn(DType::bf16, {T, H, K}, "rq", 0, 1.0), k = randn(DType::bf16, {T, H, K}, "rk", 0, 1.0);
  Tensor v = randn(DType::bf16, {T, HV, V}, "rv", 0, 1.0), a = randn(DType::f32, {T, HV, K}, "ra", 0, 0.5);
  Tensor dtb = randn(DType::f32, {HV, K}, "rdt", 0, 0.1), A_log = randn(DType::f32, {HV}, "rA", 0, 0.3);
  Tensor beta = randn(DType::f32, {T, HV}, "rb", 0, 1.0);
  Tensor s0 = randn(DType::f32, {1, HV, V, K}, "rs", 0, 0.5);
  auto args = [&](Tensor& out, Tensor& fs) {
    kparity::kda::RecurrentArgs x;
    x.q = q, x.k = k, x.v = v, x.a = a.view(), x.dt_bias = dtb.view(), x.A_log = A_log.view();
    x.beta = beta, x.beta_is_logits = true, x.use_qk_l2norm_in_kernel = true;
    x.initial_state = s0.view(), x.final_state = fs.view(), x.out = out;
    return x;
  };
  Tensor o_out(DType::f32, {T, HV, V}), o_fs(DType::f32, {1, HV, V, K});
  Tensor f_out(DType::bf16, {T, HV, V}), f_fs(DType::f32, {1, HV, V, K});
  ref::recurrent(args(o_out, o_fs), Precision::oracle, upstream_only());
  ref::recurrent(args(f_out, f_fs), Precision::faithful);
  const ErrorBounds eb = kparity::reference::kda::recurrent_error_bound(args(f_out, f_fs));
  EXPECT_TRUE(within_bound("out", f_out, o_out, eb));
  EXPECT_TRUE(within_bound("final_state", f_fs, o_fs, eb));
  // Not vacuous after 64 tokens: the 2-norm carry does not double per token.
  const double worst = *std::max_element(eb.at("final_state").begin(), eb.at("final_state").end());
  EXPECT_LT(worst, 1e-3 * max_abs(o_fs)) << worst;
  EXPECT_LT(*std::max_element(eb.at("out").begin(), eb.at("out").end()), 1e-3 * max_abs(o_out));
}

// ---- ReplaySSM ------------------------------------------------------------------------------

struct Replay {
  Shape5 s{3, 2, 4, 16, 16};
  std::int64_t L = 4, slots = 4;
  DecodeStep in;
  Tensor A_log, dt_bias, state, dc, kc, gc, out, idx, wp, ff;
  Replay(const std::string& tag, DType act, std::vector<std::int64_t> cursor, std::vector<std::int64_t> force) {
    in = random_step(s, act, tag, 0);
    A_log = randn(DType::f32, {s.HV}, tag + "A", 0, 0.3);
    dt_bias = randn(DType::f32, {s.HV * s.K}, tag + "dt", 0, 0.1);
    state = randn(DType::f32, {slots, s.HV, s.V, s.K}, tag + "S", 0, 0.5);
    dc = randn(act, {slots, s.HV, L, s.V}, tag + "d", 0, 0.5);
    kc = randn(act, {slots, s.H, L, s.K}, tag + "k", 0, 0.3);
    gc = Tensor(DType::f32, {slots, s.HV, L, s.K});
    gc.fill_uniform(seed(tag + "g"), -0.3, 0.0);
    out = Tensor(act, {s.B, 1, s.HV, s.V});
    idx = index_tensor({2, 0, 3});
    wp = index_tensor(cursor);
    ff = index_tensor(force);
  }
  struct Set {
    Tensor state, dc, kc, gc, out;
  };
  Set copy(bool wide) const {
    if (wide) return {widened(state), widened(dc), widened(kc), widened(gc), Tensor(DType::f32, out.shape())};
    return {state, dc, kc, gc, out};
  }
  kparity::kda::ReplaySsmDecodeArgs args(Set& w, BetaRounding br = BetaRounding::through_b_dtype) {
    return {in.mixed, in.a, in.b, A_log, dt_bias, 0.25, w.state, w.dc, w.kc, w.gc, w.out, idx, wp, ff.view(), true,
            std::nullopt, br};
  }
};

::testing::AssertionResult replay_within(Replay::Set& b, Replay::Set& o, const ErrorBounds& eb) {
  for (auto [name, bt, ot] : {std::tuple{"out", &b.out, &o.out}, std::tuple{"initial_state", &b.state, &o.state},
                              std::tuple{"d_cache", &b.dc, &o.dc}, std::tuple{"k_cache", &b.kc, &o.kc},
                              std::tuple{"g_cache", &b.gc, &o.gc}}) {
    auto r = within_bound(name, *bt, *ot, eb);
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

TEST(KdaErrorBound, ReplayFaithfulStaysWithin) {
  for (DType act : {DType::bf16, DType::f16, DType::f32}) {
    SCOPED_TRACE(std::string(dtype_name(act)));
    Replay r("rb", act, {1, 3, 2}, {0, 0, 1});  // append, natural flush, forced flush
    Replay::Set o = r.copy(true), f = r.copy(false);
    const ErrorBounds eb = kparity::reference::kda::replayssm_decode_error_bound(r.args(f));
    ref::replayssm_decode(r.args(o), Precision::oracle, upstream_only());
    ref::replayssm_decode(r.args(f), Precision::faithful);
    EXPECT_TRUE(replay_within(f, o, eb));
  }
}

TEST(KdaErrorBound, PlantedBugsLeaveIt) {
  int beta = 0, suffix = 0, cursor = 0;
  for (int i = 0; i < 4; ++i) {
    Replay r("bug" + std::to_string(i), DType::bf16, {2, 1, 3}, {0, 1, 0});
    Replay::Set o = r.copy(true);
    const Replay::Set base = r.copy(false);
    Replay::Set tmp = r.copy(false);
    const ErrorBounds eb = kparity::reference::kda::replayssm_decode_error_bound(r.args(tmp));
    ref::replayssm_decode(r.args(o), Precision::oracle, upstream_only());
    Replay::Set f = base;
    ref::replayssm_decode(r.args(f, BetaRounding::fp32), Precision::faithful);  // beta-not-rounded
    beta += !replay_within(f, o, eb);
    f = base;
    {
      kparity::reference::PlantedFaultScope s(kparity::reference::PlantedFault::inclusive_suffix_decay);
      ref::replayssm_decode(r.args(f), Precision::faithful);
    }
    suffix += !replay_within(f, o, eb);
    f = base;
    {
      kparity::reference::PlantedFaultScope s(kparity::reference::PlantedFault::ring_read_past_cursor);
      ref::replayssm_decode(r.args(f), Precision::faithful);
    }
    cursor += !replay_within(f, o, eb);
  }
  EXPECT_EQ(beta, 4);
  EXPECT_EQ(suffix, 4);
  EXPECT_EQ(cursor, 4);
}

}  // namespace
}  // namespace kdatest
