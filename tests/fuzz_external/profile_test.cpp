// Precision profiles (reference/precision_profile.hpp): TF32 truncation, and the tf32-dot
// (sglang-triton) profile of the ReplaySSM reference as the differential rule uses it. A kernel whose
// reconstruction dot runs in TF32, or that rounds the k ring entry through out's dtype (here: the
// faithful reference with the profile switched on inside the backend), fails the rule under the
// default profile and passes under tf32-dot, while a planted bug still fails there.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/planted_fault.hpp"
#include "kparity/reference/precision_profile.hpp"
#include "profile_property.hpp"

namespace kparity::fuzz {
namespace {

using reference::PrecisionProfile;

TEST(PrecisionProfile, TruncatesToTf32) {
  using reference::truncate_to_tf32;
  EXPECT_EQ(truncate_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f);  // below the 10th mantissa bit
  EXPECT_EQ(truncate_to_tf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(truncate_to_tf32(-1.9999999f), -(2.0f - std::ldexp(1.0f, -10)));  // toward zero
  EXPECT_TRUE(std::isnan(truncate_to_tf32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(truncate_to_tf32(-std::numeric_limits<float>::infinity()), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(reference::parse_profile("tf32-dot"), PrecisionProfile::tf32_dot);
  EXPECT_EQ(reference::parse_profile("sglang-triton"), PrecisionProfile::tf32_dot);  // what it stands for
  EXPECT_EQ(reference::profile_name(PrecisionProfile::tf32_dot), "tf32-dot");
  EXPECT_EQ(reference::profile_name(PrecisionProfile::faithful), "faithful");
  EXPECT_FALSE(reference::parse_profile("tf32").has_value());
}

TEST(PrecisionProfile, ScopesNestAndOnlyMoveFp32DotOperands) {
  EXPECT_EQ(reference::precision_profile(), PrecisionProfile::faithful);
  const float x = 1.0f + std::ldexp(1.0f, -12);
  {
    const reference::PrecisionProfileScope s(PrecisionProfile::tf32_dot);
    EXPECT_EQ(reference::dot_operand(x, DType::f32), 1.0f);
    EXPECT_EQ(reference::dot_operand(x, DType::bf16), 1.0f);  // bf16 rounding, as without the profile
    EXPECT_EQ(reference::dot_operand(static_cast<double>(x), DType::f32), static_cast<double>(x));  // the oracle
    {
      const reference::PrecisionProfileScope inner(PrecisionProfile::faithful);
      EXPECT_EQ(reference::dot_operand(x, DType::f32), x);
    }
    EXPECT_EQ(reference::precision_profile(), PrecisionProfile::tf32_dot);
  }
  EXPECT_EQ(reference::precision_profile(), PrecisionProfile::faithful);
}

// The faithful ReplaySSM reference with its dot in TF32 (and optionally a planted bug): a stand-in
// for sglang's Triton kernel with fp32 I/O.
Backend tf32_kernel(reference::PlantedFault fault = reference::PlantedFault::none) {
  return Backend{"tf32-kernel", {"kda/replayssm_decode"}, [fault](Call& c) {
                   const reference::PrecisionProfileScope profile(PrecisionProfile::tf32_dot);
                   const reference::PlantedFaultScope planted(fault);
                   ops::run_reference(c.op, c.bag(), reference::Precision::faithful, c.options);
                 }};
}

PropertyOutcome differential(const Backend& b, PrecisionProfile profile, int cases) {
  return test::profiled_differential(b, "kda/replayssm_decode", profile, cases);
}

TEST(PrecisionProfile, Tf32KernelFailsFaithfulPassesTf32Dot) {
  const PropertyOutcome strict = differential(tf32_kernel(), PrecisionProfile::faithful, 300);
  ASSERT_FALSE(strict.passed) << "a TF32 reconstruction should break the fp32 faithful bound";
  EXPECT_EQ(failure_class_of(strict.message), FailureClass::wrong_values) << strict.message;
  const PropertyOutcome profiled = differential(tf32_kernel(), PrecisionProfile::tf32_dot, 300);
  EXPECT_TRUE(profiled.passed) << profiled.message;
}

// sglang's k ring store alone: k_hat rounded to out's dtype, then to the ring's (line 414 of
// fused_recurrent_linear_replayssm.py @03a70bf3). With a 16-bit out the profile moves nothing else (no
// TF32 operand), so this backend is the faithful reference under the profile there and the plain
// faithful reference with an fp32 out: the double rounding is its only difference from `faithful`.
Backend k_ring_through_out_kernel() {
  return Backend{"k-ring-through-out", {"kda/replayssm_decode"}, [](Call& c) {
                   const bool narrow_out = c.at("out").dtype() != DType::f32;
                   const reference::PrecisionProfileScope profile(narrow_out ? PrecisionProfile::tf32_dot
                                                                             : PrecisionProfile::faithful);
                   ops::run_reference(c.op, c.bag(), reference::Precision::faithful, c.options);
                 }};
}

TEST(PrecisionProfile, KRingThroughOutFailsFaithfulPassesSglangTriton) {
  const PropertyOutcome strict = differential(k_ring_through_out_kernel(), PrecisionProfile::faithful, 300);
  ASSERT_FALSE(strict.passed) << "rounding k through a bf16/f16 out before an fp32 ring should break the bound";
  EXPECT_EQ(failure_class_of(strict.message), FailureClass::wrong_values) << strict.message;
  EXPECT_NE(strict.message.find("k_cache"), std::string::npos) << strict.message;
  const PropertyOutcome profiled =
      differential(k_ring_through_out_kernel(), *reference::parse_profile("sglang-triton"), 300);
  EXPECT_TRUE(profiled.passed) << profiled.message;
}

TEST(PrecisionProfile, PlantedBugStillFailsUnderTf32Dot) {
  const PropertyOutcome o =
      differential(tf32_kernel(reference::PlantedFault::inclusive_suffix_decay), PrecisionProfile::tf32_dot, 300);
  ASSERT_FALSE(o.passed);
  EXPECT_EQ(failure_class_of(o.message), FailureClass::wrong_values) << o.message;
}

}  // namespace
}  // namespace kparity::fuzz
