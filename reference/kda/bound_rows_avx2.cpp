// bound_rows_avx2.hpp: 8 rows a tile in two 4-lane registers per sum. Sweep 1's four sums and rho take
// ten registers, which leaves AVX2's 16 room for the broadcast factors; the library builds with
// -ffp-contract=off and every operation below is written out, so nothing is fused.
#include "bound_rows_avx2.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define KPARITY_BOUND_AVX2 1
#endif

namespace kparity::reference::kda::detail {

#ifdef KPARITY_BOUND_AVX2

bool bound_rows_avx2_preferred() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512f");
}

__attribute__((target("avx2"))) void bound_sweep1_avx2(std::size_t K, std::size_t V, std::size_t tiled,
                                                       const double* ST, const double* rho, const double* al,
                                                       const double* dal, const double* k, const double* ka,
                                                       double one_u, double* sya, double* ssd, double* syk,
                                                       double* res) noexcept {
  const __m256d sign = _mm256_set1_pd(-0.0), U = _mm256_set1_pd(one_u), zero = _mm256_setzero_pd();
  for (std::size_t j0 = 0; j0 < tiled; j0 += 8) {
    __m256d ya0 = zero, ya1 = zero, sd0 = zero, sd1 = zero, yk0 = zero, yk1 = zero;
    __m256d rs0 = _mm256_loadu_pd(res + j0), rs1 = _mm256_loadu_pd(res + j0 + 4);
    const __m256d rj0 = _mm256_loadu_pd(rho + j0), rj1 = _mm256_loadu_pd(rho + j0 + 4);
    for (std::size_t i = 0; i < K; ++i) {
      const double* row = ST + i * V + j0;
      const __m256d A = _mm256_set1_pd(al[i] + dal[i]), D = _mm256_set1_pd(dal[i]);
      const __m256d AL = _mm256_set1_pd(al[i]), KI = _mm256_set1_pd(k[i]), KA = _mm256_set1_pd(ka[i]);
      const __m256d r0 = _mm256_loadu_pd(row), r1 = _mm256_loadu_pd(row + 4);
      const __m256d sa0 = _mm256_add_pd(_mm256_andnot_pd(sign, r0), rj0);
      const __m256d sa1 = _mm256_add_pd(_mm256_andnot_pd(sign, r1), rj1);
      const __m256d y0 = _mm256_mul_pd(_mm256_mul_pd(sa0, A), U), y1 = _mm256_mul_pd(_mm256_mul_pd(sa1, A), U);
      const __m256d s0 = _mm256_mul_pd(sa0, D), s1 = _mm256_mul_pd(sa1, D);
      ya0 = _mm256_add_pd(ya0, _mm256_mul_pd(y0, y0)), ya1 = _mm256_add_pd(ya1, _mm256_mul_pd(y1, y1));
      sd0 = _mm256_add_pd(sd0, _mm256_mul_pd(s0, s0)), sd1 = _mm256_add_pd(sd1, _mm256_mul_pd(s1, s1));
      yk0 = _mm256_add_pd(yk0, _mm256_andnot_pd(sign, _mm256_mul_pd(y0, KA)));
      yk1 = _mm256_add_pd(yk1, _mm256_andnot_pd(sign, _mm256_mul_pd(y1, KA)));
      rs0 = _mm256_sub_pd(rs0, _mm256_mul_pd(_mm256_mul_pd(r0, AL), KI));
      rs1 = _mm256_sub_pd(rs1, _mm256_mul_pd(_mm256_mul_pd(r1, AL), KI));
    }
    _mm256_storeu_pd(sya + j0, ya0), _mm256_storeu_pd(sya + j0 + 4, ya1);
    _mm256_storeu_pd(ssd + j0, sd0), _mm256_storeu_pd(ssd + j0 + 4, sd1);
    _mm256_storeu_pd(syk + j0, yk0), _mm256_storeu_pd(syk + j0 + 4, yk1);
    _mm256_storeu_pd(res + j0, rs0), _mm256_storeu_pd(res + j0 + 4, rs1);
  }
}

