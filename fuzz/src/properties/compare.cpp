#include <cmath>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/properties/compare.hpp"
#include "kparity/ops/compare.hpp"

namespace kparity::fuzz {

std::string compare_close(const TensorView& actual, const TensorView& expected, double atol, double rtol) {
  if (actual.shape() != expected.shape()) {
    return "shape " + py_tuple(actual.shape()) + " != " + py_tuple(expected.shape());
  }
  return ops::compare(actual, expected, {atol, rtol}).worst;
}

bool all_finite(const TensorView& v) {
  bool ok = true;
  for_each_element(v, [&](std::span<const std::int64_t> idx, std::int64_t) {
    if (ok && !std::isfinite(v.load(idx))) ok = false;
  });
  return ok;
}

}  // namespace kparity::fuzz
