// The AVX-512F kernels of lane_kernels.hpp: 16 lanes a block (two registers of 8), error_sums 8.
#include <cfloat>
#include <cmath>

#include "lane_kernels.hpp"

#ifdef KPARITY_LANES_X86
#include <immintrin.h>

namespace kparity::reference::lanes::kernels {

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
template <Pre P, bool Track>
__attribute__((target("avx512f"))) void dot2_pre_avx512_t(std::size_t n, std::size_t lanes, double* A, std::size_t lda,
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
      dot2_step512<Track>(v0, a0, bb, b[i] != 0);
      dot2_step512<Track>(v1, a1, bb, b[i] != 0);
    }
    store_lanes16(v0, v1, l, p, s, T, ok);
  }
  done = l;
}

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

template <bool InRange>
__attribute__((target("avx512f"))) std::size_t dot2_certify_avx512_t(std::size_t n, std::size_t lanes, const double* A,
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


void dot2_pre_avx512(Pre pre, bool in_range, std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                     const double* c, const double* d, const double* b, double* p, double* s, double* T,
                     unsigned char* ok, std::size_t& done) {
  if (pre == Pre::scale) {
    if (in_range) dot2_pre_avx512_t<Pre::scale, false>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
    else dot2_pre_avx512_t<Pre::scale, true>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
  } else {
    if (in_range) dot2_pre_avx512_t<Pre::fma, false>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
    else dot2_pre_avx512_t<Pre::fma, true>(n, lanes, A, lda, c, d, b, p, s, T, ok, done);
  }
}

std::size_t dot2_certify_avx512(bool in_range, std::size_t n, std::size_t lanes, const double* A, std::size_t lda,
                                const std::int32_t* rows, const double* b, double c, double extra, double* result,
                                unsigned char* decided) {
  return in_range ? dot2_certify_avx512_t<true>(n, lanes, A, lda, rows, b, c, extra, result, decided)
                  : dot2_certify_avx512_t<false>(n, lanes, A, lda, rows, b, c, extra, result, decided);
}

}  // namespace kparity::reference::lanes::kernels

#endif  // KPARITY_LANES_X86
