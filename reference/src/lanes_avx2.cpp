// The AVX2 + FMA kernels of lane_kernels.hpp: 8 lanes a block (two registers of 4), for x86-64 hosts
// without AVX-512 (the same operations as lanes_avx512.cpp's, lane by lane).
#include <cfloat>
#include <cmath>

#include "lane_kernels.hpp"

#ifdef KPARITY_LANES_X86
#include <immintrin.h>

namespace kparity::reference::lanes::kernels {

// dot2_step512 on 4 lanes in AVX2 registers: the same operations (the AVX2 + FMA hosts' kernels, run
// on two blocks a term).
struct Lanes256 {
  __m256d p, s, T, mx, mn;
};

template <bool Track = true>
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
  if constexpr (Track) {
    const __m256d ah = _mm256_andnot_pd(sign, h);
    v.mx = _mm256_max_pd(v.mx, ah);
    if (b_nonzero) {
      const __m256d nz = _mm256_cmp_pd(a, _mm256_setzero_pd(), _CMP_NEQ_UQ);
      v.mn = _mm256_min_pd(v.mn, _mm256_blendv_pd(_mm256_set1_pd(INFINITY), ah, nz));
    }
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

// dot2_pre_avx512 in AVX2 + FMA registers, 8 lanes a block: the element updated in place (A * c[i],
// or fma(d[l], c[i], A): one rounding, as std::fma) and then dot2_step256 on it. Track: the range
// test; off under the caller's in-range promise (lane_kernels.hpp), which makes its verdict known.
template <Pre P, bool Track>
__attribute__((target("avx2,fma"))) void dot2_pre_avx2_t(std::size_t n, std::size_t lanes, double* A, std::size_t lda,
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
      dot2_step256<Track>(v0, a0, bb, b[i] != 0);
      dot2_step256<Track>(v1, a1, bb, b[i] != 0);
    }
    store_lanes8(v0, v1, l, p, s, T, ok);
  }
  done = l;
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

// verdict_avx512 on 4 lanes in AVX2 registers: the same tests, so the same decided subset and results.
template <bool InRange>
__attribute__((target("avx2,fma"), always_inline)) inline void verdict_avx2(__m256d pl, __m256d sl, __m256d Tl, __m256d mx,
                                                                          __m256d mn, double c, double extra,
                                                                          double* res, unsigned char* dec) {
  const __m256d zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
  const __m256d vc = _mm256_set1_pd(c), sub = _mm256_set1_pd(0x1p-1074), vx = _mm256_set1_pd(extra);
  const __m256d big = _mm256_set1_pd(DBL_MAX), small = _mm256_set1_pd(0x1p-1000), half = _mm256_set1_pd(0.5);
  __m256d okm = _mm256_cmp_pd(_mm256_andnot_pd(sign, pl), big, _CMP_LE_OQ);
  if constexpr (!InRange)
    okm = _mm256_and_pd(okm, _mm256_and_pd(_mm256_cmp_pd(mx, _mm256_set1_pd(kHuge), _CMP_LE_OQ),
                                           _mm256_cmp_pd(mn, _mm256_set1_pd(kTiny), _CMP_GE_OQ)));
  const __m256d x = _mm256_add_pd(pl, sl), z = _mm256_sub_pd(x, pl);
  const __m256d t = _mm256_add_pd(_mm256_sub_pd(pl, _mm256_sub_pd(x, z)), _mm256_sub_pd(sl, z));
  const __m256d E = _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(vc, Tl), sub), vx);
  const __m256d ax = _mm256_andnot_pd(sign, x);
  const __m256d below = _mm256_castsi256_pd(_mm256_sub_epi64(_mm256_castpd_si256(ax), _mm256_set1_epi64x(1)));
  const __m256d gap = _mm256_mul_pd(_mm256_sub_pd(ax, below), half);
  const __m256d exact = extra == 0 ? _mm256_cmp_pd(Tl, zero, _CMP_EQ_OQ) : zero;
  const __m256d inside = _mm256_and_pd(
      _mm256_and_pd(_mm256_cmp_pd(ax, small, _CMP_GE_OQ), _mm256_cmp_pd(ax, big, _CMP_LT_OQ)),
      _mm256_cmp_pd(_mm256_add_pd(_mm256_andnot_pd(sign, t), E), gap, _CMP_LT_OQ));
  const int d = _mm256_movemask_pd(_mm256_and_pd(okm, _mm256_or_pd(exact, inside)));
  _mm256_storeu_pd(res, _mm256_blendv_pd(x, pl, exact));
  for (int k = 0; k < 4; ++k) dec[k] = static_cast<unsigned char>((d >> k) & 1);
}

