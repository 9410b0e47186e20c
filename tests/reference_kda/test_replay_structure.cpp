// ReplaySSM single-call properties: per-row flush decisions (spec D.1), ring garbage at positions
// >= cursor (AP-K8), strided state and rings against compact ones (AP-K11), oracle vs faithful.
#include "kda_test_util.hpp"
#include "kparity/core/format.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kdatest {
namespace {

// One ReplaySSM call's tensors, upstream's per-row flush setup (D.1): B = 3, H = 2, HV = 4, L = 4,
// fp32 state randn*0.02, rings pre-filled (d randn*0.02, k randn, g -rand*0.1), indices [0, 1, 2].
struct Replay {
  Shape5 s{3, 2, 4, 16, 16};
  std::int64_t L = 4, slots = 4;
  DType act = DType::bf16;
  DecodeStep in;
  Tensor A_log, dt_bias, state, dc, kc, gc, out, idx, wp, ff;
  std::optional<double> lb;
  bool has_ff = false;
  Replay(const std::string& tag, bool strided, DType act_ = DType::bf16) : act(act_) {
    in = random_step(s, act, tag, 0);
    A_log = randn(DType::f32, {s.HV}, tag + "A", 0, 0.3);
    dt_bias = randn(DType::f32, {s.HV * s.K}, tag + "dt", 0, 0.1);
    state = pool(DType::f32, slots, s.HV, s.V, s.K, strided);
    dc = pool(act, slots, s.HV, L, s.V, strided);
    kc = pool(act, slots, s.H, L, s.K, strided);
    gc = pool(DType::f32, slots, s.HV, L, s.K, strided);
    for (Tensor* t : {&state, &dc, &kc, &gc}) t->poison();  // gap bytes keep the poison
    state.copy_from(randn(DType::f32, {slots, s.HV, s.V, s.K}, tag + "S", 0, 0.02));
    dc.copy_from(randn(act, {slots, s.HV, L, s.V}, tag + "d", 0, 0.02));
    kc.copy_from(randn(act, {slots, s.H, L, s.K}, tag + "k", 0, 1.0));
    Tensor g(DType::f32, {slots, s.HV, L, s.K});
    g.fill_uniform(seed(tag + "g"), -0.1, 0.0);
    gc.copy_from(g);
    out = Tensor(act, {s.B, 1, s.HV, s.V});
    out.poison();
    idx = index_tensor({0, 1, 2});
  }
  kparity::kda::ReplaySsmDecodeArgs args(Precision, BetaRounding br = BetaRounding::through_b_dtype) {
    return {in.mixed, in.a, in.b, A_log, dt_bias, 1.0 / 4.0, state, dc, kc, gc, out, idx, wp,
            has_ff ? std::optional<TensorView>(ff) : std::nullopt, true, lb, br};
  }
};

void per_row_flush(const std::vector<std::int64_t>& cursor, const std::vector<std::int64_t>& force,
                   const std::vector<bool>& expect_flush) {
  Replay r("perrow", false);
  r.wp = index_tensor(cursor);
  if (!force.empty()) r.ff = index_tensor(force), r.has_ff = true;
  const Tensor before(r.state);
  ref::replayssm_decode(r.args(Precision::faithful), Precision::faithful);
  for (std::int64_t b = 0; b < 3; ++b) {
    const TensorView now = r.state.view().select(0, b), was = before.view().select(0, b);
    if (expect_flush[b]) {
      EXPECT_FALSE(same_values(now, was)) << "flushed row " << b << " kept its state";
    } else {
      EXPECT_TRUE(same_values(now, was)) << "row " << b;
    }
  }
  EXPECT_TRUE(bytes_unchanged_except(before.storage(), r.state, [&](auto i) { return i[0] < 3 && expect_flush[i[0]]; }));
  EXPECT_TRUE(all_finite(r.out));
}

TEST(KdaReplayStructure, DivergentNaturalFlush) { per_row_flush({0, 2, 3}, {}, {false, false, true}); }
TEST(KdaReplayStructure, MixedForcedFlush) { per_row_flush({1, 2, 1}, {1, 0, 1}, {true, false, true}); }

// AP-K8: garbage (NaN included) at ring positions >= cursor changes nothing, bit for bit.
TEST(KdaReplayStructure, RingGarbageAtOrAfterCursorIgnored) {
  for (Precision p : {Precision::oracle, Precision::faithful})
    for (const auto& cur : {std::vector<std::int64_t>{0, 1, 3}, std::vector<std::int64_t>{2, 0, 1}}) {
      Replay clean("garbage", false), dirty("garbage", false);
      clean.wp = index_tensor(cur), dirty.wp = index_tensor(cur);
      for (std::int64_t b = 0; b < 3; ++b)
        for (std::int64_t i = cur[b]; i < 4; ++i) {
          for (std::int64_t hv = 0; hv < 4; ++hv)
            for (std::int64_t e = 0; e < 16; ++e) {
              dirty.dc.view().store(std::vector<std::int64_t>{b, hv, i, e}, NAN);
              dirty.gc.view().store(std::vector<std::int64_t>{b, hv, i, e}, NAN);
              clean.dc.view().store(std::vector<std::int64_t>{b, hv, i, e}, 0.0);
              clean.gc.view().store(std::vector<std::int64_t>{b, hv, i, e}, 0.0);
            }
          for (std::int64_t h = 0; h < 2; ++h)
            for (std::int64_t e = 0; e < 16; ++e) {
              dirty.kc.view().store(std::vector<std::int64_t>{b, h, i, e}, INFINITY);
              clean.kc.view().store(std::vector<std::int64_t>{b, h, i, e}, 0.0);
            }
        }
      ref::replayssm_decode(clean.args(p), p);
      ref::replayssm_decode(dirty.args(p), p);
      EXPECT_EQ(clean.out.storage(), dirty.out.storage());
      EXPECT_EQ(clean.state.storage(), dirty.state.storage());
      ASSERT_TRUE(all_finite(dirty.out));
      // The valid entries and the append position (rows that do not flush) agree; beyond, each
      // keeps its own fill.
      auto upto = [&](const Tensor& a, const Tensor& b) {
        bool same = true;
        each(a, [&](auto i) {
          if (i[0] < 3 && (i[2] < cur[i[0]] || (i[2] == cur[i[0]] && cur[i[0]] != 3))) same = same && a.view().load(i) == b.view().load(i);
        });
        return same;
      };
      EXPECT_TRUE(upto(clean.dc, dirty.dc));
      EXPECT_TRUE(upto(clean.kc, dirty.kc));
      EXPECT_TRUE(upto(clean.gc, dirty.gc));
    }
}

// AP-K11: slot stride HV*V*K + 257 with a storage offset (state and rings) gives the compact values
// exactly and writes nothing between slots.
TEST(KdaReplayStructure, StridedEqualsCompact) {
  for (Precision p : {Precision::oracle, Precision::faithful})
    for (const auto& cur : {std::vector<std::int64_t>{1, 3, 2}, std::vector<std::int64_t>{0, 2, 3}}) {
      Replay compact("strided", false), strided("strided", true);
      compact.wp = index_tensor(cur), strided.wp = index_tensor(cur);
      const auto s0 = strided.state.storage(), d0 = strided.dc.storage(), k0 = strided.kc.storage(),
                 g0 = strided.gc.storage();
      ref::replayssm_decode(compact.args(p), p);
      ref::replayssm_decode(strided.args(p), p);
      EXPECT_TRUE(same_values(strided.out, compact.out));
      EXPECT_TRUE(same_values(strided.state, compact.state));
      EXPECT_TRUE(same_values(strided.dc, compact.dc));
      EXPECT_TRUE(same_values(strided.kc, compact.kc));
      EXPECT_TRUE(same_values(strided.gc, compact.gc));
      auto elems = [](auto) { return true; };  // element bytes may change; gaps may not
      EXPECT_TRUE(bytes_unchanged_except(s0, strided.state, elems));
      EXPECT_TRUE(bytes_unchanged_except(d0, strided.dc, elems));
      EXPECT_TRUE(bytes_unchanged_except(k0, strided.kc, elems));
      EXPECT_TRUE(bytes_unchanged_except(g0, strided.gc, elems));
    }
}

// Oracle vs faithful on one call with fp32 I/O (so the only faithful rounding points are fp32
// arithmetic and the fp32 stores): recipe faithful_tol over the L ring entries plus the current
// token, each a K- or V-long dot. With bf16 I/O the reconstruction operands are rounded to bf16
// (B.2.4): AP-K5's 5e-4 / 1e-2 bound applies there.
TEST(KdaReplayStructure, OracleVsFaithful) {
  for (DType act : {DType::f32, DType::bf16})
    for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)})
      for (const auto& cur : {std::vector<std::int64_t>{0, 1, 3}, std::vector<std::int64_t>{2, 3, 1}}) {
        Replay o("ovf", false, act), f("ovf", false, act);
        o.lb = f.lb = lb;
        o.wp = index_tensor(cur), f.wp = index_tensor(cur);
        ref::replayssm_decode(o.args(Precision::oracle, BetaRounding::fp32), Precision::oracle);
        ref::replayssm_decode(f.args(Precision::faithful, BetaRounding::fp32), Precision::faithful);
        const Tol to = act == DType::f32 ? faithful_tol(5, 16, 16, max_abs(o.out), act) : Tol{5e-4, 1e-2};
        // State: AP-K6's fp32-state bound 2e-3 / 1e-2 when the ring operands are bf16.
        const Tol ts = act == DType::f32 ? faithful_tol(5, 16, 16, max_abs(o.state), DType::f32) : Tol{2e-3, 1e-2};
        // d ring: like out for fp32; AP-K9's 2e-3 / 1e-2 for a bf16 ring.
        const Tol td = act == DType::f32 ? faithful_tol(5, 16, 16, max_abs(o.dc), act) : Tol{2e-3, 1e-2};
        EXPECT_TRUE(close(f.out, o.out, to.atol, to.rtol));
        EXPECT_TRUE(close(f.state, o.state, ts.atol, ts.rtol));
        EXPECT_TRUE(close(f.dc, o.dc, td.atol, td.rtol));
        // g ring: fp32 1 + exp(x) errs by <= ulp(1) = 2^-23 absolute, so softplus by ~2^-23 and g by
        // A 2^-23 (A = exp(A_log) <= ~8 for A_log ~ N(0, 0.3)); plus a few relative ulps of the
        // remaining operations: atol 8 * 2^-23, rtol 8 * 2^-24.
        EXPECT_TRUE(close(f.gc, o.gc, 8 * std::ldexp(1.0, -23), 8 * std::ldexp(1.0, -24)));
        EXPECT_GT(max_abs(o.out), 0.0);
      }
}

