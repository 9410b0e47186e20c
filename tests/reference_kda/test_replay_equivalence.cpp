// Spec B.2.11 / D.4 AP-K7 with AP-K2, K3, K6, K8, K10, K11: ReplaySSM with the caller's cursor
// protocol equals the packed decode at every step (outputs) and at every flush (state).
#include "kda_test_util.hpp"

namespace kdatest {
namespace {

struct EqCfg {
  Shape5 s{};
  std::int64_t L = 4;
  int steps = 0;  // 0: 3L + 5
  DType act = DType::bf16, state = DType::f32;
  std::optional<double> lb;
  bool exact = false, strided = false, divergent = false;
  double force_prob = 0.0, pad_prob = 0.0;
  Precision prec = Precision::faithful;
};

std::string describe(const EqCfg& c) {
  std::ostringstream o;
  o << "L=" << c.L << " G=" << c.s.HV / c.s.H << " act=" << dtype_name(c.act) << " state=" << dtype_name(c.state)
    << " lb=" << (c.lb ? std::to_string(*c.lb) : "none") << " exact=" << c.exact << " strided=" << c.strided
    << " divergent=" << c.divergent << " force=" << c.force_prob << " pad=" << c.pad_prob
    << " prec=" << kparity::reference::precision_name(c.prec) << "; " << seed_note();
  return o.str();
}

bool is16(DType t) { return t == DType::bf16 || t == DType::f16; }

void run_equivalence(const EqCfg& c) {
  SCOPED_TRACE(describe(c));
  const Shape5& s = c.s;
  const std::int64_t slots = 2 * s.B + 1;  // row b owns slot 2b+1; even slots are never referenced
  const int steps = c.steps ? c.steps : static_cast<int>(3 * c.L + 5);
  const std::string tag = "eq" + describe(c);
  Tensor A_log = randn(DType::f32, {s.HV}, tag + "A_log", 0, 0.3);  // D.1: randn*0.3, randn*0.1
  Tensor dt_bias = randn(DType::f32, {s.HV * s.K}, tag + "dt", 0, 0.1);
  Tensor init = c.exact ? ints(c.state, {slots, s.HV, s.V, s.K}, tag + "S0", 0, -4, 4)
                        : randn(c.state, {slots, s.HV, s.V, s.K}, tag + "S0", 0, 0.02);
  Tensor P(init);  // packed-decode pool, compact
  Tensor R = pool(c.state, slots, s.HV, s.V, s.K, c.strided);
  R.poison();  // gap bytes stay poison; any stray write shows up in the byte checks
  R.copy_from(init);
  Tensor dc = pool(c.act, slots, s.HV, c.L, s.V, c.strided), kc = pool(c.act, slots, s.H, c.L, s.K, c.strided),
         gc = pool(DType::f32, slots, s.HV, c.L, s.K, c.strided);
  dc.poison(), kc.poison(), gc.poison();  // AP-K8: NaN everywhere at positions >= cursor
  Tensor wp = index_tensor(std::vector<std::int64_t>(s.B, 0)), ff = index_tensor(std::vector<std::int64_t>(s.B, 0));
  Rng sched(seed(tag + "schedule"));
  const double scale = c.exact ? 0.25 : 1.0 / std::sqrt(static_cast<double>(s.K));
  const std::optional<double> lb = c.exact ? std::optional<double>(0.0) : c.lb;
  const bool l2 = !c.exact;
  int natural = 0, forced = 0;
  std::vector<int> since(s.B, 0);  // packed-decode steps of a row since its pools were last in sync
  for (int t = 0; t < steps; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    const DecodeStep in = c.exact ? exact_step(s, c.act, tag, t) : random_step(s, c.act, tag, t);
    std::vector<std::int64_t> idx(s.B);
    std::vector<bool> flush(s.B, false);
    for (std::int64_t b = 0; b < s.B; ++b) {
      const bool pad = (c.divergent && t < 2 * b) || sched.uniform() < c.pad_prob;
      idx[b] = pad ? -1 : 2 * b + 1;
      // Random forces, plus all rows at steps 2 and 5 (upstream D.1 forces every row at step 2).
      const bool f = sched.uniform() < c.force_prob || (c.force_prob > 0 && (t == 2 || t == 5));
      ff.view().store_int(std::vector<std::int64_t>{b}, f ? 1 : 0);
      if (pad) continue;
      const std::int64_t cur = wp.view().at_int({b});
      flush[b] = cur == c.L - 1 || f;
      natural += cur == c.L - 1;
      forced += cur != c.L - 1 && f;
    }
    Tensor ix = index_tensor(idx);
    Tensor outP(c.act, {s.B, 1, s.HV, s.V}), outR(c.act, {s.B, 1, s.HV, s.V});
    outP.poison(), outR.poison();
    const auto P0 = P.storage(), R0 = R.storage(), d0 = dc.storage(), k0 = kc.storage(), g0 = gc.storage();
    std::vector<std::int64_t> cursor(s.B);
    for (std::int64_t b = 0; b < s.B; ++b) cursor[b] = wp.view().at_int({b});

    ref::packed_decode({in.mixed, in.a, in.b, A_log, dt_bias, scale, P, outP, ix, l2, lb}, c.prec);
    const kparity::kda::ReplaySsmDecodeArgs ra{in.mixed, in.a,  in.b, A_log, dt_bias, scale, R,  dc,  kc,
                                               gc,       outR,  ix,   wp,    ff.view(), l2,   lb,  BetaRounding::fp32};
    ref::replayssm_decode(ra, c.prec);

    // AP-K2: padding rows are exact zeros in both ops.
    for (std::int64_t b = 0; b < s.B; ++b) {
      if (idx[b] >= 0) continue;
      EXPECT_TRUE(same_values(outP.view().select(0, b), Tensor(c.act, {1, s.HV, s.V}).view())) << "row " << b;
      EXPECT_TRUE(same_values(outR.view().select(0, b), Tensor(c.act, {1, s.HV, s.V}).view())) << "row " << b;
    }
    ASSERT_TRUE(all_finite(outR)) << "ring garbage or an unwritten output leaked";
    const bool wide = is16(c.act) || is16(c.state);
    // AP-K7 (spec D.4): out fp32 1e-4/1e-3, bf16 1e-3/1e-2; state fp32 1.5e-3/1e-3, bf16 3e-3/1e-2
    // (f16 takes the bf16 bound: it is the looser of the two 16-bit formats). Oracle with every
    // dtype fp32: only the fp32 stores differ (packed: state each step; ReplaySSM: rings), so the
    // recurrence recipe faithful_tol over the L steps between flushes applies.
    Tol to = wide ? Tol{1e-3, 1e-2} : Tol{1e-4, 1e-3}, ts = wide ? Tol{3e-3, 1e-2} : Tol{1.5e-3, 1e-3};
    if (c.prec == Precision::oracle && !wide) {
      to = faithful_tol(static_cast<int>(c.L), s.K, s.V, max_abs(outP), DType::f32);
      ts = faithful_tol(static_cast<int>(c.L), s.K, s.V, max_abs(P), DType::f32);
    }
    if (is16(c.state) && !c.exact) {
      // A 16-bit state: the packed decode rounds it on every step, ReplaySSM only on a flush, so
      // the pools drift apart by rounding and are re-synced at each flush (below). Each rounding
      // perturbs a state row by at most u16 ||S_row||_2 <= u16 sqrt(K) max|S| (u16 = 2^-9 bf16,
      // 2^-12 f16, half an ulp); later steps multiply row errors by diag(alpha)(I - beta k k^T),
      // of norm <= 1, so errors add up: <= (m + 1) u16 sqrt(K) max|S| per pool after m steps,
      // twice that between the pools; the output sees it through |q_s| <= scale.
      int m = 0;
      for (std::int64_t b = 0; b < s.B; ++b) m = std::max(m, since[b]);
      const double u16 = std::ldexp(1.0, c.state == DType::bf16 ? -9 : -12);
      const double drift = 2.0 * (m + 1) * u16 * std::sqrt(static_cast<double>(s.K)) * max_abs(P);
      to.atol += drift * scale;
      ts.atol += drift;
    }
    if (c.exact) to = ts = Tol{0, 0};
    EXPECT_TRUE(close(outR, outP, to.atol, to.rtol)) << "out";
    for (std::int64_t b = 0; b < s.B; ++b) {
      if (flush[b]) {
        EXPECT_TRUE(close(R.view().select(0, idx[b]), P.view().select(0, idx[b]), ts.atol, ts.rtol)) << "state, row " << b;
      }
    }
    if (c.exact) ASSERT_LE(max_abs(P), 256.0) << "exact-mode inputs outgrew the bf16 integer range";

    // AP-K3/K6: ReplaySSM writes the state of flushing rows only; packed writes every used slot.
    auto row_of_slot = [&](std::int64_t slot) -> std::int64_t {
      for (std::int64_t b = 0; b < s.B; ++b)
        if (idx[b] == slot) return b;
      return -1;
    };
    EXPECT_TRUE(bytes_unchanged_except(R0, R, [&](auto i) { auto b = row_of_slot(i[0]); return b >= 0 && flush[b]; }));
    EXPECT_TRUE(bytes_unchanged_except(P0, P, [&](auto i) { return row_of_slot(i[0]) >= 0; }));
    // B.2.6 / AP-K10: appends write position `cursor` of their own slot only; flushes write no ring.
    auto appended = [&](std::span<const std::int64_t> i) {
      const auto b = row_of_slot(i[0]);
      return b >= 0 && !flush[b] && i[2] == cursor[b];
    };
    EXPECT_TRUE(bytes_unchanged_except(d0, dc, appended));
    EXPECT_TRUE(bytes_unchanged_except(k0, kc, appended));
    EXPECT_TRUE(bytes_unchanged_except(g0, gc, appended));
    for (std::int64_t b = 0; b < s.B; ++b) {
      if (idx[b] < 0) continue;
      ++since[b];
      if (flush[b] && is16(c.state)) {  // re-sync: each flush interval is checked on its own
        copy_convert(R.view().select(0, idx[b]), P.view().select(0, idx[b]));
        since[b] = 0;
      }
    }
    ref::advance_cursors(ra);
    if (::testing::Test::HasFatalFailure()) return;
  }
  if (c.L > 1 && c.force_prob == 0) {
    EXPECT_GT(natural, 0) << "no natural flush happened";
  }
  if (c.L > 2 && c.force_prob > 0) {  // at L = 2 only cursor 0 can be forced: too rare to insist
    EXPECT_GT(forced, 0) << "no forced flush happened";
  }
}

Shape5 gqa(std::int64_t G) { return {3, 2, 2 * G, 16, 16}; }

TEST(KdaReplayEquivalence, ExactArithmeticBitExact) {
  int n = 0;
  for (std::int64_t L : {1, 2, 4, 16})
    for (std::int64_t G : {1, 2, 4})
      for (DType st : {DType::f32, DType::bf16})
        for (Precision p : {Precision::oracle, Precision::faithful}) {
          EqCfg c;
          c.s = gqa(G), c.L = L, c.act = DType::f32, c.state = st, c.exact = true, c.prec = p;
          c.force_prob = 0.25, c.pad_prob = 0.15, c.strided = (n++ % 2) == 1, c.divergent = G == 2;
          run_equivalence(c);
        }
}

TEST(KdaReplayEquivalence, RandomNaturalFlushes) {
  for (std::int64_t L : {1, 2, 4, 16})
    for (DType st : {DType::f32, DType::bf16, DType::f16})
      for (DType act : {DType::f32, DType::bf16}) {
        EqCfg c;
        c.L = L, c.state = st, c.act = act;
        run_equivalence(c);
      }
}

TEST(KdaReplayEquivalence, RandomForcedDivergentPaddedStrided) {
  int n = 0;
  for (std::int64_t L : {1, 2, 4, 16})
    for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)})
      for (DType st : {DType::f32, DType::bf16, DType::f16}) {
        EqCfg c;
        c.L = L, c.state = st, c.lb = lb, c.force_prob = 0.2, c.pad_prob = 0.15, c.divergent = true;
        c.strided = (n++ % 2) == 0;
        const std::int64_t Gs[] = {1, 2, 4};
        c.s = gqa(Gs[n % 3]);
        run_equivalence(c);
      }
}

TEST(KdaReplayEquivalence, OracleAllFp32) {
  for (std::int64_t L : {1, 2, 4, 16}) {
    EqCfg c;
    c.L = L, c.act = DType::f32, c.state = DType::f32, c.prec = Precision::oracle, c.force_prob = 0.2, c.pad_prob = 0.1;
    run_equivalence(c);
  }
}

}  // namespace
}  // namespace kdatest
