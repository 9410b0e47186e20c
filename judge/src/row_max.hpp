#pragma once
// Row loops of the rule's floors and comparison kept in vector lanes (issue 32 (3)): each computes
// exactly what its element-by-element loop computes, only in an order that does not change the
// result (maxima; the sums below are of zeros and NaNs). Compiled for AVX-512, AVX2 and the
// baseline, picked at run time (JUDGE_CLONES), with -ffp-contract=off (judge/CMakeLists.txt).
#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define JUDGE_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define JUDGE_CLONES
#endif

namespace kparity::judging::rows {

// max(m, the largest finite |x_i|), m >= 0 (NaN and +-inf skipped, as `if (isfinite(|x|))` does).
double finite_abs_max(std::int64_t n, const double* x, double m);

// km[d] = max(km[d], |x_d|) over the finite |x_d| (km >= 0), and the largest of them into m.
void finite_abs_max_into(std::int64_t n, const double* x, double* km, double& m);

}  // namespace kparity::judging::rows