__attribute__((target("avx2"))) void bound_sweep2_avx2(std::size_t K, std::size_t V, std::size_t tiled, double* ST,
                                                       const double* rho_new, const double* al, const double* k,
                                                       const double* qa, const double* d, double* ss2, double* sdq,
                                                       unsigned char* finite) noexcept {
  const __m256d sign = _mm256_set1_pd(-0.0), zero = _mm256_setzero_pd();
  for (std::size_t j0 = 0; j0 < tiled; j0 += 8) {
    __m256d s20 = zero, s21 = zero, dq0 = zero, dq1 = zero, nf0 = zero, nf1 = zero;
    const __m256d d0 = _mm256_loadu_pd(d + j0), d1 = _mm256_loadu_pd(d + j0 + 4);
    const __m256d rl0 = _mm256_loadu_pd(rho_new + j0), rl1 = _mm256_loadu_pd(rho_new + j0 + 4);
    for (std::size_t i = 0; i < K; ++i) {
      double* row = ST + i * V + j0;
      const __m256d AL = _mm256_set1_pd(al[i]), KI = _mm256_set1_pd(k[i]), QA = _mm256_set1_pd(qa[i]);
      const __m256d sv0 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(row), AL), _mm256_mul_pd(d0, KI));
      const __m256d sv1 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(row + 4), AL), _mm256_mul_pd(d1, KI));
      _mm256_storeu_pd(row, sv0), _mm256_storeu_pd(row + 4, sv1);
      nf0 = _mm256_add_pd(nf0, _mm256_sub_pd(sv0, sv0)), nf1 = _mm256_add_pd(nf1, _mm256_sub_pd(sv1, sv1));
      const __m256d a0 = _mm256_add_pd(_mm256_andnot_pd(sign, sv0), rl0);
      const __m256d a1 = _mm256_add_pd(_mm256_andnot_pd(sign, sv1), rl1);
      s20 = _mm256_add_pd(s20, _mm256_mul_pd(a0, a0)), s21 = _mm256_add_pd(s21, _mm256_mul_pd(a1, a1));
      dq0 = _mm256_add_pd(dq0, _mm256_andnot_pd(sign, _mm256_mul_pd(a0, QA)));
      dq1 = _mm256_add_pd(dq1, _mm256_andnot_pd(sign, _mm256_mul_pd(a1, QA)));
    }
    _mm256_storeu_pd(ss2 + j0, s20), _mm256_storeu_pd(ss2 + j0 + 4, s21);
    _mm256_storeu_pd(sdq + j0, dq0), _mm256_storeu_pd(sdq + j0 + 4, dq1);
    const int z = _mm256_movemask_pd(_mm256_cmp_pd(nf0, zero, _CMP_EQ_OQ)) |
                  (_mm256_movemask_pd(_mm256_cmp_pd(nf1, zero, _CMP_EQ_OQ)) << 4);
    for (int l = 0; l < 8; ++l) finite[j0 + l] = static_cast<unsigned char>((z >> l) & 1);
  }
}

