// Both KDA decode ops through LaunchOptions::decode_variant 1 (established launches) and 2 (PDL;
// packed: state loads issued before the token preamble, two passes in flight): the same bytes in
// every written tensor, eagerly and as a replayed CUDA graph, at serving shapes (B = 1..8, HV = 32,
// K = V = 128) and at a batch large enough for whole-head V tiles of many passes (issue 31).
#include <gtest/gtest.h>

#include "decode_variant_run.hpp"

namespace kparity::gpu_test {
namespace {

DecodeCfg serving_cfg(std::int64_t B, std::int64_t HV, DType state) {
  DecodeCfg c;
  c.B = B; c.H = HV; c.HV = HV; c.K = 128; c.V = 128; c.L = 16; c.slots = B + 3; c.state = state;
  c.a3d = false; c.with_force = false;
  c.idx.clear();
  c.write_pos.clear();
  for (std::int64_t r = 0; r < B; ++r) {
    c.idx.push_back(r == 1 ? -1 : (r * 5 + 2) % c.slots);  // row 1 pads when B > 1
    c.write_pos.push_back((r * 5 + 7) % 16);               // rows flush at cursor 15, the others append
  }
  return c;
}

class DecodeVariants : public ::testing::TestWithParam<std::tuple<DecodeOp, std::int64_t, DType>> {};

TEST_P(DecodeVariants, SameBytesEagerAndGraph) {
  KPARITY_REQUIRE_GPU();
  const auto [op, B, state] = GetParam();
  // B = 160, HV = 4: 640 (row, head) pairs fill the resident slots, so the V tile is the whole head
  // (packed: 8 passes of 16 rows in fp32, both register buffers cycled).
  const DecodeCfg c = serving_cfg(B, B >= 64 ? 4 : 32, state);
  HostDecode h(c, 3100 + B);
  h.garbage_rings(3200 + B);
  const std::string tag = std::string(op == DecodeOp::packed ? "packed" : "replayssm") + " B=" + std::to_string(B) +
                          " state=" + std::string(dtype_name(state));
  const HostDecode est = run_decode_variant(h, op, 1, false);
  const HostDecode fast = run_decode_variant(h, op, 2, false);
  EXPECT_TRUE(nonzero(est.out.view())) << tag;
  EXPECT_TRUE(same_world(est, fast, tag + " variant 2 vs 1"));
  EXPECT_TRUE(same_world(est, run_decode_variant(h, op, 1, true), tag + " graph, variant 1"));
  EXPECT_TRUE(same_world(est, run_decode_variant(h, op, 2, true), tag + " graph, variant 2"));
  EXPECT_TRUE(same_world(fast, run_decode_variant(h, op, 2, false), tag + " variant 2 run to run"));
}

INSTANTIATE_TEST_SUITE_P(Serving, DecodeVariants,
                         ::testing::Combine(::testing::Values(DecodeOp::packed, DecodeOp::replay),
                                            ::testing::Values(std::int64_t{1}, std::int64_t{2}, std::int64_t{8},
                                                              std::int64_t{160}),
                                            ::testing::Values(DType::f32, DType::bf16)));

}  // namespace
}  // namespace kparity::gpu_test
