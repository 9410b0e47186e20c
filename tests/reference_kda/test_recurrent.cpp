// kda/recurrent (spec A): equals T packed-decode steps, varlen equals per-sequence runs, GQA,
// both gate forms, beta as probabilities or logits, defaults (scale, zero initial state), strides.
#include "kda_test_util.hpp"

namespace kdatest {
namespace {

struct Rec {
  std::int64_t T, N, H, HV, K = 16, V = 16;
  Tensor q, k, v, a, dt_bias, A_log, g, beta, S0, Sf, out, cu;
  bool use_g = false, logits = true, l2 = true, has_S0 = true, has_cu = false;
  std::optional<double> lb, scale;
  Rec(std::int64_t T_, std::int64_t N_, std::int64_t H_, std::int64_t HV_, const std::string& tag, DType act = DType::bf16,
      bool strided_q = false)
      : T(T_), N(N_), H(H_), HV(HV_) {
    q = strided_q ? Tensor::strided(act, {T, H, K}, {H * K + 5, K, 1}, 3) : Tensor(act, {T, H, K});
    if (strided_q) q.poison();
    q.copy_from(randn(act, {T, H, K}, tag + "q", 0, 1.0));
    k = randn(act, {T, H, K}, tag + "k", 0, 1.0);
    v = randn(act, {T, HV, V}, tag + "v", 0, 1.0);
    a = randn(act, {T, HV, K}, tag + "a", 0, 0.5);
    dt_bias = randn(DType::f32, {HV, K}, tag + "dt", 0, 0.1);
    A_log = randn(DType::f32, {HV}, tag + "A", 0, 0.3);
    g = Tensor(DType::f32, {T, HV, K});
    beta = randn(act, {T, HV}, tag + "b", 0, 1.0);
    S0 = randn(DType::f32, {N, HV, V, K}, tag + "S0", 0, 0.02);
    Sf = Tensor(DType::f32, {N, HV, V, K});
    Sf.poison();
    out = Tensor(act, {T, HV, V});
    out.poison();
  }
  kparity::kda::RecurrentArgs args() {
    kparity::kda::RecurrentArgs r;
    r.q = q, r.k = k, r.v = v, r.beta = beta, r.out = out, r.final_state = Sf.view();
    if (use_g) r.g = g.view();
    else r.a = a.view(), r.dt_bias = dt_bias.view(), r.A_log = A_log.view(), r.lower_bound = lb;
    r.beta_is_logits = logits, r.use_qk_l2norm_in_kernel = l2, r.scale = scale;
    if (has_S0) r.initial_state = S0.view();
    if (has_cu) r.cu_seqlens = cu.view();
    return r;
  }
};

// Recurrent over T tokens vs T packed-decode calls on one slot (fp32 state, so the packed decode's
// per-step store is exact in faithful mode): faithful is bit-identical (same operations, same
// order, same fp32 values); the oracle keeps fp64 between tokens while the packed decode stores
// fp32, so recipe faithful_tol(T steps) applies.
TEST(KdaRecurrent, EqualsPackedDecodeSteps) {
  const std::int64_t T = 9;
  for (std::int64_t G : {1, 2, 4})
    for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)})
      for (Precision p : {Precision::oracle, Precision::faithful}) {
        SCOPED_TRACE("G=" + std::to_string(G) + (lb ? " bounded" : " softplus"));
        Rec r(T, 1, 2, 2 * G, "rvp" + std::to_string(G));
        r.lb = lb, r.scale = 0.3;
        ref::recurrent(r.args(), p);
        Tensor state(r.S0), mixed(DType::bf16, {1, 2 * r.H * r.K + r.HV * r.V}), a(DType::bf16, {1, r.HV * r.K}),
            b(DType::bf16, {1, r.HV}), dt(DType::f32, {r.HV * r.K}), out(DType::bf16, {1, 1, r.HV, r.V});
        Tensor idx = index_tensor({0});
        for (std::int64_t i = 0; i < r.HV * r.K; ++i) dt.view().store_flat(i, r.dt_bias.view().load_flat(i));
        for (std::int64_t t = 0; t < T; ++t) {
          for (std::int64_t i = 0; i < r.H * r.K; ++i) {
            mixed.view().store_flat(i, r.q.view().at({t, i / r.K, i % r.K}));
            mixed.view().store_flat(r.H * r.K + i, r.k.view().at({t, i / r.K, i % r.K}));
          }
          for (std::int64_t i = 0; i < r.HV * r.V; ++i) mixed.view().store_flat(2 * r.H * r.K + i, r.v.view().at({t, i / r.V, i % r.V}));
          for (std::int64_t i = 0; i < r.HV * r.K; ++i) a.view().store_flat(i, r.a.view().at({t, i / r.K, i % r.K}));
          for (std::int64_t i = 0; i < r.HV; ++i) b.view().store_flat(i, r.beta.view().at({t, i}));
          out.poison();
          ref::packed_decode({mixed, a, b, r.A_log, dt, 0.3, state, out, idx, true, lb}, p);
          const TensorView want = r.out.view().select(0, t);
          Tensor row(DType::bf16, {r.HV, r.V});
          for (std::int64_t hv = 0; hv < r.HV; ++hv)
            for (std::int64_t j = 0; j < r.V; ++j) row.view().store(std::vector<std::int64_t>{hv, j}, out.view().at({0, 0, hv, j}));
          const Tol to = p == Precision::faithful ? Tol{0, 0} : faithful_tol(T, r.K, r.V, max_abs(want), DType::bf16);
          EXPECT_TRUE(close(row, want, to.atol, to.rtol)) << "token " << t;
        }
        const Tol ts = p == Precision::faithful ? Tol{0, 0} : faithful_tol(T, r.K, r.V, max_abs(r.Sf), DType::f32);
        EXPECT_TRUE(close(state, r.Sf, ts.atol, ts.rtol));
      }
}

