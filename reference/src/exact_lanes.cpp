// The lane kernels of exact_lanes.hpp. Each kernel does, per lane and term, exactly the steps of
// lanes::dot2_step (TwoProduct with an fma, TwoSum, s += q + r, T += |q| + |r|); only the range test
// differs in form: a block of lanes keeps the largest |product| and the smallest |product| among terms
// with two non-zero factors, and a lane whose largest exceeds 2^1000 or whose smallest is below
// 2^-960 is marked not ok, and so is a lane whose p ends non-finite (a non-finite product makes p
// inf or NaN for good: products in range cannot overflow it), which is the scalar step's verdict on
// such products. A zero b contributes +-0 products with a zero factor, which are in range, so such
// terms skip the smallest-product test.
#include "kparity/reference/exact_lanes.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KPARITY_LANES_X86 1
#include <immintrin.h>
#endif

namespace kparity::reference::lanes {
namespace {

constexpr double kHuge = 0x1p1000, kTiny = 0x1p-960;

inline const double* row_of(const double* A, std::size_t lda, const std::int32_t* rows, std::size_t i) {
  return A + (rows ? static_cast<std::size_t>(rows[i]) : i) * lda;
}

void dot2_scalar(std::size_t n, std::size_t l0, std::size_t l1, const double* A, std::size_t lda,
                 const std::int32_t* rows, const double* b, double* p, double* s, double* T, unsigned char* ok) {
  for (std::size_t l = l0; l < l1; ++l) {
    double pl = p[l], sl = s[l], Tl = T[l];
    unsigned char okl = ok[l];
    for (std::size_t i = 0; i < n && okl; ++i) dot2_step(row_of(A, lda, rows, i)[l], b[i], pl, sl, Tl, okl);
    p[l] = pl, s[l] = sl, T[l] = Tl, ok[l] = okl;
  }
}

#ifdef KPARITY_LANES_X86

// One term of dot2_step on 8 lanes in AVX-512 registers (TwoProduct with an fma, TwoSum, s += q + r,
// T += |q| + |r|), and with Track the range's running largest |product| and smallest |product| of
// two non-zero factors. dot2_avx512 and dot2_certify_avx512 run it on two blocks a term.
struct Lanes512 {
  __m512d p, s, T, mx, mn;
};

template <bool Track>
__attribute__((target("avx512f"), always_inline)) inline void dot2_step512(Lanes512& v, __m512d a, __m512d bb,
                                                                          bool b_nonzero) {
  const __m512d h = _mm512_mul_pd(a, bb);
  const __m512d r = _mm512_fmsub_pd(a, bb, h);
  const __m512d x = _mm512_add_pd(v.p, h);
  const __m512d z = _mm512_sub_pd(x, v.p);
  const __m512d q = _mm512_add_pd(_mm512_sub_pd(v.p, _mm512_sub_pd(x, z)), _mm512_sub_pd(h, z));
  v.p = x;
  v.s = _mm512_add_pd(v.s, _mm512_add_pd(q, r));
  v.T = _mm512_add_pd(v.T, _mm512_add_pd(_mm512_abs_pd(q), _mm512_abs_pd(r)));
  if constexpr (Track) {
    const __m512d ah = _mm512_abs_pd(h);
    v.mx = _mm512_max_pd(v.mx, ah);
    if (b_nonzero) v.mn = _mm512_mask_min_pd(v.mn, _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_NEQ_UQ), v.mn, ah);
  }
}

// dot2_step512 on 4 lanes in AVX2 registers: the same operations (the AVX2 + FMA hosts' kernels, run
// on two blocks a term).
struct Lanes256 {
  __m256d p, s, T, mx, mn;
};

__attribute__((target("avx2,fma"), always_inline)) inline void dot2_step256(Lanes256& v, __m256d a, __m256d bb,
                                                                           bool b_nonzero) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d h = _mm256_mul_pd(a, bb);
  const __m256d r = _mm256_fmsub_pd(a, bb, h);
  const __m256d x = _mm256_add_pd(v.p, h);
  const __m256d z = _mm256_sub_pd(x, v.p);
  const __m256d q = _mm256_add_pd(_mm256_sub_pd(v.p, _mm256_sub_pd(x, z)), _mm256_sub_pd(h, z));
  v.p = x;
  v.s = _mm256_add_pd(v.s, _mm256_add_pd(q, r));
  v.T = _mm256_add_pd(v.T, _mm256_add_pd(_mm256_andnot_pd(sign, q), _mm256_andnot_pd(sign, r)));
  const __m256d ah = _mm256_andnot_pd(sign, h);
  v.mx = _mm256_max_pd(v.mx, ah);
  if (b_nonzero) {
    const __m256d nz = _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_NEQ_UQ);
    v.mn = _mm256_min_pd(v.mn, _mm256_blendv_pd(_mm256_set1_pd(INFINITY), ah, nz));
  }
}

