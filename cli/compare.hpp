#pragma once
// Comparison of `kparity run` results against expected.<name> tensors (recipe in README,
// "Comparing against expected tensors").
#include <cstdint>
#include <string>
#include <string_view>

#include "kparity/core/tensor_view.hpp"

namespace kparity::cli {

struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

// The op's acceptance tolerance for that tensor (testing guide 1.7), raised to torch.testing's
// default for the loosest float dtype involved; exact for integer tensors.
// `stored` is the argument's dtype in the dump, `expected` the expected tensor's.
Tolerance documented_tolerance(std::string_view op, std::string_view name, DType stored, DType expected);

struct Comparison {
  std::int64_t count = 0;
  std::int64_t mismatched = 0;
  double max_abs = 0.0;  // over elements finite on both sides
  double max_rel = 0.0;  // |got − expected| / |expected| over finite, nonzero expected
  std::string problem;   // shape mismatch etc.; non-empty means fail
  bool pass() const noexcept { return problem.empty() && mismatched == 0; }
};

// |got − expected| ≤ atol + rtol·|expected| elementwise; NaN matches NaN, ±inf must match exactly,
// a finite expected value needs a finite result; −0 equals +0.
Comparison compare(const TensorView& got, const TensorView& expected, const Tolerance& tol);

}  // namespace kparity::cli
