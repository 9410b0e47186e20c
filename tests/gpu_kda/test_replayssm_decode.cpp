// ReplaySSM decode kernel vs the references: spec kda.md D.4 AP-K2, K3, K5, K6, K9, K14, and
// random shapes/layouts under the cursor protocol.
#include <gtest/gtest.h>

#include "replay_run.hpp"

namespace kparity::gpu_test {
namespace {

struct ContractCfg {
  DType state;
  std::optional<double> lb;
  std::int64_t HV;
};

class ReplayContract : public ::testing::TestWithParam<ContractCfg> {};

// Upstream D.1 "ReplaySSM contract": 7 steps, forced flush on all rows at step 2, cursor sequence
// 0,1,2(forced),0,1,2,3(natural); padding row 1; never-referenced slot 4 bit-identical.
TEST_P(ReplayContract, SevenStepsWithForcedAndNaturalFlush) {
  KPARITY_REQUIRE_GPU();
  const ContractCfg p = GetParam();
  DecodeCfg c;
  c.state = p.state; c.lower_bound = p.lb; c.HV = p.HV; c.slots = 5; c.idx = {3, -1, 1};
  c.ring = p.state;  // upstream: zero rings in the state dtype
  HostDecode h(c, 202);
  h.d.fill(0.0); h.k.fill(0.0); h.g.fill(0.0);
  ReplayWorlds w(h);
  for (int step = 0; step < 7; ++step) {
    for (HostDecode* x : {&w.lp, &w.orc, &w.ker})
      for (std::int64_t r = 0; r < c.B; ++r) x->ff.view().store_flat(r, step == 2 ? 1.0 : 0.0);
    std::vector<std::int64_t> cur;
    for (std::int64_t r = 0; r < c.B; ++r) cur.push_back(w.lp.wp.view().load_int_flat(r));
    const auto flushed = w.step(300 + step);
    w.expect_step_matches(flushed, cur, "step " + std::to_string(step));
    w.advance();
  }
  const auto slot4 = [](const Tensor& t) { return t.view().select(0, 4); };
  EXPECT_TRUE(bytes_equal(slot4(w.ker.state), slot4(h.state), "slot 4 state"));
  EXPECT_TRUE(bytes_equal(slot4(w.ker.d), slot4(h.d), "slot 4 d ring"));
  EXPECT_TRUE(bytes_equal(slot4(w.ker.k), slot4(h.k), "slot 4 k ring"));
  EXPECT_TRUE(bytes_equal(slot4(w.ker.g), slot4(h.g), "slot 4 g ring"));
}

INSTANTIATE_TEST_SUITE_P(Upstream, ReplayContract,
                         ::testing::Values(ContractCfg{DType::f32, std::nullopt, 4}, ContractCfg{DType::bf16, std::nullopt, 4},
                                           ContractCfg{DType::bf16, -5.0, 4}, ContractCfg{DType::bf16, std::nullopt, 16},
                                           ContractCfg{DType::f16, -5.0, 16}));

// Upstream D.1 per-row flush cases with garbage-filled rings; non-flushed rows' state untouched.
TEST(ReplaySsm, PerRowFlushDecisions) {
  KPARITY_REQUIRE_GPU();
  struct Case { const char* name; std::vector<std::int64_t> wp, ff; };
  for (const Case& k : {Case{"divergent-natural-flush", {0, 2, 3}, {0, 0, 0}},
                        Case{"mixed-forced-flush", {1, 2, 1}, {1, 0, 1}}}) {
    DecodeCfg c;
    c.slots = 3; c.idx = {0, 1, 2}; c.state_std = 0.02; c.write_pos = k.wp;
    HostDecode h(c, 303);
    h.garbage_rings(304);
    for (std::int64_t r = 0; r < 3; ++r) h.ff.view().store_flat(r, double(k.ff[r]));
    ReplayWorlds w(h);
    const auto flushed = w.step(305);
    w.expect_step_matches(flushed, k.wp, k.name);
    for (std::int64_t r = 0; r < 3; ++r)
      if (flushed[r]) EXPECT_FALSE(bytes_equal(w.ker.state.view().select(0, r), h.state.view().select(0, r), "flushed"));
  }
}

// AP-K14: beta rounding through b's dtype vs fp32 (adapted from upstream D.3).
TEST(ReplaySsm, BetaRoundingFollowsTheOption) {
  KPARITY_REQUIRE_GPU();
  for (auto mode : {kparity::kda::BetaRounding::fp32, kparity::kda::BetaRounding::through_b_dtype}) {
    DecodeCfg c;
    c.B = 1; c.H = 1; c.HV = 1; c.K = 16; c.V = 16; c.L = 1; c.slots = 1; c.l2norm = false;
    c.lower_bound = 0.0; c.beta_rounding = mode; c.state_std = 0.0; c.out = DType::f32; c.ring = DType::f32;
    HostDecode h(c, 1);
    h.state.fill(0.0);
    h.qkv.fill(0.0);
    h.qkv.view().store_flat(16, 1.0);  // k[0] = 1
    h.qkv.view().store_flat(32, 1.0);  // v[0] = 1
    h.b.fill(0.5);
    DevDecode dev(h);
    const Status s = kernels::kda::replayssm_decode(dev.replay_args(h), nullptr, kSyncLaunch);
    ASSERT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
    HostDecode got = h;
    dev.download_all(got);
    const double expect = mode == kparity::kda::BetaRounding::fp32 ? 0.622459352016449 : 0.62109375;
    EXPECT_NEAR(got.state.view().at({0, 0, 0, 0}), expect, 1e-6);
  }
}

// Random shapes, dtypes, GQA groups, ring lengths, strided state and rings, padding rows, divergent
// cursors and forced flushes, 4 protocol steps each.
TEST(ReplaySsm, RandomShapesAndLayouts) {
  KPARITY_REQUIRE_GPU();
  const std::int64_t dims[] = {16, 32, 64, 128, 256};
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    Rng rng(seed * 104729);
    DecodeCfg c;
    c.K = dims[rng.integer(0, 4)]; c.V = dims[rng.integer(0, 4)];
    c.H = rng.integer(1, 3); c.HV = c.H * rng.integer(1, 3); c.B = rng.integer(1, 7); c.slots = c.B + 1;
    c.L = rng.integer(1, 20);
    c.state = floats[rng.integer(0, 2)]; c.act = floats[rng.integer(0, 2)]; c.out = c.act;
    c.ring = floats[rng.integer(0, 2)];
    c.l2norm = rng.integer(0, 1); c.a3d = rng.integer(0, 1);
    if (rng.integer(0, 1)) c.lower_bound = -5.0;
    if (rng.integer(0, 1)) { c.slot_pad = rng.integer(1, 300); c.state_offset = rng.integer(0, 7); }
    if (rng.integer(0, 1)) c.ring_pad = rng.integer(1, 50);
    c.idx.clear(); c.write_pos.clear();
    for (std::int64_t r = 0; r < c.B; ++r) {
      c.idx.push_back(rng.integer(0, 4) == 0 ? -1 : (r + 1) % c.slots);
      c.write_pos.push_back(0);
    }
    HostDecode h(c, seed);
    h.d.fill(0.0); h.k.fill(0.0); h.g.fill(0.0);
    ReplayWorlds w(h);
    const std::string tag = "seed " + std::to_string(seed) + " K=" + std::to_string(c.K) + " V=" + std::to_string(c.V) +
                            " H=" + std::to_string(c.H) + " HV=" + std::to_string(c.HV) + " L=" + std::to_string(c.L) +
                            " state=" + std::string(dtype_name(c.state)) + " act=" + std::string(dtype_name(c.act)) +
                            " ring=" + std::string(dtype_name(c.ring));
    for (int step = 0; step < 4; ++step) {
      for (HostDecode* x : {&w.lp, &w.orc, &w.ker})
        for (std::int64_t r = 0; r < c.B; ++r) x->ff.view().store_flat(r, (seed + step + r) % 5 == 0 ? 1.0 : 0.0);
      std::vector<std::int64_t> cur;
      for (std::int64_t r = 0; r < c.B; ++r) cur.push_back(w.lp.wp.view().load_int_flat(r));
      const auto flushed = w.step(seed * 100 + step);
      w.expect_step_matches(flushed, cur, tag + " step " + std::to_string(step));
      w.advance();
    }
  }
}

}  // namespace
}  // namespace kparity::gpu_test
