// The row loops of row_max.hpp. A non-finite |x| becomes 0, which leaves a maximum of non-negative
// values as it is; eight independent maxima then one: a max is the same in any order.
#include "row_max.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

namespace kparity::judging::rows {

JUDGE_CLONES
double finite_abs_max(std::int64_t n, const double* __restrict x, double m) {
  double l8[8] = {};
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) {
      const double a = std::fabs(x[i + l]), w = a <= DBL_MAX ? a : 0.0;
      l8[l] = l8[l] < w ? w : l8[l];
    }
  for (; i < n; ++i)
    if (const double a = std::fabs(x[i]); std::isfinite(a)) m = std::max(m, a);
  for (double v : l8) m = std::max(m, v);
  return m;
}

JUDGE_CLONES
void finite_abs_max_into(std::int64_t n, const double* __restrict x, double* __restrict km, double& m) {
  double l8[8] = {};
  std::int64_t d = 0;
  for (; d + 8 <= n; d += 8)
    for (int l = 0; l < 8; ++l) {
      const double a = std::fabs(x[d + l]), w = a <= DBL_MAX ? a : 0.0;
      km[d + l] = km[d + l] < w ? w : km[d + l];
      l8[l] = l8[l] < w ? w : l8[l];
    }
  for (; d < n; ++d)
    if (const double a = std::fabs(x[d]); std::isfinite(a)) km[d] = std::max(km[d], a), m = std::max(m, a);
  for (double v : l8) m = std::max(m, v);
}

}  // namespace kparity::judging::rows
