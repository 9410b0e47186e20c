// elements::widen_f16_run / widen_bf16_run (elements.hpp): contiguous runs of 16-bit floats widened
// to fp64, sixteen at a time with AVX-512 (vcvtph2ps, exact for every half including subnormals,
// then vcvtps2pd), the rest and other machines through f16_bits_to_f32 / bf16_bits_to_f32 element by element.
// Machines with AVX2 and F16C but no AVX-512 (the AMD EPYC hosts of issue 32 (3)) take eight at a time
// with the same two instructions' 256-bit forms (vcvtph2ps has the same NaN and subnormal semantics
// in either encoding): the scalar loop was a tenth of a kernel-sized sparse case there.
// A NaN comes out as the scalar path gives it: the scalar path's float carries the half's payload
// and float-to-double conversion sets the quiet bit; vcvtph2ps sets the quiet bit first and keeps
// the payload (the test compares all 65,536 patterns). Loading q at a kernel-sized sparse call widens
// 16.7 M values (issue 25); GCC did not vectorise the branch-free scalar form.
#include <cstdint>
#include <cstring>

#include "kparity/reference/elements.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KPARITY_WIDEN_X86 1
#include <immintrin.h>
#endif

namespace kparity::reference::elements {
namespace {

#ifdef KPARITY_WIDEN_X86
bool has_avx512() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}

__attribute__((target("avx512f"))) std::int64_t f16_avx512(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 f = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    _mm512_storeu_pd(out + i, _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
    _mm512_storeu_pd(out + i + 8, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))));
  }
  return i;
}

__attribute__((target("avx512f"))) std::int64_t bf16_avx512(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))), 16);
    const __m512 f = _mm512_castsi512_ps(w);
    _mm512_storeu_pd(out + i, _mm512_cvtps_pd(_mm512_castps512_ps256(f)));
    _mm512_storeu_pd(out + i + 8, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(f), 1))));
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

__attribute__((target("avx2,f16c"))) std::int64_t f16_avx2(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  return i;
}

__attribute__((target("avx2"))) std::int64_t bf16_avx2(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i w = _mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))), 16);
    const __m256 f = _mm256_castsi256_ps(w);
    _mm256_storeu_pd(out + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(out + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  return i;
}
#endif

}  // namespace

void widen_f16_run(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_WIDEN_X86
  if (has_avx512()) i = f16_avx512(src, n, out);
  else if (has_avx2_f16c()) i = f16_avx2(src, n, out);
#endif
  for (; i < n; ++i) out[i] = static_cast<double>(f16_bits_to_f32(src[i]));
}

void widen_bf16_run(const std::uint16_t* src, std::int64_t n, double* out) noexcept {
  std::int64_t i = 0;
#ifdef KPARITY_WIDEN_X86
  if (has_avx512()) i = bf16_avx512(src, n, out);
  else if (has_avx2_f16c()) i = bf16_avx2(src, n, out);
#endif
  for (; i < n; ++i) out[i] = static_cast<double>(bf16_bits_to_f32(src[i]));
}

}  // namespace kparity::reference::elements