// Eight lanes' sums (two Lanes256) back to p, s and T, and a lane's flag cleared where its magnitudes
// left [kTiny, kHuge] or its sum is not finite.
__attribute__((target("avx2,fma"), always_inline)) inline void store_lanes8(const Lanes256& v0, const Lanes256& v1,
                                                                           std::size_t l, double* p, double* s,
                                                                           double* T, unsigned char* ok) {
  _mm256_storeu_pd(p + l, v0.p), _mm256_storeu_pd(p + l + 4, v1.p);
  _mm256_storeu_pd(s + l, v0.s), _mm256_storeu_pd(s + l + 4, v1.s);
  _mm256_storeu_pd(T + l, v0.T), _mm256_storeu_pd(T + l + 4, v1.T);
  double mx[8], mn[8];
  _mm256_storeu_pd(mx, v0.mx), _mm256_storeu_pd(mx + 4, v1.mx), _mm256_storeu_pd(mn, v0.mn), _mm256_storeu_pd(mn + 4, v1.mn);
  for (int k = 0; k < 8; ++k)
    if (!(mx[k] <= kHuge && mn[k] >= kTiny && std::isfinite(p[l + k]))) ok[l + k] = 0;
}

__attribute__((target("avx2,fma"))) void dot2_avx2(std::size_t n, std::size_t lanes, const double* A, std::size_t lda,
                                                   const std::int32_t* rows, const double* b, double* p, double* s,
                                                   double* T, unsigned char* ok, std::size_t& done) {
  const __m256d inf = _mm256_set1_pd(INFINITY), zero = _mm256_setzero_pd();
  std::size_t l = 0;
  for (; l + 8 <= lanes; l += 8) {
    Lanes256 v0{_mm256_loadu_pd(p + l), _mm256_loadu_pd(s + l), _mm256_loadu_pd(T + l), zero, inf};
    Lanes256 v1{_mm256_loadu_pd(p + l + 4), _mm256_loadu_pd(s + l + 4), _mm256_loadu_pd(T + l + 4), zero, inf};
    for (std::size_t i = 0; i < n; ++i) {
      const double* a = row_of(A, lda, rows, i) + l;
      const __m256d bb = _mm256_set1_pd(b[i]);
      dot2_step256(v0, _mm256_loadu_pd(a), bb, b[i] != 0);
      dot2_step256(v1, _mm256_loadu_pd(a + 4), bb, b[i] != 0);
    }
    store_lanes8(v0, v1, l, p, s, T, ok);
  }
  done = l;
}

// Sixteen lanes' sums (two Lanes512) back to p, s and T, and a lane's flag cleared where its magnitudes
// left [kTiny, kHuge] or its sum is not finite: the end of each 16-lane pass of the kernels below.
__attribute__((target("avx512f"), always_inline)) inline void store_lanes16(const Lanes512& v0, const Lanes512& v1,
                                                                            std::size_t l, double* p, double* s,
                                                                            double* T, unsigned char* ok) {
  _mm512_storeu_pd(p + l, v0.p), _mm512_storeu_pd(p + l + 8, v1.p);
  _mm512_storeu_pd(s + l, v0.s), _mm512_storeu_pd(s + l + 8, v1.s);
  _mm512_storeu_pd(T + l, v0.T), _mm512_storeu_pd(T + l + 8, v1.T);
  double mx[16], mn[16];
  _mm512_storeu_pd(mx, v0.mx), _mm512_storeu_pd(mx + 8, v1.mx), _mm512_storeu_pd(mn, v0.mn), _mm512_storeu_pd(mn + 8, v1.mn);
  for (int k = 0; k < 16; ++k)
    if (!(mx[k] <= kHuge && mn[k] >= kTiny && std::isfinite(p[l + k]))) ok[l + k] = 0;
}

__attribute__((target("avx512f"))) void dot2_avx512(std::size_t n, std::size_t lanes, const double* A,
                                                    std::size_t lda, const std::int32_t* rows, const double* b,
                                                    double* p, double* s, double* T, unsigned char* ok,
                                                    std::size_t& done) {
  const __m512d inf = _mm512_set1_pd(INFINITY), zero = _mm512_setzero_pd();
  std::size_t l = 0;
  for (; l + 16 <= lanes; l += 16) {
    Lanes512 v0{_mm512_loadu_pd(p + l), _mm512_loadu_pd(s + l), _mm512_loadu_pd(T + l), zero, inf};
    Lanes512 v1{_mm512_loadu_pd(p + l + 8), _mm512_loadu_pd(s + l + 8), _mm512_loadu_pd(T + l + 8), zero, inf};
    for (std::size_t i = 0; i < n; ++i) {
      const double* a = row_of(A, lda, rows, i) + l;
      const __m512d bb = _mm512_set1_pd(b[i]);
      dot2_step512<true>(v0, _mm512_loadu_pd(a), bb, b[i] != 0);
      dot2_step512<true>(v1, _mm512_loadu_pd(a + 8), bb, b[i] != 0);
    }
    store_lanes16(v0, v1, l, p, s, T, ok);
  }
  done = l;
}

