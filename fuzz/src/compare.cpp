#include <cmath>
#include <sstream>

#include "kparity/core/format.hpp"
#include "kparity/fuzz/property.hpp"

namespace kparity::fuzz {

std::string compare_close(const TensorView& actual, const TensorView& expected, double atol, double rtol) {
  if (actual.shape() != expected.shape()) {
    return "shape " + py_tuple(actual.shape()) + " != " + py_tuple(expected.shape());
  }
  double worst = 0.0;
  std::string report;
  for_each_element(expected, [&](std::span<const std::int64_t> idx, std::int64_t) {
    const double x = actual.load(idx), y = expected.load(idx);
    const double bound = atol + rtol * std::fabs(y);
    const bool same_special = (std::isnan(x) && std::isnan(y)) || (std::isinf(x) && x == y);
    const double excess = same_special ? 0.0 : (std::isfinite(x - y) ? std::fabs(x - y) / bound : INFINITY);
    if (excess > 1.0 && excess > worst) {
      worst = excess;
      std::ostringstream os;
      os.precision(9);
      os << "at " << py_tuple(std::vector<std::int64_t>(idx.begin(), idx.end())) << ": actual " << x
         << ", expected " << y << ", |diff| " << std::fabs(x - y) << " > " << bound << " (atol " << atol
         << ", rtol " << rtol << ")";
      report = os.str();
    }
  });
  return report;
}

bool all_finite(const TensorView& v) {
  bool ok = true;
  for_each_element(v, [&](std::span<const std::int64_t> idx, std::int64_t) {
    if (ok && !std::isfinite(v.load(idx))) ok = false;
  });
  return ok;
}

}  // namespace kparity::fuzz
