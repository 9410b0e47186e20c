// The kparity-chunk precision profile (reference/precision_profile.hpp, reference/kda/chunk_kparity.cpp)
// under the fuzzer's differential rule, with its model standing in for kparity's chunked kernel (as
// fla_chunk_profile_test.cpp does for fla-chunk): the model passes under its own profile, and a
// planted bug in it (each sequence's last token dropped, as a chunk kernel whose row mask is one short
// would do) still fails there. Its TF32 operands break the default profile's fp32 bound.
#include <gtest/gtest.h>

#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/reference/precision_profile.hpp"
#include "profile_property.hpp"

namespace kparity::fuzz {
namespace {

using reference::PrecisionProfile;

// The kparity-chunk model as a kernel (`drop_last`: the planted bug of chunk_model_kernel).
Backend kparity_chunk_kernel(bool drop_last) {
  return test::chunk_model_kernel(drop_last ? "kparity-chunk-drop-last" : "kparity-chunk-model",
                                  PrecisionProfile::kparity_chunk, drop_last);
}

PropertyOutcome differential(const Backend& b, PrecisionProfile profile, int cases) {
  return test::profiled_differential(b, "kda/chunk", profile, cases);
}

TEST(KparityChunkProfile, ModelPassesItsProfile) {
  const PropertyOutcome o = differential(kparity_chunk_kernel(false), PrecisionProfile::kparity_chunk, 300);
  EXPECT_TRUE(o.passed) << o.message;
}

// NaN, +-inf, -0 and subnormals among the inputs: the chunked form's special values take the
// recurrence's classes (the rule requires the oracle's class wherever it is non-finite).
TEST(KparityChunkProfile, ModelPassesItsProfileWithSpecialValues) {
  const PropertyOutcome o = test::profiled_differential(kparity_chunk_kernel(false), "kda/chunk",
                                                       PrecisionProfile::kparity_chunk, 300, "differential-special-values");
  EXPECT_TRUE(o.passed) << o.message;
}

// Kernel-sized shapes: K and V up to 256, sequences of 31-65 tokens (two to five chunks).
TEST(KparityChunkProfile, ModelPassesItsProfileAtKernelSizes) {
  const PropertyOutcome o = test::profiled_differential(kparity_chunk_kernel(false), "kda/chunk",
                                                       PrecisionProfile::kparity_chunk, 20, "differential", true);
  EXPECT_TRUE(o.passed) << o.message;
}

TEST(KparityChunkProfile, ModelFailsTheFp32Recurrence) {
  const PropertyOutcome o = differential(kparity_chunk_kernel(false), PrecisionProfile::faithful, 300);
  ASSERT_FALSE(o.passed) << "TF32 operands should break the recurrence's fp32 bound";
  EXPECT_EQ(failure_class_of(o.message), FailureClass::wrong_values) << o.message;
}

TEST(KparityChunkProfile, DroppedLastTokenStillFails) {
  const PropertyOutcome o = differential(kparity_chunk_kernel(true), PrecisionProfile::kparity_chunk, 300);
  ASSERT_FALSE(o.passed);
  EXPECT_EQ(failure_class_of(o.message), FailureClass::wrong_values) << o.message;
}

}  // namespace
}  // namespace kparity::fuzz