// dot2_avx512 over rows = null after updating each element in place first, as the caller's loop
// would have (dot2_scaled, dot2_updated): the element is loaded once for both (issue 32 (3)).
enum class Pre { scale, fma };
template <Pre P>
__attribute__((target("avx512f"))) void dot2_pre_avx512(std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                                                        const double* c, const double* d, const double* b, double* p,
                                                        double* s, double* T, unsigned char* ok, std::size_t& done) {
  const __m512d inf = _mm512_set1_pd(INFINITY), zero = _mm512_setzero_pd();
  std::size_t l = 0;
  for (; l + 16 <= lanes; l += 16) {
    Lanes512 v0{_mm512_loadu_pd(p + l), _mm512_loadu_pd(s + l), _mm512_loadu_pd(T + l), zero, inf};
    Lanes512 v1{_mm512_loadu_pd(p + l + 8), _mm512_loadu_pd(s + l + 8), _mm512_loadu_pd(T + l + 8), zero, inf};
    const __m512d d0 = P == Pre::fma ? _mm512_loadu_pd(d + l) : zero, d1 = P == Pre::fma ? _mm512_loadu_pd(d + l + 8) : zero;
    for (std::size_t i = 0; i < n; ++i) {
      double* a = A + i * lda + l;
      const __m512d bb = _mm512_set1_pd(b[i]), cc = _mm512_set1_pd(c[i]);
      __m512d a0 = _mm512_loadu_pd(a), a1 = _mm512_loadu_pd(a + 8);
      if constexpr (P == Pre::scale) {
        a0 = _mm512_mul_pd(a0, cc), a1 = _mm512_mul_pd(a1, cc);  // A * c[i]
      } else {
        a0 = _mm512_fmadd_pd(d0, cc, a0), a1 = _mm512_fmadd_pd(d1, cc, a1);  // fma(d[l], c[i], A)
      }
      _mm512_storeu_pd(a, a0), _mm512_storeu_pd(a + 8, a1);
      dot2_step512<true>(v0, a0, bb, b[i] != 0);
      dot2_step512<true>(v1, a1, bb, b[i] != 0);
    }
    store_lanes16(v0, v1, l, p, s, T, ok);
  }
  done = l;
}

// dot2_pre_avx512 in AVX2 + FMA registers, 8 lanes a block: the element updated in place (A * c[i],
// or fma(d[l], c[i], A): one rounding, as std::fma) and then dot2_step256 on it.
template <Pre P>
__attribute__((target("avx2,fma"))) void dot2_pre_avx2(std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                                                       const double* c, const double* d, const double* b, double* p,
                                                       double* s, double* T, unsigned char* ok, std::size_t& done) {
  const __m256d inf = _mm256_set1_pd(INFINITY), zero = _mm256_setzero_pd();
  std::size_t l = 0;
  for (; l + 8 <= lanes; l += 8) {
    Lanes256 v0{_mm256_loadu_pd(p + l), _mm256_loadu_pd(s + l), _mm256_loadu_pd(T + l), zero, inf};
    Lanes256 v1{_mm256_loadu_pd(p + l + 4), _mm256_loadu_pd(s + l + 4), _mm256_loadu_pd(T + l + 4), zero, inf};
    const __m256d d0 = P == Pre::fma ? _mm256_loadu_pd(d + l) : zero, d1 = P == Pre::fma ? _mm256_loadu_pd(d + l + 4) : zero;
    for (std::size_t i = 0; i < n; ++i) {
      double* a = A + i * lda + l;
      const __m256d bb = _mm256_set1_pd(b[i]), cc = _mm256_set1_pd(c[i]);
      __m256d a0 = _mm256_loadu_pd(a), a1 = _mm256_loadu_pd(a + 4);
      if constexpr (P == Pre::scale) {
        a0 = _mm256_mul_pd(a0, cc), a1 = _mm256_mul_pd(a1, cc);  // A * c[i]
      } else {
        a0 = _mm256_fmadd_pd(d0, cc, a0), a1 = _mm256_fmadd_pd(d1, cc, a1);  // fma(d[l], c[i], A)
      }
      _mm256_storeu_pd(a, a0), _mm256_storeu_pd(a + 4, a1);
      dot2_step256(v0, a0, bb, b[i] != 0);
      dot2_step256(v1, a1, bb, b[i] != 0);
    }
    store_lanes8(v0, v1, l, p, s, T, ok);
  }
  done = l;
}

#endif  // KPARITY_LANES_X86

enum Kernel : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

int best_kernel() noexcept {
#ifdef KPARITY_LANES_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kAvx2;
#endif
  return kScalar;
}

std::atomic<int>& active() {
  static std::atomic<int> k{best_kernel()};
  return k;
}