// cu_seqlens [0, 3, 3, 8, 10]: sequence 1 is empty (its final state is its initial state).
TEST(KdaRecurrent, VarlenEqualsPerSequenceRuns) {
  const std::vector<std::int64_t> cu{0, 3, 3, 8, 10};
  for (DType cut : {DType::i32, DType::i64})
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      Rec all(10, 4, 2, 4, "varlen");
      all.cu = index_tensor(cu, cut), all.has_cu = true;
      ref::recurrent(all.args(), p);
      for (std::int64_t n = 0; n < 4; ++n) {
        const std::int64_t len = cu[n + 1] - cu[n];
        Rec one(len, 1, 2, 4, "varlen");
        auto rows = [&](Tensor& dst, const Tensor& src) {
          for_each_element(dst.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
            std::vector<std::int64_t> j(i.begin(), i.end());
            j[0] += cu[n];
            dst.view().store(i, src.view().load(j));
          });
        };
        rows(one.q, all.q), rows(one.k, all.k), rows(one.v, all.v), rows(one.a, all.a), rows(one.beta, all.beta);
        for_each_element(one.S0.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
          one.S0.view().store(i, all.S0.view().at({n, i[1], i[2], i[3]}));
        });
        ref::recurrent(one.args(), p);
        for (std::int64_t t = 0; t < len; ++t)
          EXPECT_TRUE(same_values(one.out.view().select(0, t), all.out.view().select(0, cu[n] + t))) << n << "/" << t;
        EXPECT_TRUE(same_values(one.Sf.view().select(0, 0), all.Sf.view().select(0, n))) << "sequence " << n;
      }
      EXPECT_TRUE(same_values(all.Sf.view().select(0, 1), all.S0.view().select(0, 1))) << "empty sequence";
    }
}