__attribute__((target("avx2"))) void bound_sweep21_avx2(std::size_t K, std::size_t V, std::size_t tiled, double* ST,
                                                        const double* rho_new, const double* al, const double* k,
                                                        const double* qa, const double* d, double* ss2, double* sdq,
                                                        const double* al2, const double* dal2, const double* k2,
                                                        const double* ka2, double one_u, double* sya, double* ssd,
                                                        double* syk, double* res) noexcept {
  const __m256d sign = _mm256_set1_pd(-0.0), U = _mm256_set1_pd(one_u), zero = _mm256_setzero_pd();
  for (std::size_t j0 = 0; j0 < tiled; j0 += 8) {
    __m256d s20 = zero, s21 = zero, dq0 = zero, dq1 = zero, ya0 = zero, ya1 = zero, sd0 = zero, sd1 = zero;
    __m256d yk0 = zero, yk1 = zero, rs0 = _mm256_loadu_pd(res + j0), rs1 = _mm256_loadu_pd(res + j0 + 4);
    for (std::size_t i = 0; i < K; ++i) {
      double* row = ST + i * V + j0;
      const __m256d AL = _mm256_set1_pd(al[i]), KI = _mm256_set1_pd(k[i]), QA = _mm256_set1_pd(qa[i]);
      const __m256d sv0 = _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(row), AL), _mm256_mul_pd(_mm256_loadu_pd(d + j0), KI));
      const __m256d sv1 =
          _mm256_add_pd(_mm256_mul_pd(_mm256_loadu_pd(row + 4), AL), _mm256_mul_pd(_mm256_loadu_pd(d + j0 + 4), KI));
      _mm256_storeu_pd(row, sv0), _mm256_storeu_pd(row + 4, sv1);
      const __m256d a0 = _mm256_add_pd(_mm256_andnot_pd(sign, sv0), _mm256_loadu_pd(rho_new + j0));
      const __m256d a1 = _mm256_add_pd(_mm256_andnot_pd(sign, sv1), _mm256_loadu_pd(rho_new + j0 + 4));
      s20 = _mm256_add_pd(s20, _mm256_mul_pd(a0, a0)), s21 = _mm256_add_pd(s21, _mm256_mul_pd(a1, a1));
      dq0 = _mm256_add_pd(dq0, _mm256_andnot_pd(sign, _mm256_mul_pd(a0, QA)));
      dq1 = _mm256_add_pd(dq1, _mm256_andnot_pd(sign, _mm256_mul_pd(a1, QA)));
      const __m256d A2 = _mm256_set1_pd(al2[i] + dal2[i]), D2 = _mm256_set1_pd(dal2[i]);
      const __m256d y0 = _mm256_mul_pd(_mm256_mul_pd(a0, A2), U), y1 = _mm256_mul_pd(_mm256_mul_pd(a1, A2), U);
      const __m256d e0 = _mm256_mul_pd(a0, D2), e1 = _mm256_mul_pd(a1, D2);
      ya0 = _mm256_add_pd(ya0, _mm256_mul_pd(y0, y0)), ya1 = _mm256_add_pd(ya1, _mm256_mul_pd(y1, y1));
      sd0 = _mm256_add_pd(sd0, _mm256_mul_pd(e0, e0)), sd1 = _mm256_add_pd(sd1, _mm256_mul_pd(e1, e1));
      const __m256d KA2 = _mm256_set1_pd(ka2[i]);
      yk0 = _mm256_add_pd(yk0, _mm256_andnot_pd(sign, _mm256_mul_pd(y0, KA2)));
      yk1 = _mm256_add_pd(yk1, _mm256_andnot_pd(sign, _mm256_mul_pd(y1, KA2)));
      const __m256d AL2 = _mm256_set1_pd(al2[i]), K2 = _mm256_set1_pd(k2[i]);
      rs0 = _mm256_sub_pd(rs0, _mm256_mul_pd(_mm256_mul_pd(sv0, AL2), K2));
      rs1 = _mm256_sub_pd(rs1, _mm256_mul_pd(_mm256_mul_pd(sv1, AL2), K2));
    }
    _mm256_storeu_pd(ss2 + j0, s20), _mm256_storeu_pd(ss2 + j0 + 4, s21);
    _mm256_storeu_pd(sdq + j0, dq0), _mm256_storeu_pd(sdq + j0 + 4, dq1);
    _mm256_storeu_pd(sya + j0, ya0), _mm256_storeu_pd(sya + j0 + 4, ya1);
    _mm256_storeu_pd(ssd + j0, sd0), _mm256_storeu_pd(ssd + j0 + 4, sd1);
    _mm256_storeu_pd(syk + j0, yk0), _mm256_storeu_pd(syk + j0 + 4, yk1);
    _mm256_storeu_pd(res + j0, rs0), _mm256_storeu_pd(res + j0 + 4, rs1);
  }
}

#else

bool bound_rows_avx2_preferred() noexcept { return false; }
void bound_sweep21_avx2(std::size_t, std::size_t, std::size_t, double*, const double*, const double*, const double*,
                        const double*, const double*, double*, double*, const double*, const double*, const double*,
                        const double*, double, double*, double*, double*, double*) noexcept {}
void bound_sweep1_avx2(std::size_t, std::size_t, std::size_t, const double*, const double*, const double*, const double*,
                       const double*, const double*, double, double*, double*, double*, double*) noexcept {}
void bound_sweep2_avx2(std::size_t, std::size_t, std::size_t, double*, const double*, const double*, const double*,
                       const double*, const double*, double*, double*, unsigned char*) noexcept {}

#endif

}  // namespace kparity::reference::kda::detail