// detail::certify (exact_sum.cpp) without branches, lane by lane: the same operations on the same
// values (no fused multiply-add: this file builds with -ffp-contract=off), so the same verdicts and
// results. In explicit intrinsics: GCC's vector extensions for this loop left its comparisons and
// 64-bit integer steps scalar (vpinsrq/setae per lane; it was 20-40% of the oracle's time at the
// kernel-sized shapes, perf, bench/results/oracle_2026-12-02.md "Second pass").
void certify_scalar(std::size_t l0, std::size_t lanes, const double* p, const double* s, const double* T,
                    const unsigned char* ok, double c, double extra, double* result, unsigned char* decided) {
  for (std::size_t l = l0; l < lanes; ++l) {
    const double pl = p[l], sl = s[l], Tl = T[l];
    const double x = pl + sl, z = x - pl;
    const double t = (pl - (x - z)) + (sl - z);
    const double E = c * Tl + 0x1p-1074 + extra;
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const double away = std::bit_cast<double>(bits + 1), toward = std::bit_cast<double>(bits - 1);
    const double up = x > 0 ? away : toward, dn = x > 0 ? toward : away;
    const bool finite = std::fabs(pl) <= DBL_MAX && std::fabs(sl) <= DBL_MAX && std::fabs(Tl) <= DBL_MAX;
    const bool exact = Tl == 0 && extra == 0;
    const bool inside = std::fabs(x) >= 0x1p-1000 && std::fabs(x) < DBL_MAX && t + E < (up - x) / 2 && t - E > -((x - dn) / 2);
    decided[l] = ok[l] && finite && (exact || inside);
    result[l] = exact ? pl : x;
  }
}

#ifdef KPARITY_LANES_X86

__attribute__((target("avx512f"))) std::size_t certify_avx512(std::size_t lanes, const double* p, const double* s,
                                                               const double* T, const unsigned char* ok, double c,
                                                               double extra, double* result, unsigned char* decided) {
  const __m512d vc = _mm512_set1_pd(c), sub = _mm512_set1_pd(0x1p-1074), vx = _mm512_set1_pd(extra);
  const __m512d big = _mm512_set1_pd(DBL_MAX), small = _mm512_set1_pd(0x1p-1000), half = _mm512_set1_pd(0.5);
  const __m512d zero = _mm512_setzero_pd();
  const __m512i one = _mm512_set1_epi64(1), sign = _mm512_set1_epi64(static_cast<long long>(0x8000000000000000ull));
  const __mmask8 extra0 = extra == 0 ? 0xff : 0;
  std::size_t l = 0;
  for (; l + 8 <= lanes; l += 8) {
    const __m512d pl = _mm512_loadu_pd(p + l), sl = _mm512_loadu_pd(s + l), Tl = _mm512_loadu_pd(T + l);
    const __m512d x = _mm512_add_pd(pl, sl), z = _mm512_sub_pd(x, pl);
    const __m512d t = _mm512_add_pd(_mm512_sub_pd(pl, _mm512_sub_pd(x, z)), _mm512_sub_pd(sl, z));
    const __m512d E = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(vc, Tl), sub), vx);
    const __m512i bits = _mm512_castpd_si512(x);
    const __m512d away = _mm512_castsi512_pd(_mm512_add_epi64(bits, one));
    const __m512d toward = _mm512_castsi512_pd(_mm512_sub_epi64(bits, one));
    const __mmask8 pos = _mm512_cmp_pd_mask(x, zero, _CMP_GT_OQ);
    const __m512d up = _mm512_mask_blend_pd(pos, toward, away), dn = _mm512_mask_blend_pd(pos, away, toward);
    const __mmask8 finite = _mm512_cmp_pd_mask(_mm512_abs_pd(pl), big, _CMP_LE_OQ) &
                            _mm512_cmp_pd_mask(_mm512_abs_pd(sl), big, _CMP_LE_OQ) &
                            _mm512_cmp_pd_mask(_mm512_abs_pd(Tl), big, _CMP_LE_OQ);
    const __mmask8 exact = _mm512_cmp_pd_mask(Tl, zero, _CMP_EQ_OQ) & extra0;
    const __m512d ax = _mm512_abs_pd(x);
    const __m512d hi_gap = _mm512_mul_pd(_mm512_sub_pd(up, x), half);  // (up - x) / 2, exactly
    const __m512d lo_gap = _mm512_castsi512_pd(
        _mm512_xor_si512(_mm512_castpd_si512(_mm512_mul_pd(_mm512_sub_pd(x, dn), half)), sign));  // -((x - dn) / 2)
    const __mmask8 inside = _mm512_cmp_pd_mask(ax, small, _CMP_GE_OQ) & _mm512_cmp_pd_mask(ax, big, _CMP_LT_OQ) &
                            _mm512_cmp_pd_mask(_mm512_add_pd(t, E), hi_gap, _CMP_LT_OQ) &
                            _mm512_cmp_pd_mask(_mm512_sub_pd(t, E), lo_gap, _CMP_GT_OQ);
    const __mmask8 okm = _mm512_test_epi64_mask(_mm512_cvtepu8_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(ok + l))),
                                                _mm512_set1_epi64(0xff));
    const __mmask8 dec = okm & finite & (exact | inside);
    _mm512_storeu_pd(result + l, _mm512_mask_blend_pd(exact, x, pl));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(decided + l), _mm512_cvtepi64_epi8(_mm512_maskz_set1_epi64(dec, 1)));
  }
  return l;
}

