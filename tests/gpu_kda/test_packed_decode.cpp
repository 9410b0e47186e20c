// Packed decode kernel vs the faithful reference (spec kda.md D.4 AP-K1..K4) and random shapes.
#include <gtest/gtest.h>

#include "compare.hpp"
#include "decode_case.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/reference/kda.hpp"
#include "tolerances.hpp"

namespace kparity::gpu_test {
namespace {
using reference::Precision;
namespace kk = kernels::kda;

const kernels::LaunchOptions kSync{ValidateOptions::upstream(), true};

// One call on the GPU and on both references from the same starting tensors.
struct PackedRun {
  HostDecode lp, orc, ker;
  explicit PackedRun(const HostDecode& h) : lp(h), orc(h), ker(h) {
    DevDecode dev(h);
    dev.out.poison();
    const Status s = kk::packed_decode(dev.packed_args(h), nullptr, kSync);
    EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
    dev.download_all(ker);
    reference::kda::packed_decode(lp.packed_args(), Precision::faithful);
    reference::kda::packed_decode(orc.packed_args(), Precision::oracle);
  }
};

void expect_packed_matches(const PackedRun& r, const DecodeCfg& c, const std::string& tag) {
  const double F = tol::factor(c.lower_bound.has_value());
  EXPECT_TRUE(close(r.ker.out, r.lp.out, r.orc.out, tol::kPackedOut, F, tag + " out"));
  EXPECT_TRUE(close(r.ker.state, r.lp.state, r.orc.state, tol::packed_state(c.state), F, tag + " state"));
  bool any_row = false;  // all-padding batches legitimately write only zeros
  for (std::int64_t i = 0; i < r.ker.idx.numel(); ++i) any_row |= r.ker.idx.view().load_int_flat(i) >= 0;
  if (any_row) EXPECT_TRUE(nonzero(r.ker.out.view())) << tag;
}

class PackedContract : public ::testing::TestWithParam<std::tuple<DType, bool>> {};

TEST_P(PackedContract, MatchesReferenceAndLeavesOtherSlotsAlone) {
  KPARITY_REQUIRE_GPU();
  const auto [state, bounded] = GetParam();
  DecodeCfg c;  // upstream D.1: B=3, H=2, HV=4, K=V=128, pool 7, indices [5, -1, 2]
  c.state = state; c.slots = 7; c.idx = {5, -1, 2}; c.a3d = false; c.with_force = false;
  if (bounded) c.lower_bound = -5.0;
  const HostDecode h(c, 101);
  const PackedRun r(h);
  expect_packed_matches(r, c, "packed");
  for (std::int64_t j = 0; j < c.HV * c.V; ++j)  // AP-K2: padding row 1 exactly zero
    ASSERT_EQ(r.ker.out.view().select(0, 1).load_flat(j), 0.0) << "padding row element " << j;
  for (std::int64_t s : {0, 1, 3, 4, 6})  // AP-K3: untouched slots bit-identical
    EXPECT_TRUE(bytes_equal(r.ker.state.view().select(0, s), h.state.view().select(0, s), "slot " + std::to_string(s)));
}

INSTANTIATE_TEST_SUITE_P(States, PackedContract,
                         ::testing::Combine(::testing::Values(DType::f32, DType::bf16, DType::f16), ::testing::Bool()));

// Random shapes, dtypes and layouts; each case's seed is in the failure message.
TEST(PackedDecode, RandomShapesAndLayouts) {
  KPARITY_REQUIRE_GPU();
  const std::int64_t dims[] = {16, 32, 64, 128, 256};
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  for (std::uint64_t seed = 1; seed <= 16; ++seed) {
    Rng rng(seed * 7919);
    DecodeCfg c;
    c.K = dims[rng.integer(0, 4)];
    c.V = dims[rng.integer(0, 4)];
    c.H = rng.integer(1, 3);
    c.HV = c.H * rng.integer(1, 3);
    c.B = rng.integer(1, 9);
    c.slots = c.B + 2;
    c.state = floats[rng.integer(0, 2)];
    c.act = floats[rng.integer(0, 2)];
    c.out = c.act;
    c.a3d = false; c.with_force = false;
    c.l2norm = rng.integer(0, 1);
    if (rng.integer(0, 1)) c.lower_bound = -5.0;
    if (rng.integer(0, 1)) { c.slot_pad = rng.integer(1, 300); c.state_offset = rng.integer(0, 7); }
    c.idx.clear();
    for (std::int64_t r = 0; r < c.B; ++r) c.idx.push_back(rng.integer(0, 4) == 0 ? -1 : (r + 2) % c.slots);
    const HostDecode h(c, seed);
    const PackedRun run(h);
    expect_packed_matches(run, c, "seed " + std::to_string(seed) + " K=" + std::to_string(c.K) + " V=" +
                                      std::to_string(c.V) + " HV=" + std::to_string(c.HV) + " state=" +
                                      std::string(dtype_name(c.state)) + " act=" + std::string(dtype_name(c.act)));
  }
}

// Recipe 1.4: g = 0 (bounded gate, lower_bound 0), beta 1/2, no norm, dyadic q/k/v/state: every
// intermediate is exact, so kernel, faithful and oracle agree exactly.
TEST(PackedDecode, ExactArithmeticInputsGiveExactResults) {
  KPARITY_REQUIRE_GPU();
  DecodeCfg c;
  c.state = DType::f32; c.act = DType::f32; c.out = DType::f32; c.K = 16; c.V = 32; c.H = 2; c.HV = 4;
  c.B = 4; c.slots = 6; c.idx = {3, -1, 0, 5}; c.l2norm = false; c.lower_bound = 0.0; c.a3d = false;
  c.with_force = false;
  HostDecode h(c, 5);
  h.qkv.fill_int(11, -3, 3);
  h.state.fill_int(12, -2, 2);
  h.b.fill(0.0);
  const PackedRun r(h);
  EXPECT_TRUE(values_equal(r.ker.out, r.orc.out, "exact out"));
  EXPECT_TRUE(values_equal(r.ker.state, r.orc.state, "exact state"));
  EXPECT_TRUE(values_equal(r.lp.out, r.orc.out, "faithful exact out (recipe self-check)"));
}

}  // namespace
}  // namespace kparity::gpu_test