TEST(KdaRecurrent, GqaMatchesReplicatedHeads) {
  for (std::int64_t G : {1, 2, 4})
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      Rec g(6, 1, 2, 2 * G, "rgqa"), rep(6, 1, 2 * G, 2 * G, "rgqa");
      rep.v = g.v, rep.a = g.a, rep.beta = g.beta, rep.dt_bias = g.dt_bias, rep.A_log = g.A_log, rep.S0 = g.S0;
      for_each_element(rep.q.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
        rep.q.view().store(i, g.q.view().at({i[0], i[1] / G, i[2]}));  // A.1: h = hv / G
        rep.k.view().store(i, g.k.view().at({i[0], i[1] / G, i[2]}));
      });
      ref::recurrent(g.args(), p);
      ref::recurrent(rep.args(), p);
      EXPECT_TRUE(same_values(g.out, rep.out)) << "G=" << G;
      EXPECT_TRUE(same_values(g.Sf, rep.Sf)) << "G=" << G;
    }
}

// Gate forms: a precomputed g equals the raw form it encodes. Zero gate both ways is bit-exact
// (bounded with lower_bound 0 gives g = 0; a far-negative softplus argument gives exactly 0 in the
// literal log(1 + exp) form, A.3 notes). Otherwise g is computed here from A.3 in fp64 and
// stored in fp32: recipe faithful_tol(T steps) of the oracle's magnitudes bounds the effect of
// that one fp32 rounding of g (relative 2^-24 on |g| <= ~6, far below it).
TEST(KdaRecurrent, GateForms) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Rec raw(7, 1, 2, 4, "gate"), pre(7, 1, 2, 4, "gate");
    raw.lb = 0.0, pre.use_g = true;  // g tensor zero-filled
    ref::recurrent(raw.args(), p);
    ref::recurrent(pre.args(), p);
    EXPECT_TRUE(same_values(raw.out, pre.out));
    Rec neg(7, 1, 2, 4, "gate");
    neg.a.fill(-200.0), neg.dt_bias.fill(0.0);
    ref::recurrent(neg.args(), p);
    EXPECT_TRUE(same_values(neg.out, pre.out)) << "literal softplus must give exactly 0 far below";
  }
  for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)}) {
    Rec raw(7, 1, 2, 4, "gate2"), pre(7, 1, 2, 4, "gate2");
    raw.lb = lb, pre.use_g = true;
    for_each_element(pre.g.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
      const double x = raw.a.view().load(i) + raw.dt_bias.view().at({i[1], i[2]});
      const double A = std::exp(raw.A_log.view().at({i[1]}));
      const double g = lb ? *lb / (1.0 + std::exp(-A * x)) : -A * (x > 20 ? x : std::log(1.0 + std::exp(x)));
      pre.g.view().store(i, g);
    });
    ref::recurrent(raw.args(), Precision::oracle);
    ref::recurrent(pre.args(), Precision::oracle);
    const Tol t = faithful_tol(7, 16, 16, max_abs(raw.out), DType::bf16);
    EXPECT_TRUE(close(pre.out, raw.out, t.atol, t.rtol));
  }
}

// Beta as probabilities: feed sigmoid(b) (fp64, stored fp32) instead of logits b.
TEST(KdaRecurrent, BetaProbabilitiesEqualSigmoidOfLogits) {
  Rec lg(7, 1, 2, 4, "beta"), pr(7, 1, 2, 4, "beta");
  pr.beta = Tensor(DType::f32, {7, 4}), pr.logits = false;
  for_each_element(pr.beta.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
    pr.beta.view().store(i, 1.0 / (1.0 + std::exp(-lg.beta.view().load(i))));
  });
  ref::recurrent(lg.args(), Precision::oracle);
  ref::recurrent(pr.args(), Precision::oracle);
  const Tol t = faithful_tol(7, 16, 16, max_abs(lg.out), DType::bf16);  // one fp32 rounding of beta
  EXPECT_TRUE(close(pr.out, lg.out, t.atol, t.rtol));
  EXPECT_FALSE(same_values(pr.out, Rec(7, 1, 2, 4, "beta").out)) << "outputs were written";
}