__attribute__((target("avx2"))) std::size_t certify_avx2(std::size_t lanes, const double* p, const double* s,
                                                         const double* T, const unsigned char* ok, double c,
                                                         double extra, double* result, unsigned char* decided) {
  const __m256d vc = _mm256_set1_pd(c), sub = _mm256_set1_pd(0x1p-1074), vx = _mm256_set1_pd(extra);
  const __m256d big = _mm256_set1_pd(DBL_MAX), small = _mm256_set1_pd(0x1p-1000), half = _mm256_set1_pd(0.5);
  const __m256d zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256d extra0 = extra == 0 ? _mm256_castsi256_pd(_mm256_set1_epi64x(-1)) : zero;
  std::size_t l = 0;
  for (; l + 4 <= lanes; l += 4) {
    const __m256d pl = _mm256_loadu_pd(p + l), sl = _mm256_loadu_pd(s + l), Tl = _mm256_loadu_pd(T + l);
    const __m256d x = _mm256_add_pd(pl, sl), z = _mm256_sub_pd(x, pl);
    const __m256d t = _mm256_add_pd(_mm256_sub_pd(pl, _mm256_sub_pd(x, z)), _mm256_sub_pd(sl, z));
    const __m256d E = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(vc, Tl), sub), vx);
    const __m256i bits = _mm256_castpd_si256(x);
    const __m256d away = _mm256_castsi256_pd(_mm256_add_epi64(bits, one));
    const __m256d toward = _mm256_castsi256_pd(_mm256_sub_epi64(bits, one));
    const __m256d pos = _mm256_cmp_pd(x, zero, _CMP_GT_OQ);
    const __m256d up = _mm256_blendv_pd(toward, away, pos), dn = _mm256_blendv_pd(away, toward, pos);
    const __m256d finite = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, pl), big, _CMP_LE_OQ),
                                                       _mm256_cmp_pd(_mm256_andnot_pd(sign, sl), big, _CMP_LE_OQ)),
                                         _mm256_cmp_pd(_mm256_andnot_pd(sign, Tl), big, _CMP_LE_OQ));
    const __m256d exact = _mm256_and_pd(_mm256_cmp_pd(Tl, zero, _CMP_EQ_OQ), extra0);
    const __m256d ax = _mm256_andnot_pd(sign, x);
    const __m256d hi_gap = _mm256_mul_pd(_mm256_sub_pd(up, x), half);
    const __m256d lo_gap = _mm256_xor_pd(_mm256_mul_pd(_mm256_sub_pd(x, dn), half), sign);
    const __m256d inside = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(ax, small, _CMP_GE_OQ), _mm256_cmp_pd(ax, big, _CMP_LT_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(_mm256_add_pd(t, E), hi_gap, _CMP_LT_OQ),
                      _mm256_cmp_pd(_mm256_sub_pd(t, E), lo_gap, _CMP_GT_OQ)));
    const int dec = _mm256_movemask_pd(_mm256_and_pd(finite, _mm256_or_pd(exact, inside)));
    _mm256_storeu_pd(result + l, _mm256_blendv_pd(x, pl, exact));
    for (int k = 0; k < 4; ++k) decided[l + k] = ok[l + k] && ((dec >> k) & 1);
  }
  return l;
}

// dot2's range verdict (ok) and a certificate for one block of 8 lanes held in registers. It decides
// a subset of what certify() decides, with the same results there (a lane it leaves undecided goes
// to the caller's exact fallback, so the sums are the same), in fewer operations (with one or two
// terms a lane, the verdict was most of dot2_certify's work):
// - certify's two-sided test t + E < (next(x) - x) / 2 and t - E > -(x - prev(x)) / 2 becomes
//   |t| + E < g / 2 with g = |x| - prev(|x|), the gap towards zero, which is never larger than the
//   gap away from zero: the same test where the two gaps are equal, stricter at powers of two;
// - certify's finiteness test of s and T is implied: a decided lane has T = 0 (then s = 0) or a
//   finite x and E (then, with p finite, s and T are finite).
// InRange: the caller promised every product in range; mx and mn are not read.
template <bool InRange>
__attribute__((target("avx512f"), always_inline)) inline void verdict_avx512(__m512d pl, __m512d sl, __m512d Tl, __m512d mx,
                                                                           __m512d mn, double c, double extra,
                                                                           double* res, unsigned char* dec) {
  const __m512d zero = _mm512_setzero_pd();
  const __m512d vc = _mm512_set1_pd(c), sub = _mm512_set1_pd(0x1p-1074), vx = _mm512_set1_pd(extra);
  const __m512d big = _mm512_set1_pd(DBL_MAX), small = _mm512_set1_pd(0x1p-1000), half = _mm512_set1_pd(0.5);
  const __m512i one = _mm512_set1_epi64(1);
  const __mmask8 extra0 = extra == 0 ? 0xff : 0;
  __mmask8 okm = _mm512_cmp_pd_mask(_mm512_abs_pd(pl), big, _CMP_LE_OQ);
  if constexpr (!InRange)
    okm &= _mm512_cmp_pd_mask(mx, _mm512_set1_pd(kHuge), _CMP_LE_OQ) & _mm512_cmp_pd_mask(mn, _mm512_set1_pd(kTiny), _CMP_GE_OQ);
  const __m512d x = _mm512_add_pd(pl, sl), z = _mm512_sub_pd(x, pl);
  const __m512d t = _mm512_add_pd(_mm512_sub_pd(pl, _mm512_sub_pd(x, z)), _mm512_sub_pd(sl, z));
  const __m512d E = _mm512_add_pd(_mm512_add_pd(_mm512_mul_pd(vc, Tl), sub), vx);
  const __m512d ax = _mm512_abs_pd(x);
  const __m512d below = _mm512_castsi512_pd(_mm512_sub_epi64(_mm512_castpd_si512(ax), one));  // prev(|x|)
  const __m512d gap = _mm512_mul_pd(_mm512_sub_pd(ax, below), half);
  const __mmask8 exact = _mm512_cmp_pd_mask(Tl, zero, _CMP_EQ_OQ) & extra0;
  const __mmask8 inside = _mm512_cmp_pd_mask(ax, small, _CMP_GE_OQ) & _mm512_cmp_pd_mask(ax, big, _CMP_LT_OQ) &
                          _mm512_cmp_pd_mask(_mm512_add_pd(_mm512_abs_pd(t), E), gap, _CMP_LT_OQ);
  const __mmask8 d = okm & (exact | inside);
  _mm512_storeu_pd(res, _mm512_mask_blend_pd(exact, x, pl));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(dec), _mm512_cvtepi64_epi8(_mm512_maskz_set1_epi64(d, 1)));
}

