// exact_dots_split (exact_logits.hpp): the proof is in the header.
#include "exact_logits.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kparity/reference/exact_sum.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "lane_clones.hpp"

namespace kparity::reference::sparse::detail {

// At most 26 significant bits: the low 27 bits of the fraction are zero (exact_sum.hpp's test).
bool short_value(double x) noexcept {
  return (std::bit_cast<std::uint64_t>(x) & ((std::uint64_t{1} << 27) - 1)) == 0;
}

namespace {

// Lanes over the channels d of one head's dot (GCC vector extensions: one zmm register with
// AVX-512, two ymm with AVX2, four xmm otherwise), the lanes' sums added at the end: every partial sum
// is exact in any order (header), so the order is free. Row-major q needs no transpose (the earlier
// lanes over heads read a transposed copy of q, a pass over H x D values per token, issue 25).
typedef double v8 __attribute__((vector_size(64)));

// K keys (1 or 4) against every head: SH[k * H + h] = sum_d hi(q_hd k_kd), SL likewise with lo.
template <int K>
__attribute__((always_inline)) inline void split_dots(std::int64_t H, std::int64_t D, const double* __restrict Q,
                                                      const double* const* keys, double C, double* __restrict SH,
                                                      double* __restrict SL) {
  const v8 c = v8{} + C;
  for (std::int64_t h = 0; h < H; ++h) {
    const double* q = Q + h * D;
    v8 sh[K] = {}, sl[K] = {};
    std::int64_t d = 0;
    for (; d + 8 <= D; d += 8) {
      v8 qv;
      std::memcpy(&qv, q + d, sizeof qv);
      for (int k = 0; k < K; ++k) {
        v8 kv;
        std::memcpy(&kv, keys[k] + d, sizeof kv);
        const v8 p = qv * kv;
        const v8 e = (p + c) - c;
        sh[k] += e;
        sl[k] += p - e;
      }
    }
    for (int k = 0; k < K; ++k) {
      double a = 0, b = 0;
      for (int i = 0; i < 8; ++i) a += sh[k][i], b += sl[k][i];
      for (std::int64_t r = d; r < D; ++r) {
        const double p = q[r] * keys[k][r];
        const double e = (p + C) - C;
        a += e;
        b += p - e;
      }
      SH[k * H + h] = a, SL[k * H + h] = b;
    }
  }
}

KPARITY_CLONES void split_dots4(std::int64_t H, std::int64_t D, const double* Q, const double* const* keys, double C,
                                double* SH, double* SL) {
  split_dots<4>(H, D, Q, keys, C, SH, SL);
}
KPARITY_CLONES void split_dots2(std::int64_t H, std::int64_t D, const double* Q, const double* const* keys, double C,
                                double* SH, double* SL) {
  split_dots<2>(H, D, Q, keys, C, SH, SL);
}
KPARITY_CLONES void split_dots1(std::int64_t H, std::int64_t D, const double* Q, const double* key, double C,
                                double* SH, double* SL) {
  const double* keys[1] = {key};
  split_dots<1>(H, D, Q, keys, C, SH, SL);
}

// A lower bound of the least lsb of n values widened from a float dtype of `bits` significant bits
// whose smallest lsb is 2^min_lsb (a value 2^e * 1.f has its lsb at or above max(e - bits + 1,
// min_lsb)), their largest |value|, and whether one is not finite. The bound is monotone in e, so the
// least over the values is the bound of the least biased exponent of a non-zero value: the pass keeps
// that exponent, max |x| and the non-finite flag (AVX-512 where the machine has it: the scalar loop
// was 6% of a kernel-sized sparse case's oracle, issue 25). With a non-finite value the caller
// reads only `special`.
void scan_narrow_scalar(std::int64_t i, std::int64_t n, const double* x, std::uint64_t& emin, double& mx, bool& bad) {
  for (; i < n; ++i) {
    std::uint64_t b;
    std::memcpy(&b, x + i, 8);
    const std::uint64_t e = (b >> 52) & 0x7ff;
    bad = bad || e == 0x7ff;
    if ((b << 1) != 0 && e < emin) emin = e;
    mx = std::max(mx, std::fabs(x[i]));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx512f"))) std::int64_t scan_narrow_avx512(std::int64_t n, const double* x, std::uint64_t& emin,
                                                                   double& mx, bool& bad) {
  __m512i vmin = _mm512_set1_epi64(0x800);
  __m512d vmax = _mm512_setzero_pd();
  const __m512i expo = _mm512_set1_epi64(0x7ff), magnitude = _mm512_set1_epi64(0x7fffffffffffffffll);
  __mmask8 special = 0;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d v = _mm512_loadu_pd(x + i);
    const __m512i b = _mm512_castpd_si512(v);
    const __m512i e = _mm512_and_si512(_mm512_srli_epi64(b, 52), expo);
    const __mmask8 nonzero = _mm512_test_epi64_mask(b, magnitude);
    vmin = _mm512_mask_min_epu64(vmin, nonzero, vmin, e);
    special |= _mm512_cmpeq_epi64_mask(e, expo);
    vmax = _mm512_max_pd(vmax, _mm512_abs_pd(v));
  }
  if (special) bad = true;
  emin = std::min<std::uint64_t>(emin, _mm512_reduce_min_epu64(vmin));
  if (!bad) mx = std::max(mx, _mm512_reduce_max_pd(vmax));  // NaN-free lanes: the largest |x|
  return i;
}
// The same pass in four lanes with AVX2 (machines without AVX-512: the scalar loop was 5% of a
// kernel-sized sparse case on the AVX2 hosts, issue 32 (3)). Exponents are 11-bit: the signed 64-bit
// compare is the unsigned one.
__attribute__((target("avx2"))) std::int64_t scan_narrow_avx2(std::int64_t n, const double* x, std::uint64_t& emin,
                                                              double& mx, bool& bad) {
  __m256i vmin = _mm256_set1_epi64x(0x800);
  __m256d vmax = _mm256_setzero_pd();
  const __m256i expo = _mm256_set1_epi64x(0x7ff), magnitude = _mm256_set1_epi64x(0x7fffffffffffffffll);
  const __m256i zero = _mm256_setzero_si256();
  __m256i special = zero;
  std::int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d v = _mm256_loadu_pd(x + i);
    const __m256i b = _mm256_castpd_si256(v);
    const __m256i e = _mm256_and_si256(_mm256_srli_epi64(b, 52), expo);
    const __m256i is_zero = _mm256_cmpeq_epi64(_mm256_and_si256(b, magnitude), zero);
    // A lane takes e where the value is non-zero and e is below its minimum so far.
    const __m256i lower = _mm256_andnot_si256(is_zero, _mm256_cmpgt_epi64(vmin, e));
    vmin = _mm256_blendv_epi8(vmin, e, lower);
    special = _mm256_or_si256(special, _mm256_cmpeq_epi64(e, expo));
    vmax = _mm256_max_pd(vmax, _mm256_castsi256_pd(_mm256_and_si256(b, magnitude)));
  }
  if (!_mm256_testz_si256(special, special)) bad = true;
  alignas(32) std::uint64_t m[4];
  alignas(32) double a[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(m), vmin);
  _mm256_store_pd(a, vmax);
  for (int k = 0; k < 4; ++k) emin = std::min<std::uint64_t>(emin, m[k]);
  if (!bad) mx = std::max({mx, a[0], a[1], a[2], a[3]});  // NaN-free lanes: the largest |x|
  return i;
}
bool has_avx2() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
bool has_avx512() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return yes;
}
#endif