// Defaults: scale K^-0.5 (A.6, FLA's default) and a zero initial state; strided q.
TEST(KdaRecurrent, DefaultsAndStrides) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Rec dflt(5, 2, 2, 4, "dflt"), expl(5, 2, 2, 4, "dflt"), strided(5, 2, 2, 4, "dflt", DType::bf16, true);
    dflt.has_S0 = false, strided.has_S0 = false;
    for (Rec* r : {&dflt, &expl, &strided}) r->cu = index_tensor({0, 2, 5}), r->has_cu = true;
    expl.scale = 0.25;  // 16^-0.5
    expl.S0.fill(0.0);
    ref::recurrent(dflt.args(), p);
    ref::recurrent(expl.args(), p);
    ref::recurrent(strided.args(), p);
    EXPECT_TRUE(same_values(dflt.out, expl.out));
    EXPECT_TRUE(same_values(dflt.Sf, expl.Sf));
    EXPECT_TRUE(same_values(strided.out, dflt.out));
  }
}

// Exact arithmetic (testing.md 1.4): integer q/v/state, k with one or two entries of +-1, beta
// exactly 1, zero gate, no normalisation, scale 1/4: oracle and faithful agree bit for bit.
TEST(KdaRecurrent, ExactArithmeticOracleEqualsFaithful) {
  Rec o(12, 2, 2, 4, "rexact", DType::f32), f(12, 2, 2, 4, "rexact", DType::f32);
  for (Rec* r : {&o, &f}) {
    r->q = ints(DType::f32, {12, 2, 16}, "rexq", 0, -3, 3);
    r->k = Tensor(DType::f32, {12, 2, 16});
    Rng rng(seed("rexk"));
    for (std::int64_t t = 0; t < 12; ++t)
      for (std::int64_t h = 0; h < 2; ++h)
        for (std::int64_t e = rng.integer(1, 2); e > 0; --e)
          r->k.view().store(std::vector<std::int64_t>{t, h, rng.integer(0, 15)}, rng.integer(0, 1) ? 1.0 : -1.0);
    r->v = ints(DType::f32, {12, 4, 16}, "rexv", 0, -4, 4);
    r->S0 = ints(DType::f32, {2, 4, 16, 16}, "rexs", 0, -4, 4);
    r->beta.fill(1.0), r->logits = false, r->use_g = true, r->l2 = false, r->scale = 0.25;
    r->cu = index_tensor({0, 5, 12}), r->has_cu = true;
  }
  ref::recurrent(o.args(), Precision::oracle);
  ref::recurrent(f.args(), Precision::faithful);
  EXPECT_TRUE(same_values(f.out, o.out));
  EXPECT_TRUE(same_values(f.Sf, o.Sf));
  EXPECT_GT(max_abs(o.out), 0.0);
}

TEST(KdaRecurrent, OracleVsFaithful) {
  for (bool l2 : {false, true})
    for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)}) {
      Rec o(16, 1, 2, 4, "rovf", DType::f32), f(16, 1, 2, 4, "rovf", DType::f32);
      o.l2 = f.l2 = l2, o.lb = f.lb = lb;
      ref::recurrent(o.args(), Precision::oracle);
      ref::recurrent(f.args(), Precision::faithful);
      const Tol to = faithful_tol(16, 16, 16, max_abs(o.out), DType::f32), ts = faithful_tol(16, 16, 16, max_abs(o.Sf), DType::f32);
      EXPECT_TRUE(close(f.out, o.out, to.atol, to.rtol));
      EXPECT_TRUE(close(f.Sf, o.Sf, ts.atol, ts.rtol));
    }
}

}  // namespace
}  // namespace kdatest