// dot2_certify's AVX-512 blocks: dot2_avx512's loop for 16 lanes, then certify_avx512's steps on
// the registers. Returns the lanes done (a multiple of 16). Two shortcuts, the same values:
// - the first term from p = -0, s = 0, T = 0 is p = h (-0 + h is h for every h), q = +0 (for a
//   finite h; a lane with a non-finite product fails the range verdict, its values unread), so
//   s = 0 + (0 + r) and T = 0 + (0 + |r|) are the step's own operations;
// - InRange: the caller knows every product is an exact zero (a zero factor) or within
//   [2^-960, 2^1000] (sink_attention.cpp's per-key test): the largest and smallest |product| are
//   not tracked, the range verdict reduces to p being finite, as dot2's own verdict would be.
constexpr std::size_t kAhead = 8;  // terms a block's rows are prefetched ahead

template <bool InRange>
__attribute__((target("avx512f"))) std::size_t dot2_certify_avx512(std::size_t n, std::size_t lanes, const double* A,
                                                                    std::size_t lda, const std::int32_t* rows,
                                                                    const double* b, double c, double extra,
                                                                    double* result, unsigned char* decided) {
  const __m512d inf = _mm512_set1_pd(INFINITY), zero = _mm512_setzero_pd();
  std::size_t l = 0;
  for (; l + 16 <= lanes && n > 0; l += 16) {
    __m512d p0, p1, s0, s1, T0, T1;
    __m512d mx0 = zero, mx1 = zero, mn0 = inf, mn1 = inf;
    {  // the first term
      const double* a = row_of(A, lda, rows, 0) + l;
      const __m512d bb = _mm512_set1_pd(b[0]);
      const __m512d a0 = _mm512_loadu_pd(a), a1 = _mm512_loadu_pd(a + 8);
      const __m512d h0 = _mm512_mul_pd(a0, bb), h1 = _mm512_mul_pd(a1, bb);
      const __m512d r0 = _mm512_fmsub_pd(a0, bb, h0), r1 = _mm512_fmsub_pd(a1, bb, h1);
      p0 = h0, p1 = h1;
      s0 = _mm512_add_pd(zero, _mm512_add_pd(zero, r0)), s1 = _mm512_add_pd(zero, _mm512_add_pd(zero, r1));
      T0 = _mm512_add_pd(zero, _mm512_add_pd(zero, _mm512_abs_pd(r0)));
      T1 = _mm512_add_pd(zero, _mm512_add_pd(zero, _mm512_abs_pd(r1)));
      if constexpr (!InRange) {
        const __m512d ah0 = _mm512_abs_pd(h0), ah1 = _mm512_abs_pd(h1);
        mx0 = ah0, mx1 = ah1;  // max(0, |h|): |h| >= 0 or NaN; a NaN shows in p below
        if (b[0] != 0) {
          const __mmask8 nz0 = _mm512_cmp_pd_mask(a0, zero, _CMP_NEQ_UQ), nz1 = _mm512_cmp_pd_mask(a1, zero, _CMP_NEQ_UQ);
          mn0 = _mm512_mask_min_pd(mn0, nz0, mn0, ah0);
          mn1 = _mm512_mask_min_pd(mn1, nz1, mn1, ah1);
        }
      }
    }
    Lanes512 v0{p0, s0, T0, mx0, mn0}, v1{p1, s1, T1, mx1, mn1};
    for (std::size_t i = 1; i < n; ++i) {  // dot2_avx512's step
      const double* a = row_of(A, lda, rows, i) + l;
      if (i + kAhead < n) {
        const double* ahead = row_of(A, lda, rows, i + kAhead) + l;
        _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char*>(ahead + 8), _MM_HINT_T0);
      }
      const __m512d bb = _mm512_set1_pd(b[i]);
      dot2_step512<!InRange>(v0, _mm512_loadu_pd(a), bb, b[i] != 0);
      dot2_step512<!InRange>(v1, _mm512_loadu_pd(a + 8), bb, b[i] != 0);
    }
    verdict_avx512<InRange>(v0.p, v0.s, v0.T, v0.mx, v0.mn, c, extra, result + l, decided + l);
    verdict_avx512<InRange>(v1.p, v1.s, v1.T, v1.mx, v1.mn, c, extra, result + l + 8, decided + l + 8);
  }
  return l;
}