// dot2_certify_avx512 in AVX2 registers, 8 lanes a block (two Lanes256): the same first-term shortcut,
// the same steps, verdict_avx2 on the registers. Returns the lanes done (a multiple of 8).
template <bool InRange>
__attribute__((target("avx2,fma"))) std::size_t dot2_certify_avx2_t(std::size_t n, std::size_t lanes, const double* A,
                                                                  std::size_t lda, const std::int32_t* rows,
                                                                  const double* b, double c, double extra,
                                                                  double* result, unsigned char* decided) {
  const __m256d inf = _mm256_set1_pd(INFINITY), zero = _mm256_setzero_pd(), sign = _mm256_set1_pd(-0.0);
  std::size_t l = 0;
  for (; l + 8 <= lanes && n > 0; l += 8) {
    Lanes256 v0, v1;
    {  // the first term from p = -0, s = 0, T = 0 (dot2_certify_avx512's shortcut)
      const double* a = row_of(A, lda, rows, 0) + l;
      const __m256d bb = _mm256_set1_pd(b[0]);
      const __m256d a0 = _mm256_loadu_pd(a), a1 = _mm256_loadu_pd(a + 4);
      const __m256d h0 = _mm256_mul_pd(a0, bb), h1 = _mm256_mul_pd(a1, bb);
      const __m256d r0 = _mm256_fmsub_pd(a0, bb, h0), r1 = _mm256_fmsub_pd(a1, bb, h1);
      v0.p = h0, v1.p = h1;
      v0.s = _mm256_add_pd(zero, _mm256_add_pd(zero, r0)), v1.s = _mm256_add_pd(zero, _mm256_add_pd(zero, r1));
      v0.T = _mm256_add_pd(zero, _mm256_add_pd(zero, _mm256_andnot_pd(sign, r0)));
      v1.T = _mm256_add_pd(zero, _mm256_add_pd(zero, _mm256_andnot_pd(sign, r1)));
      v0.mx = zero, v1.mx = zero, v0.mn = inf, v1.mn = inf;
      if constexpr (!InRange) {
        const __m256d ah0 = _mm256_andnot_pd(sign, h0), ah1 = _mm256_andnot_pd(sign, h1);
        v0.mx = ah0, v1.mx = ah1;  // max(0, |h|): |h| >= 0 or NaN; a NaN shows in p
        if (b[0] != 0) {
          v0.mn = _mm256_min_pd(inf, _mm256_blendv_pd(inf, ah0, _mm256_cmp_pd(a0, zero, _CMP_NEQ_UQ)));
          v1.mn = _mm256_min_pd(inf, _mm256_blendv_pd(inf, ah1, _mm256_cmp_pd(a1, zero, _CMP_NEQ_UQ)));
        }
      }
    }
    for (std::size_t i = 1; i < n; ++i) {
      const double* a = row_of(A, lda, rows, i) + l;
      if (i + kAhead < n) _mm_prefetch(reinterpret_cast<const char*>(row_of(A, lda, rows, i + kAhead) + l), _MM_HINT_T0);
      const __m256d bb = _mm256_set1_pd(b[i]);
      if constexpr (InRange) {
        dot2_step256<false>(v0, _mm256_loadu_pd(a), bb, false);
        dot2_step256<false>(v1, _mm256_loadu_pd(a + 4), bb, false);
      } else {
        dot2_step256<true>(v0, _mm256_loadu_pd(a), bb, b[i] != 0);
        dot2_step256<true>(v1, _mm256_loadu_pd(a + 4), bb, b[i] != 0);
      }
    }
    verdict_avx2<InRange>(v0.p, v0.s, v0.T, v0.mx, v0.mn, c, extra, result + l, decided + l);
    verdict_avx2<InRange>(v1.p, v1.s, v1.T, v1.mx, v1.mn, c, extra, result + l + 4, decided + l + 4);
  }
  return l;
}


void dot2_pre_avx2(Pre pre, bool in_range, std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                   const double* c, const double* d, const double* b, double* p, double* s, double* T,
                   unsigned char* ok, std::size_t& done) {
  if (pre == Pre::scale) {
    if (in_range) dot2_pre_avx2_t<Pre::scale, false>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
    else dot2_pre_avx2_t<Pre::scale, true>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
  } else {
    if (in_range) dot2_pre_avx2_t<Pre::fma, false>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
    else dot2_pre_avx2_t<Pre::fma, true>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
  }
}

std::size_t dot2_certify_avx2(bool in_range, std::size_t n, std::size_t lanes, const double* A, std::size_t lda,
                              const std::int32_t* rows, const double* b, double c, double extra, double* result,
                              unsigned char* decided) {
  return in_range ? dot2_certify_avx2_t<true>(n, lanes, A, lda, rows, b, c, extra, result, decided)
                  : dot2_certify_avx2_t<false>(n, lanes, A, lda, rows, b, c, extra, result, decided);
}

}  // namespace kparity::reference::lanes::kernels

#endif  // KPARITY_LANES_X86
