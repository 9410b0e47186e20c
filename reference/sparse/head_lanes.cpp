// The lane loops of head_lanes.hpp. Plain loops with the lane index innermost, which the compiler
// vectorises without reordering any one lane's operations (no reduction crosses lanes, and the
// library is built with -ffp-contract=off, so no product is fused into a sum). target_clones picks
// AVX-512 or AVX2 at run time on x86-64 with GCC. The sums over keys (channels) take two or four
// of them a pass, each lane adding its terms in the same order, so that a sum array is loaded and
// stored once per pass, not once per term (issue 32 (3)).
#include "head_lanes.hpp"

#include <algorithm>
#include <cmath>

#include "../src/weighted_rows.hpp"
#include "lane_clones.hpp"

namespace kparity::reference::sparse::detail {

KPARITY_CLONES void faithful_dots(std::int64_t H, std::int64_t D, std::int64_t n, const float* __restrict QT,
                                  const float* __restrict rows, float* __restrict out) {
  for (std::int64_t j = 0; j < n; ++j) reference::detail::weighted_rows(D, H, QT, H, rows + j * D, out + j * H);
}

KPARITY_CLONES void faithful_pv(std::int64_t D, std::int64_t n, const float* __restrict w, const float* __restrict rows,
                                float* __restrict num) {
  reference::detail::weighted_rows(n, D, rows, D, w, num);
}

KPARITY_CLONES void abs_dots(std::int64_t H, std::int64_t D, std::int64_t n, const double* __restrict QT,
                             const double* __restrict rows, double* __restrict out) {
  for (std::int64_t j = 0; j < n; ++j) {
    double* __restrict acc = out + j * H;
    const double* __restrict k = rows + j * D;
    for (std::int64_t h = 0; h < H; ++h) acc[h] = 0.0;
    std::int64_t d = 0;
    for (; d + 4 <= D; d += 4) {  // as in faithful_dots
      const double k0 = k[d], k1 = k[d + 1], k2 = k[d + 2], k3 = k[d + 3];
      const double* __restrict q = QT + d * H;
      for (std::int64_t h = 0; h < H; ++h) {
        double a = acc[h];
        a += std::fabs(q[h] * k0);
        a += std::fabs(q[H + h] * k1);
        a += std::fabs(q[2 * H + h] * k2);
        a += std::fabs(q[3 * H + h] * k3);
        acc[h] = a;
      }
    }
    for (; d < D; ++d) {
      const double kv = k[d];
      const double* __restrict q = QT + d * H;
      for (std::int64_t h = 0; h < H; ++h) acc[h] += std::fabs(q[h] * kv);
    }
  }
}

KPARITY_CLONES void bound_pv(std::int64_t D, std::int64_t n, const double* __restrict dp, const double* __restrict ph,
                             const double* __restrict p, const double* __restrict rows, double* __restrict t1,
                             double* __restrict hv, double* __restrict o) {
  for (std::int64_t d = 0; d < D; ++d) t1[d] = 0.0, hv[d] = 0.0, o[d] = 0.0;
  std::int64_t j = 0;
  for (; j + 2 <= n; j += 2) {  // two keys a pass over the three sums (each lane adds in key order)
    const double a0 = dp[j], b0 = ph[j], c0 = p[j], a1 = dp[j + 1], b1 = ph[j + 1], c1 = p[j + 1];
    const double* __restrict v = rows + j * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const double x0 = v[d], x1 = v[D + d], av0 = std::fabs(x0), av1 = std::fabs(x1);
      double s1 = t1[d], sh = hv[d], so = o[d];
      s1 += a0 * av0, sh += b0 * av0, so += c0 * x0;
      s1 += a1 * av1, sh += b1 * av1, so += c1 * x1;
      t1[d] = s1, hv[d] = sh, o[d] = so;
    }
  }
  for (; j < n; ++j) {
    const double a = dp[j], b = ph[j], c = p[j];
    const double* __restrict v = rows + j * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const double av = std::fabs(v[d]);
      t1[d] += a * av;
      hv[d] += b * av;
      o[d] += c * v[d];
    }
  }
}

KPARITY_CLONES void channel_stats(std::int64_t D, std::int64_t n, const double* __restrict rows, double* __restrict av,
                                  double* __restrict vmax, double* __restrict vmin, double* __restrict amax) {
  for (std::int64_t d = 0; d < D; ++d) av[d] = 0.0, vmax[d] = 0.0, vmin[d] = 0.0, amax[d] = 0.0;
  std::int64_t j = 0;
  for (; j + 2 <= n; j += 2) {  // two keys a pass (each lane in key order)
    const double* __restrict v = rows + j * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const double x0 = v[d], x1 = v[D + d], a0 = std::fabs(x0), a1 = std::fabs(x1);
      av[d] = (av[d] + a0) + a1;
      vmax[d] = std::max(std::max(vmax[d], x0), x1);
      vmin[d] = std::min(std::min(vmin[d], x0), x1);
      amax[d] = std::max(std::max(amax[d], a0), a1);
    }
  }
  for (; j < n; ++j) {
    const double* __restrict v = rows + j * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const double x = v[d], ax = std::fabs(x);
      av[d] += ax;
      vmax[d] = std::max(vmax[d], x);
      vmin[d] = std::min(vmin[d], x);
      amax[d] = std::max(amax[d], ax);
    }
  }
}

KPARITY_CLONES void bound_out(std::int64_t D, double n, double overflow, double c2, double uT0, double z_floor, double c3,
                              double c_uf, double inflate, const double* __restrict t1, const double* __restrict hv,
                              const double* __restrict o, const double* __restrict av, const double* __restrict vmax,
                              const double* __restrict vmin, const double* __restrict amax, double* __restrict out) {
  for (std::int64_t d = 0; d < D; ++d) {
    const double a = std::min(t1[d], vmax[d] - vmin[d]);
    const double h = std::min(hv[d], amax[d]);
    const double t2 = c2 * h + uT0 * av[d] * z_floor;
    const double t3 = c3 * (std::fabs(o[d]) + a + t2);
    const double tuf = c_uf * amax[d] * z_floor;
    const double b = (a + t2 + t3 + tuf) * inflate;
    out[d] = n * amax[d] >= overflow ? INFINITY : b;
  }
}

}  // namespace kparity::reference::sparse::detail