// sglang's Triton ReplaySSM stores the k ring entry as rt(rt(k_hat, out dtype), ring dtype)
// (fused_recurrent_linear_replayssm.py @03a70bf3 line 414; measured on the H200: b = -0.255859375 =
// bf16(o) with a bf16 out and an fp32 ring). Under the tf32-dot (sglang-triton) profile the faithful
// model does the same and nothing else moves (with a bf16 out there is no TF32 operand); the oracle
// keeps the contract, k_hat rounded once. The a-priori bound then admits the second rounding, and
// without the profile it does not.
TEST(KdaReplayStructure, SglangTritonProfileRoundsTheKRingThroughOut) {
  namespace r = kparity::reference;
  const std::vector<std::int64_t> cur = {1, 2, 0};  // append rows only (L = 4: cursor 3 flushes)
  auto make = [&] {
    Replay x("kring", false, DType::bf16);
    x.kc = pool(DType::f32, x.slots, x.s.H, x.L, x.s.K, false);  // a ring wider than out
    x.kc.copy_from(randn(DType::f32, {x.slots, x.s.H, x.L, x.s.K}, "kringk", 0, 1.0));
    x.wp = index_tensor(cur);
    return x;
  };
  Replay o = make(), o_p = make(), f = make(), f_p = make();
  ref::replayssm_decode(o.args(Precision::oracle), Precision::oracle);
  ref::replayssm_decode(f.args(Precision::faithful), Precision::faithful);
  r::ErrorBounds eb, eb_p;
  {
    const r::PrecisionProfileScope profile(*r::parse_profile("sglang-triton"));
    ref::replayssm_decode(o_p.args(Precision::oracle), Precision::oracle);
    ref::replayssm_decode(f_p.args(Precision::faithful), Precision::faithful);
    Replay in = make();
    eb_p = ref::replayssm_decode_error_bound(in.args(Precision::oracle));
  }
  {
    Replay in = make();
    eb = ref::replayssm_decode_error_bound(in.args(Precision::oracle));
  }
  // The oracle does not depend on the profile; out, state and the d and g rings do not move either.
  EXPECT_EQ(o.kc.storage(), o_p.kc.storage());
  EXPECT_EQ(f.out.storage(), f_p.out.storage());
  EXPECT_EQ(f.state.storage(), f_p.state.storage());
  EXPECT_EQ(f.dc.storage(), f_p.dc.storage());
  EXPECT_EQ(f.gc.storage(), f_p.gc.storage());
  int moved = 0, beyond_plain_bound = 0;
  each(f.kc, [&](auto i) {
    const TensorView v = f.kc.view();  // the bounds are row-major over k_cache's shape
    const auto flat = static_cast<std::size_t>(((i[0] * v.size(1) + i[1]) * v.size(2) + i[2]) * v.size(3) + i[3]);
    const double fv = f.kc.view().load(i), pv = f_p.kc.view().load(i), ov = o.kc.view().load(i);
    const bool written = i[0] < 3 && i[2] == cur[static_cast<std::size_t>(i[0])];
    if (!written) {
      EXPECT_EQ(fv, pv);
      return;
    }
    // The fp32 ring held the faithful k_hat exactly: the profile's entry is its bf16 rounding.
    EXPECT_EQ(pv, round_to_dtype(fv, DType::bf16)) << flat;
    moved += pv != fv;
    const double d = std::fabs(pv - ov);
    EXPECT_LE(d, eb_p.at("k_cache")[flat]) << flat << ": the profile's bound must admit the double rounding";
    beyond_plain_bound += d > eb.at("k_cache")[flat];
  });
  EXPECT_GT(moved, 32) << "the second rounding should move most entries";
  EXPECT_GT(beyond_plain_bound, 32) << "without the profile the bound should not admit it";
}

}  // namespace
}  // namespace kdatest

