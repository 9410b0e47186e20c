#pragma once
// Comparisons of kernel results against the references (testing guide 1.1, 1.3, 1.6, 1.8).
#include <gtest/gtest.h>

#include <string>

#include "kparity/core/tensor.hpp"

namespace kparity::gpu_test {

struct Tol {
  double atol, rtol;
  // Also accept a difference of up to this many storage ulps of the reference (16-bit dtypes
  // only): kda.md A.10 leaves the reduction order open, so an fp32 value that straddles a bf16/f16
  // rounding boundary may round either way. The oracle rule still bounds the error.
  int ulps = 0;
};

// The op's acceptance tolerance against the faithful reference (elementwise atol + rtol*|ref|),
// and the default numeric rule against the oracle: max|ker - ref64| <= F * max|ref_lp - ref64|
// + 2 * noise(ref64). Non-finite elements must match in class. Reports per guide 1.8.
::testing::AssertionResult close(const TensorView& ker, const TensorView& ref_lp, const TensorView& ref64, Tol accept,
                                 double F, const std::string& what);
// Only the acceptance rule (kernel-vs-kernel or when no oracle run exists).
::testing::AssertionResult close_to(const TensorView& ker, const TensorView& ref, Tol tol, const std::string& what);
// Values equal, +0 == -0 (exact-arithmetic recipe 1.4).
::testing::AssertionResult values_equal(const TensorView& a, const TensorView& b, const std::string& what);
// Byte equality of the elements of two same-shaped views (memory identity).
::testing::AssertionResult bytes_equal(const TensorView& a, const TensorView& b, const std::string& what);
// Any element non-zero (guards "the kernel wrote nothing").
bool nonzero(const TensorView& t);

}  // namespace kparity::gpu_test
