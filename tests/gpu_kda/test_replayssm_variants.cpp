// Both KDA decode ops through LaunchOptions::decode_variant 1 (established launches) and 2 (PDL;
// packed: the small-batch instance, state loads issued before the token preamble, two passes in
// flight): the same bytes in every written tensor, eagerly and as a replayed CUDA graph, at serving
// shapes (B = 1..16, HV = 32, K = V = 128) and at a batch past one wave (issue 31).
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
  // B = 8 and 16 at HV = 32: packed's small-batch instance with 4 and 8 passes of 16 rows (fp32; 32
  // rows in bf16), both register buffers cycled. B = 160, HV = 4: 640 (row, head) pairs are more than
  // one wave of it, so variant 2 is the established instance launched with PDL.
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
                                                              std::int64_t{16}, std::int64_t{160}),
                                            ::testing::Values(DType::f32, DType::bf16)));

// Off the fast layouts: a padded, offset state (element-by-element loads and stores), other head
// dims and dtypes, a padding row; both ops, both variants, eager.
TEST(DecodeVariantsLayouts, StridedStatesSameBytes) {
  KPARITY_REQUIRE_GPU();
  for (DType state : {DType::f32, DType::bf16, DType::f16})
    for (const auto& [K, V] : {std::pair<std::int64_t, std::int64_t>{64, 32}, {16, 256}, {256, 64}}) {
      DecodeCfg c = serving_cfg(3, 8, state);
      c.H = 4; c.K = K; c.V = V; c.slot_pad = 33; c.state_offset = 3;
      HostDecode h(c, 3300 + K + V);
      h.garbage_rings(3400 + K);
      for (DecodeOp op : {DecodeOp::packed, DecodeOp::replay}) {
        const std::string tag = std::string(op == DecodeOp::packed ? "packed" : "replayssm") + " K=" +
                                std::to_string(K) + " V=" + std::to_string(V) + " state=" + std::string(dtype_name(state));
        EXPECT_TRUE(same_world(run_decode_variant(h, op, 1, false), run_decode_variant(h, op, 2, false), tag));
      }
    }
}

}  // namespace
}  // namespace kparity::gpu_test