void scan_narrow(std::int64_t n, const double* x, int bits, int min_lsb, int& lsb, double& vmax, bool& special) {
  std::uint64_t emin = 0x800;
  double mx = 0;
  bool bad = false;
  std::int64_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (has_avx512()) i = scan_narrow_avx512(n, x, emin, mx, bad);
  else if (has_avx2()) i = scan_narrow_avx2(n, x, emin, mx, bad);
#endif
  scan_narrow_scalar(i, n, x, emin, mx, bad);
  lsb = emin == 0x800 ? kNoLsb : static_cast<int>(std::max<std::int64_t>(static_cast<std::int64_t>(emin) - 1023 - bits + 1, min_lsb));
  vmax = mx, special = bad;
}

}  // namespace

bool exact_dots_split(const double* Q, DType q_dtype, std::int64_t H, std::int64_t D, const TokenKeys& keys,
                      const RowStats& rs, std::vector<double>& hi, std::vector<double>& lo, const std::int64_t* same) {
  const std::int64_t n = keys.size();
  if (D > 2048 || H == 0 || n == 0) return false;
  // One pass over q: the non-finite values, max |q|, a lower bound of the least lsb. Widened 16-bit
  // and fp32 values need no test of their length; others are measured exactly (lsb_exponent).
  double qmax = 0;
  int q_lsb = kNoLsb;
  if (q_dtype == DType::bf16 || q_dtype == DType::f16 || q_dtype == DType::f32) {
    const int bits = q_dtype == DType::bf16 ? 8 : q_dtype == DType::f16 ? 11 : 24;
    const int min_lsb = q_dtype == DType::bf16 ? -133 : q_dtype == DType::f16 ? -24 : -149;
    bool special = false;
    scan_narrow(H * D, Q, bits, min_lsb, q_lsb, qmax, special);
    if (special) return false;
  } else {
    for (std::int64_t i = 0; i < H * D; ++i) {
      if (!std::isfinite(Q[i]) || !short_value(Q[i])) return false;
      qmax = std::max(qmax, std::fabs(Q[i]));
      q_lsb = std::min(q_lsb, lsb_exponent(Q[i]));
    }
  }
  // The finite keys; a key holding a non-finite value gets NaN parts (the caller's per-key path).
  std::vector<std::int64_t> live;
  int k_lsb = kNoLsb;
  double kmax = 0;
  std::vector<std::int64_t> repeats;  // finite keys of a row an earlier key read: copied at the end
  for (std::int64_t j = 0; j < n; ++j) {
    if (!rs.finite[j]) continue;
    if (!rs.shortv[j]) return false;
    if (same != nullptr && same[j] != j) {
      repeats.push_back(j);
      continue;
    }
    live.push_back(j);
    k_lsb = std::min(k_lsb, rs.lsb[j]), kmax = std::max(kmax, rs.abssum[j]);
  }
  hi.assign(static_cast<std::size_t>(H * n), std::numeric_limits<double>::quiet_NaN());
  lo.assign(hi.size(), std::numeric_limits<double>::quiet_NaN());
  auto copy_repeats = [&] {
    for (std::int64_t j : repeats)
      for (std::int64_t h = 0; h < H; ++h) hi[h * n + j] = hi[h * n + same[j]], lo[h * n + j] = lo[h * n + same[j]];
  };
  if (q_lsb == kNoLsb || k_lsb == kNoLsb) {  // every product with a finite key is +-0
    for (std::int64_t j : live)
      for (std::int64_t h = 0; h < H; ++h) hi[h * n + j] = lo[h * n + j] = 0.0;
    copy_repeats();
    return true;
  }
  const int L = q_lsb + k_lsb;
  if (L + 94 > 1023 || L < -1074) return false;
  // sum_d |q_d k_d| <= qmax * sum_d |k_d|; the computed sum |k| of <= 2048 terms is low by less than
  // 2^-41 relative, the products below by 2^-52 each: the margin 2^-40 covers both.
  if (!(qmax * kmax * (1 + 0x1p-40) < std::ldexp(1.0, L + 93))) return false;
  const double C = 1.5 * std::ldexp(1.0, L + 94);

  std::vector<double> SH(static_cast<std::size_t>(4 * H)), SL(SH.size());
  const double* rows = keys.rows.data();
  const auto nl = static_cast<std::int64_t>(live.size());
  for (std::int64_t g = 0; g < nl; g += 4) {
    const std::int64_t m = std::min<std::int64_t>(4, nl - g);
    auto key = [&](std::int64_t i) { return rows + live[static_cast<std::size_t>(g + i)] * D; };
    if (m == 4) {
      const double* four[4] = {key(0), key(1), key(2), key(3)};
      split_dots4(H, D, Q, four, C, SH.data(), SL.data());
    } else {
      std::int64_t i = 0;
      for (; i + 2 <= m; i += 2) {  // pairs of keys share one read of q
        const double* two[2] = {key(i), key(i + 1)};
        split_dots2(H, D, Q, two, C, SH.data() + i * H, SL.data() + i * H);
      }
      if (i < m) split_dots1(H, D, Q, key(i), C, SH.data() + i * H, SL.data() + i * H);
    }
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t j = live[static_cast<std::size_t>(g + i)];
      for (std::int64_t h = 0; h < H; ++h) {
        hi[h * n + j] = SH[i * H + h];
        lo[h * n + j] = SL[i * H + h];
      }
    }
  }
  copy_repeats();
  return true;
}

}  // namespace kparity::reference::sparse::detail
