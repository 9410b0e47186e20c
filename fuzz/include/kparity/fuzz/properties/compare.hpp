#pragma once
// Comparisons the metamorphic properties share (the tolerance rule itself is ops/compare.hpp's).
#include <string>

#include "kparity/core/tensor_view.hpp"

namespace kparity::fuzz {

// |a - b| <= atol + rtol * |b| elementwise over equal shapes; on failure returns a description of
// the worst element (index, both values, the bound), else an empty string.
std::string compare_close(const TensorView& actual, const TensorView& expected, double atol, double rtol);
bool all_finite(const TensorView& v);

}  // namespace kparity::fuzz
