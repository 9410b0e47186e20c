// kda/packed_decode (spec B.1): padding rows and untouched slots (AP-K2, K3), GQA mapping (A.1),
// exact-arithmetic agreement of the two precisions, oracle vs faithful.
#include "kda_test_util.hpp"

namespace kdatest {
namespace {

// Upstream's packed-decode contract test (D.1) at K = V = 16: pool 7, indices [5, -1, 2].
TEST(KdaPacked, PaddingRowAndUntouchedSlots) {
  for (DType st : {DType::f32, DType::bf16, DType::f16})
    for (bool strided : {false, true})
      for (DType it : {DType::i32, DType::i64})
        for (Precision p : {Precision::oracle, Precision::faithful}) {
          SCOPED_TRACE(std::string(dtype_name(st)) + (strided ? " strided " : " compact ") + std::string(dtype_name(it)));
          Packed k({3, 2, 4, 16, 16}, "pad", DType::bf16, st, 7, strided);
          k.idx = index_tensor({5, -1, 2}, it);
          const Tensor before(k.state);
          ref::packed_decode(k.args(), p);
          EXPECT_TRUE(same_values(k.out.view().select(0, 1), Tensor(DType::bf16, {1, 4, 16}).view()));
          EXPECT_TRUE(all_finite(k.out));
          EXPECT_TRUE(bytes_unchanged_except(before.storage(), k.state, [](auto i) { return i[0] == 5 || i[0] == 2; }));
          for (std::int64_t slot : {5, 2})
            EXPECT_FALSE(same_values(k.state.view().select(0, slot), before.view().select(0, slot))) << slot;
        }
}

// A.1: value head hv reads q/k head hv / G. Replicating q/k per value head (H' = HV) must give
// the same numbers bit for bit.
TEST(KdaPacked, GqaMatchesReplicatedHeads) {
  for (std::int64_t G : {1, 2, 4})
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      const Shape5 s{3, 2, 2 * G, 16, 16}, r{3, 2 * G, 2 * G, 16, 16};
      Packed g(s, "gqa" + std::to_string(G), DType::bf16, DType::f32, 4, false);
      Packed rep(r, "gqa" + std::to_string(G), DType::bf16, DType::f32, 4, false);
      rep.in.a = g.in.a, rep.in.b = g.in.b, rep.A_log = g.A_log, rep.dt_bias = g.dt_bias, rep.state = g.state;
      for (std::int64_t b = 0; b < s.B; ++b) {
        auto src = [&](std::int64_t c) { return g.in.mixed.view().at({b, c}); };
        auto dst = [&](std::int64_t c, double v) { rep.in.mixed.view().store(std::vector<std::int64_t>{b, c}, v); };
        for (std::int64_t hv = 0; hv < s.HV; ++hv)
          for (std::int64_t c = 0; c < s.K; ++c) {
            dst(hv * s.K + c, src((hv / G) * s.K + c));
            dst(r.H * s.K + hv * s.K + c, src(s.H * s.K + (hv / G) * s.K + c));
          }
        for (std::int64_t c = 0; c < s.HV * s.V; ++c) dst(2 * r.H * s.K + c, src(2 * s.H * s.K + c));
      }
      g.idx = rep.idx = index_tensor({3, 0, 1});
      ref::packed_decode(g.args(), p);
      ref::packed_decode(rep.args(), p);
      EXPECT_TRUE(same_values(g.out, rep.out)) << "G=" << G;
      EXPECT_TRUE(same_values(g.state, rep.state)) << "G=" << G;
    }
}

// testing.md 1.4: on exact inputs the two precisions agree bit for bit.
TEST(KdaPacked, ExactArithmeticOracleEqualsFaithful) {
  for (DType st : {DType::f32, DType::bf16})
    for (std::int64_t G : {1, 2, 4}) {
      Packed o({3, 2, 2 * G, 16, 16}, "exact", DType::f32, st, 4, false, true);
      Packed f({3, 2, 2 * G, 16, 16}, "exact", DType::f32, st, 4, true, true);
      o.idx = f.idx = index_tensor({2, -1, 0});
      ref::packed_decode(o.args(), Precision::oracle);
      ref::packed_decode(f.args(), Precision::faithful);
      EXPECT_TRUE(same_values(f.out, o.out));
      EXPECT_TRUE(same_values(f.state, o.state));
      EXPECT_GT(max_abs(o.out), 0.0) << "degenerate exact case";
    }
}

// Oracle vs faithful on one step: recipe faithful_tol(1 step) plus one storage ulp of a 16-bit
// destination (testing.md 1.1: the oracle is passed as `expected`).
TEST(KdaPacked, OracleVsFaithful) {
  for (DType act : {DType::f32, DType::bf16, DType::f16})
    for (DType st : {DType::f32, DType::bf16, DType::f16})
      for (std::optional<double> lb : {std::optional<double>(), std::optional<double>(-5.0)})
        for (bool l2 : {false, true}) {
          SCOPED_TRACE(std::string(dtype_name(act)) + "/" + std::string(dtype_name(st)) + (lb ? " bounded" : " softplus") +
                       (l2 ? " l2" : ""));
          Packed o({3, 2, 4, 16, 16}, "ovf", act, st, 4, false), f({3, 2, 4, 16, 16}, "ovf", act, st, 4, false);
          o.lb = f.lb = lb, o.l2 = f.l2 = l2;
          o.idx = f.idx = index_tensor({1, 3, 0});
          ref::packed_decode(o.args(), Precision::oracle);
          ref::packed_decode(f.args(), Precision::faithful);
          const Tol to = faithful_tol(1, 16, 16, max_abs(o.out), act), ts = faithful_tol(1, 16, 16, max_abs(o.state), st);
          EXPECT_TRUE(close(f.out, o.out, to.atol, to.rtol));
          EXPECT_TRUE(close(f.state, o.state, ts.atol, ts.rtol));
          EXPECT_GT(max_abs(o.out), 0.0);
        }
}

}  // namespace
}  // namespace kdatest
