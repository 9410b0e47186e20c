// elements::narrow_f16_run / narrow_bf16_run (elements.hpp): runs of fp64 values stored as 16-bit
// floats, sixteen at a time with AVX-512 where every value of the block is exactly an fp32 value
// (the faithful model's results are fp32 values): then core's f64_to_f16_bits / f64_to_bf16_bits
// round that float once to nearest even, which is what vcvtps2ph does (its NaN keeps the sign and
// the top payload bits and sets the quiet bit, as f32_to_f16_bits does) and what the integer
// rounding below does for bf16 (f32_to_bf16_bits' steps: add 0x7fff plus the kept lsb, a NaN's
// quiet bit forced). Blocks holding a value that is not an fp32 value, the tail and other
// machines store element by element through those functions. Storing a kernel-sized sparse
// faithful result converts 16.7 M values (issue 25).
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

// The 16 values as fp32, and whether each is exactly its fp32 value (NaNs count as exact: a NaN
// narrows to fp32 as static_cast does, which is what f64_to_f32_odd returns for it).
__attribute__((target("avx512f"))) inline bool as_floats(const double* in, __m512& f) {
  const __m512d a = _mm512_loadu_pd(in), b = _mm512_loadu_pd(in + 8);
  const __m256 fa = _mm512_cvtpd_ps(a), fb = _mm512_cvtpd_ps(b);
  const __mmask8 ea = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fa), a, _CMP_EQ_UQ);
  const __mmask8 eb = _mm512_cmp_pd_mask(_mm512_cvtps_pd(fb), b, _CMP_EQ_UQ);
  f = _mm512_castpd_ps(_mm512_insertf64x4(_mm512_castpd256_pd512(_mm256_castps_pd(fa)), _mm256_castps_pd(fb), 1));
  return ea == 0xff && eb == 0xff;
}

__attribute__((target("avx512f"))) std::int64_t f16_avx512(const double* in, std::int64_t n, std::uint16_t* out) {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 f;
    if (!as_floats(in + i, f)) {
      for (int k = 0; k < 16; ++k) out[i + k] = f64_to_f16_bits(in[i + k]);
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  return i;
}

__attribute__((target("avx512f"))) std::int64_t bf16_avx512(const double* in, std::int64_t n, std::uint16_t* out) {
  const __m512i magnitude = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
  const __m512i bias = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x0040);
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 f;
    if (!as_floats(in + i, f)) {
      for (int k = 0; k < 16; ++k) out[i + k] = f64_to_bf16_bits(in[i + k]);
      continue;
    }
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
#endif

}  // namespace

void narrow_f16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_NARROW_X86
  if (has_avx512()) i = f16_avx512(in, n, out);
#endif
  for (; i < n; ++i) out[i] = f64_to_f16_bits(in[i]);
}

void narrow_bf16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_NARROW_X86
  if (has_avx512()) i = bf16_avx512(in, n, out);
#endif
  for (; i < n; ++i) out[i] = f64_to_bf16_bits(in[i]);
}

}  // namespace kparity::reference::elements
