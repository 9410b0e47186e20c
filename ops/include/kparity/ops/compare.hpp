#pragma once
// The one tolerance comparison: |got − expected| ≤ atol + rtol·|expected| elementwise (README,
// "Comparing against expected tensors"), used by `kparity run` against expected.* tensors and by
// the fuzz properties that compare two runs.
#include <cstdint>
#include <string>
#include <string_view>

#include "kparity/core/tensor_view.hpp"

namespace kparity::ops {

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
  double max_abs = 0.0;     // over elements finite on both sides
  double max_rel = 0.0;     // |got − expected| / |expected| over finite, nonzero expected
  bool shape_mismatch = false;
  std::string problem;      // "shape (..) but expected (..)"; non-empty means fail
  // The mismatched element furthest beyond its bound (first of equals), e.g.
  // "at (0, 2): actual 1.5, expected 1, |diff| 0.5 > 0.01 (atol 0.01, rtol 0)"; empty without one.
  std::string worst;
  bool pass() const noexcept { return problem.empty() && mismatched == 0; }
};

// NaN matches NaN, ±inf must match exactly, a finite expected value needs a finite result; −0
// equals +0.
Comparison compare(const TensorView& got, const TensorView& expected, const Tolerance& tol);

}  // namespace kparity::ops
