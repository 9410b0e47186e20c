#pragma once
// One lane loop three reference paths share (sparse faithful_dots and faithful_pv, KDA row_dots):
// out[j] = rows[0][j] * coef[0] + rows[1][j] * coef[1] + ..., j < width, in fp32, added in row order
// from +0, each product rounded before its sum (kparity_reference builds with -ffp-contract=off).
// Four rows a pass over `out`, so the sums are loaded and stored once per four terms (issue 32 (3));
// each lane still adds its terms in row order. Inlined into each caller's target_clones versions.
#include <cstdint>

namespace kparity::reference::detail {

__attribute__((always_inline)) inline void weighted_rows(std::int64_t n, std::int64_t width, const float* __restrict rows,
                                                         std::int64_t pitch, const float* __restrict coef,
                                                         float* __restrict out) {
  for (std::int64_t j = 0; j < width; ++j) out[j] = 0.0f;
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const float c0 = coef[i], c1 = coef[i + 1], c2 = coef[i + 2], c3 = coef[i + 3];
    const float* __restrict r = rows + i * pitch;
    for (std::int64_t j = 0; j < width; ++j) {
      float a = out[j];
      a = a + r[j] * c0;
      a = a + r[pitch + j] * c1;
      a = a + r[2 * pitch + j] * c2;
      a = a + r[3 * pitch + j] * c3;
      out[j] = a;
    }
  }
  for (; i < n; ++i) {
    const float c = coef[i];
    const float* __restrict r = rows + i * pitch;
    for (std::int64_t j = 0; j < width; ++j) {
      const float prod = r[j] * c;
      out[j] = out[j] + prod;
    }
  }
}

}  // namespace kparity::reference::detail