// error_sums on 8 lanes at a time, their values gathered from the rows: detail::exact_error_sum's
// steps in the same order on each lane (this file builds with -ffp-contract=off; the fma is
// TwoProduct's, whose error is exactly product_error's). Returns the lanes done (a multiple of 8).
__attribute__((target("avx512f"))) std::size_t error_sums_avx512(std::size_t n, const double* A, std::size_t lda,
                                                                 const std::int32_t* rows, const double* b, std::size_t k,
                                                                 const std::int32_t* which, double* out,
                                                                 unsigned char* held) {
  const __m512d zero = _mm512_setzero_pd(), tiny = _mm512_set1_pd(kTiny), huge = _mm512_set1_pd(kHuge);
  const __m512d big = _mm512_set1_pd(DBL_MAX);
  std::size_t j = 0;
  for (; j + 8 <= k; j += 8) {
    const __m256i at = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(which + j));
    __m512d p = _mm512_set1_pd(-0.0), s = zero;
    __mmask8 ok = 0xff;
    for (std::size_t i = 0; i < n && ok; ++i) {
      const __m512d a = _mm512_i32gather_pd(at, row_of(A, lda, rows, i), 8);
      const __m512d bb = _mm512_set1_pd(b[i]);
      const __m512d h = _mm512_mul_pd(a, bb), ah = _mm512_abs_pd(h);
      // h == 0 ? (a == 0 || b == 0) : 2^-960 <= |h| <= 2^1000 (a NaN fails both)
      const __mmask8 hz = _mm512_cmp_pd_mask(h, zero, _CMP_EQ_OQ);
      const __mmask8 factor0 = b[i] == 0 ? __mmask8(0xff) : _mm512_cmp_pd_mask(a, zero, _CMP_EQ_OQ);
      const __mmask8 in = _mm512_cmp_pd_mask(ah, tiny, _CMP_GE_OQ) & _mm512_cmp_pd_mask(ah, huge, _CMP_LE_OQ);
      ok &= (hz & factor0) | (__mmask8(~hz) & in);
      const __m512d r = _mm512_fmsub_pd(a, bb, h);
      const __m512d x = _mm512_add_pd(p, h), z = _mm512_sub_pd(x, p);
      const __m512d q = _mm512_add_pd(_mm512_sub_pd(p, _mm512_sub_pd(x, z)), _mm512_sub_pd(h, z));
      p = x;
      const __m512d c = _mm512_add_pd(q, r), zc = _mm512_sub_pd(c, q);
      const __m512d ec = _mm512_add_pd(_mm512_sub_pd(q, _mm512_sub_pd(c, zc)), _mm512_sub_pd(r, zc));
      const __m512d s2 = _mm512_add_pd(s, c), zs = _mm512_sub_pd(s2, s);
      const __m512d es = _mm512_add_pd(_mm512_sub_pd(s, _mm512_sub_pd(s2, zs)), _mm512_sub_pd(c, zs));
      ok &= _mm512_cmp_pd_mask(ec, zero, _CMP_EQ_OQ) & _mm512_cmp_pd_mask(es, zero, _CMP_EQ_OQ);
      s = s2;
    }
    ok &= _mm512_cmp_pd_mask(_mm512_abs_pd(p), big, _CMP_LE_OQ) & _mm512_cmp_pd_mask(_mm512_abs_pd(s), big, _CMP_LE_OQ);
    const __m512d result = _mm512_add_pd(p, s);
    ok &= _mm512_cmp_pd_mask(result, zero, _CMP_NEQ_UQ);  // result != 0
    _mm512_mask_i32scatter_pd(out, ok, at, result, 8);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(held + j), _mm512_cvtepi64_epi8(_mm512_maskz_set1_epi64(ok, 1)));
  }
  return j;
}

#endif  // KPARITY_LANES_X86

}  // namespace

void certify(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
             std::size_t m, double extra, double* result, unsigned char* decided) noexcept {
  if (m == 0) {  // detail::certify: the empty sum is +0, whatever the lanes hold
    for (std::size_t l = 0; l < lanes; ++l) result[l] = 0.0, decided[l] = ok[l];
    return;
  }
  if (m >= (std::size_t{1} << 30)) {
    for (std::size_t l = 0; l < lanes; ++l) decided[l] = 0;
    return;
  }
  const double c = 2.0 * static_cast<double>(m + 1) * 0x1p-53;
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: done = certify_avx512(lanes, p, s, T, ok, c, extra, result, decided); break;
    case kAvx2: done = certify_avx2(lanes, p, s, T, ok, c, extra, result, decided); break;
    default: break;
  }
#endif
  certify_scalar(done, lanes, p, s, T, ok, c, extra, result, decided);
}

