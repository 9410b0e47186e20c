// elements::narrow_f16_run / narrow_bf16_run (elements.hpp): runs of fp64 values stored as 16-bit
// floats, sixteen at a time with AVX-512. core's f64_to_f16_bits / f64_to_bf16_bits round an fp64
// value to fp32 by round-to-odd (f64_to_f32_odd: toward zero, the last bit set where that lost
// anything, a NaN narrowed as static_cast does), then that float once to nearest even. Here the
// same two steps on sixteen lanes: vcvtpd2ps toward zero, the lanes whose float differs from the
// input (an ordered compare: NaNs never) get their last bit set; then vcvtps2ph rounds to nearest
// even (its NaN keeps the sign and the top payload bits and sets the quiet bit, as f32_to_f16_bits
// does), and for bf16 the integer rounding below (f32_to_bf16_bits' steps: add 0x7fff plus the kept
// lsb, a NaN's quiet bit forced). Every block is vectorised, fp32 values or not (issue 32 B: drawn
// fp64 values fell back to the scalar conversions, a tenth of a kernel-sized sparse case's host
// time). With AVX2 and F16C but no AVX-512 (no embedded rounding): eight lanes, the conversion to
// nearest (the scalar static_cast's), then a lane whose float lies farther from zero than the input
// steps one ulp toward zero (its magnitude's bits minus one: std::nextafter(f, 0) for a finite
// non-zero f, and inf -> FLT_MAX as truncation gives), which is the truncation; the last bit is set
// where the float differs from the input, as above (issue 32 (3): the scalar loop was a fifth of a
// kernel-sized sparse case on the AVX2 hosts); the tail and other machines store element by element through those functions.
#include <cstdint>
#include <cstring>

#include "kparity/core/dtype.hpp"
#include "kparity/reference/elements.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KPARITY_NARROW_X86 1
#include <immintrin.h>
#endif

namespace kparity::reference::elements {
namespace {

#ifdef KPARITY_NARROW_X86
bool has_avx512() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}

// The 16 values as fp32 rounded to odd, as f64_to_f32_odd rounds each.
__attribute__((target("avx512f"))) inline __m512 as_floats_odd(const double* in) {
  const __m512d a = _mm512_loadu_pd(in), b = _mm512_loadu_pd(in + 8);
  const __m256 fa = _mm512_cvt_roundpd_ps(a, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __m256 fb = _mm512_cvt_roundpd_ps(b, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
  const __mmask8 la = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fa), a, _CMP_NEQ_OQ);
  const __mmask8 lb = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fb), b, _CMP_NEQ_OQ);
  const __m512i u = _mm512_castpd_si512(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(fa)), _mm256_castps_pd(fb), 1));
  const __mmask16 lost = static_cast<__mmask16>(la | (static_cast<unsigned>(lb) << 8));
  return _mm512_castsi512_ps(_mm512_mask_or_epi32(u, lost, u, _mm512_set1_epi32(1)));
}

__attribute__((target("avx512f"))) std::int64_t f16_avx512(const double* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 f = as_floats_odd(in + i);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

__attribute__((target("avx512f"))) std::int64_t bf16_avx512(const double* in, std::int64_t n, std::uint16_t* out) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x0040);
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 f = as_floats_odd(in + i);
    const __m512i u = _mm512_castps_si512(f);
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, magnitude), inf);
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(_mm512_srli_epi32(u, 16), one))), 16);
    const __m512i nan_bits = _mm512_or_si512(_mm512_srli_epi32(u, 16), quiet);
    const __m512i r = _mm512_mask_blend_epi32(nan, rounded, nan_bits);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtepi32_epi16(r));
  }
  return i;
}

bool has_avx2_f16c() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("f16c") != 0;
  }();
  return yes;
}

// Four 64-bit masks (all-ones or zero) narrowed to 32-bit lanes: their low halves, in order.
__attribute__((target("avx2"))) inline __m128i narrow_mask(__m256d m) {
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), _mm256_setr_epi32(0, 2, 4, 6, 0, 0, 0, 0)));
}

// The 8 values as fp32 rounded to odd, as f64_to_f32_odd rounds each (see the header).
__attribute__((target("avx2,f16c"))) inline __m256 as_floats_odd8(const double* in) {
  const __m256d a = _mm256_loadu_pd(in), b = _mm256_loadu_pd(in + 4);
  const __m128 fa = _mm256_cvtpd_ps(a), fb = _mm256_cvtpd_ps(b);
  const __m256d sign = _mm256_set1_pd(-0.0);
  const __m256d wa = _mm256_cvtps_pd(fa), wb = _mm256_cvtps_pd(fb);
  // Ordered compares: a NaN lane neither steps nor gets its last bit set.
  const __m256d up_a = _mm256_cmp_pd(_mm256_andnot_pd(sign, wa), _mm256_andnot_pd(sign, a), _CMP_GT_OQ);
  const __m256d up_b = _mm256_cmp_pd(_mm256_andnot_pd(sign, wb), _mm256_andnot_pd(sign, b), _CMP_GT_OQ);
  const __m256d lost_a = _mm256_cmp_pd(wa, a, _CMP_NEQ_OQ), lost_b = _mm256_cmp_pd(wb, b, _CMP_NEQ_OQ);
  const __m256i up = _mm256_set_m128i(narrow_mask(up_b), narrow_mask(up_a));
  const __m256i lost = _mm256_set_m128i(narrow_mask(lost_b), narrow_mask(lost_a));
  __m256i u = _mm256_castps_si256(_mm256_set_m128(fb, fa));
  u = _mm256_add_epi32(u, up);  // up is -1 where the float is farther from zero: one ulp toward it
  u = _mm256_or_si256(u, _mm256_and_si256(lost, _mm256_set1_epi32(1)));
  return _mm256_castsi256_ps(u);
}

__attribute__((target("avx2,f16c"))) std::int64_t f16_avx2(const double* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = as_floats_odd8(in + i);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

__attribute__((target("avx2,f16c"))) std::int64_t bf16_avx2(const double* in, std::int64_t n, std::uint16_t* out) {
  const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000);
  const __m256i bias = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1), quiet = _mm256_set1_epi32(0x0040);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_castps_si256(as_floats_odd8(in + i));
    // |u| as a signed integer is non-negative: the signed compare is the unsigned one.
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, magnitude), inf);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(_mm256_srli_epi32(u, 16), one))), 16);
    const __m256i nan_bits = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
    const __m256i r = _mm256_blendv_epi8(rounded, nan_bits, nan);
    // Every lane is below 2^16: the unsigned saturating pack keeps it.
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1)));
  }
  return i;
}
#endif

}  // namespace

void narrow_f16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_NARROW_X86
  if (has_avx512()) i = f16_avx512(in, n, out);
  else if (has_avx2_f16c()) i = f16_avx2(in, n, out);
#endif
  for (; i < n; ++i) out[i] = f64_to_f16_bits(in[i]);
}

void narrow_bf16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_NARROW_X86
  if (has_avx512()) i = bf16_avx512(in, n, out);
  else if (has_avx2_f16c()) i = bf16_avx2(in, n, out);
#endif
  for (; i < n; ++i) out[i] = f64_to_bf16_bits(in[i]);
}

}  // namespace kparity::reference::elements