namespace kdatest {
namespace {

// Upstream reads a as a.view(batch, -1) and dt_bias as dt_bias.view(-1) (C.1 #3): every contiguous
// shape with the right element count is the same call. A regression test: the reference indexed a
// (B*HV/2, 2, K)-shaped `a` as [B, HV, K] and read out of bounds (found by the hostile-mutation
// property of kparity fuzz).
TEST(KdaReplayStructure, AnyContiguousViewOfAIsTheSameCall) {
  const Shape5 s;
  const std::vector<Shape> a_shapes = {{s.B, s.HV * s.K}, {s.B, s.HV, s.K}, {s.B * s.HV, 1, s.K}, {1, s.B * s.HV, s.K}};
  const std::vector<Shape> dt_shapes = {{s.HV * s.K}, {s.HV, s.K}, {s.K, s.HV}, {1, s.HV * s.K}};
  std::optional<Tensor> first_out, first_state;
  for (std::size_t i = 0; i < a_shapes.size(); ++i) {
    Replay r("aview", false);
    r.wp = index_tensor({0, 2, 3});  // one flush row, two append rows with ring entries
    auto args = r.args(Precision::faithful);
    args.a = TensorView(r.in.a.view().data, r.in.a.dtype(), a_shapes[i]);
    args.dt_bias = TensorView(r.dt_bias.view().data, r.dt_bias.dtype(), dt_shapes[i]);
    ref::replayssm_decode(args, Precision::faithful);
    SCOPED_TRACE("a " + kparity::py_tuple(a_shapes[i]) + ", dt_bias " + kparity::py_tuple(dt_shapes[i]));
    ASSERT_TRUE(all_finite(r.out));
    if (!first_out) {
      first_out = r.out, first_state = r.state;
      continue;
    }
    EXPECT_TRUE(same_values(r.out, *first_out));
    EXPECT_TRUE(same_values(r.state, *first_state));
  }
}

}  // namespace
}  // namespace kdatest