std::size_t dot2_certify(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
                         const double* b, std::size_t m, double extra, double* result, unsigned char* decided,
                         bool in_range) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  if (m > 0 && m < (std::size_t{1} << 30) && active().load(std::memory_order_relaxed) == kAvx512) {
    const double c = 2.0 * static_cast<double>(m + 1) * 0x1p-53;
    done = in_range ? dot2_certify_avx512<true>(n, lanes, A, lda, rows, b, c, extra, result, decided)
                    : dot2_certify_avx512<false>(n, lanes, A, lda, rows, b, c, extra, result, decided);
  }
#endif
  // The rest (other kernels, the last lanes) through dot2 and certify, a bounded chunk at a time.
  constexpr std::size_t kChunk = 64;
  double p[kChunk], s[kChunk], T[kChunk];
  unsigned char ok[kChunk];
  for (std::size_t l = done; l < lanes; l += kChunk) {
    const std::size_t k = std::min(kChunk, lanes - l);
    for (std::size_t i = 0; i < k; ++i) p[i] = -0.0, s[i] = 0.0, T[i] = 0.0, ok[i] = 1;
    dot2(n, k, A + l, lda, rows, b, p, s, T, ok);
    certify(k, p, s, T, ok, m, extra, result + l, decided + l);
  }
  std::size_t decided_count = 0;  // a branch-free count (the lanes are usually all decided)
  for (std::size_t l = 0; l < lanes; ++l) decided_count += decided[l];
  return lanes - decided_count;
}

void error_sums(std::size_t n, const double* A, std::size_t lda, const std::int32_t* rows, const double* b,
                std::size_t k, const std::int32_t* which, double* out, unsigned char* held) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  if (active().load(std::memory_order_relaxed) == kAvx512) done = error_sums_avx512(n, A, lda, rows, b, k, which, out, held);
#endif
  for (std::size_t j = done; j < k; ++j) {
    const std::size_t l = static_cast<std::size_t>(which[j]);
    double r;
    held[j] = detail::exact_error_sum(n, [&](std::size_t i) { return std::pair{row_of(A, lda, rows, i)[l], b[i]}; }, r);
    if (held[j]) out[l] = r;
  }
}

void dot2(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
          const double* b, double* p, double* s, double* T, unsigned char* ok) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512:
      dot2_avx512(n, lanes, A, lda, rows, b, p, s, T, ok, done);
      if (lanes - done >= 8) {  // one more half block
        std::size_t more = 0;
        dot2_avx2(n, lanes - done, A + done, lda, rows, b, p + done, s + done, T + done, ok + done, more);
        done += more;
      }
      break;
    case kAvx2:
      dot2_avx2(n, lanes, A, lda, rows, b, p, s, T, ok, done);
      break;
    default:
      break;
  }
#endif
  dot2_scalar(n, done, lanes, A, lda, rows, b, p, s, T, ok);
}

namespace {

// The update of dot2_scaled / dot2_updated on lanes [l0, lanes), element by element, then dot2 on
// them: the lanes the AVX-512 or AVX2 kernel leaves, and every lane with the scalar kernel.
template <Pre P>
void dot2_pre(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* c, const double* d,
              const double* b, double* p, double* s, double* T, unsigned char* ok) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: dot2_pre_avx512<P>(n, lanes, A, lda, c, d, b, p, s, T, ok, done); break;
    case kAvx2: dot2_pre_avx2<P>(n, lanes, A, lda, c, d, b, p, s, T, ok, done); break;
    default: break;
  }
#endif
  if (done == lanes) return;
  for (std::size_t i = 0; i < n; ++i) {
    double* a = A + i * lda;
    for (std::size_t l = done; l < lanes; ++l) a[l] = P == Pre::scale ? a[l] * c[i] : std::fma(d[l], c[i], a[l]);
  }
  dot2(n, lanes - done, A + done, lda, nullptr, b, p + done, s + done, T + done, ok + done);
}

}  // namespace

void dot2_scaled(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* scale, const double* b,
                 double* p, double* s, double* T, unsigned char* ok) noexcept {
  dot2_pre<Pre::scale>(n, lanes, A, lda, scale, nullptr, b, p, s, T, ok);
}
void dot2_updated(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* d, const double* k,
                  const double* b, double* p, double* s, double* T, unsigned char* ok) noexcept {
  dot2_pre<Pre::fma>(n, lanes, A, lda, k, d, b, p, s, T, ok);
}

const char* kernel_name() noexcept {
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: return "avx512";
    case kAvx2: return "avx2";
    default: return "scalar";
  }
}

ForceKernel::ForceKernel(const char* name) : previous_(active().load()) {
  const std::string n = name;
  const int want = n == "avx512" ? kAvx512 : n == "avx2" ? kAvx2 : n == "scalar" ? kScalar : -1;
  if (want < 0) throw std::invalid_argument("unknown lane kernel '" + n + "'");
  if (want > best_kernel() || (want == kAvx2 && best_kernel() < kAvx2))
    throw std::invalid_argument(std::string("lane kernel '") + name + "' is not available on this machine");
  active().store(want);
}
ForceKernel::~ForceKernel() { active().store(previous_); }

}  // namespace kparity::reference::lanes
