// state_range.hpp: the magnitudes of the recurrence's state and vectors, and the proofs of the lane
// passes' in-range promise. Each bound is computed in fp64 with a relative margin of 2^-50 in the
// safe direction, which covers the (at most three) roundings of the bound's own arithmetic.
#include "state_range.hpp"

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace kparity::reference::kda::detail {
namespace {

constexpr double kUp = 1 + 0x1p-50, kDown = 1 - 0x1p-50;
// dot2's range (exact_lanes.hpp), and the least magnitude below which a product may be subnormal
// (its rounding then not relative): the decay's lower bound must stay above it.
constexpr double kTiny = 0x1p-960, kHuge = 0x1p1000, kNormal = 0x1p-1000;
// A derived lower bound below this is measured again at the next token (about 5 tokens' fall
// before a pass could no longer be promised).
constexpr double kRescan = 0x1p-700;

}  // namespace

namespace {

void magnitudes_scalar(const double* x, std::size_t i, std::size_t n, double& lo, double& hi, bool& finite) noexcept {
  for (; i < n; ++i) {
    const double a = std::fabs(x[i]);
    if (!(a <= DBL_MAX)) {  // inf or NaN: not in the range
      finite = false;
      continue;
    }
    hi = a > hi ? a : hi;
    lo = a != 0 && a < lo ? a : lo;
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// Four lanes at a time (the compiler left the loop above scalar: the scan of a head's state was 2% of
// a kda/recurrent case). A zero or a non-finite value is left out of the minimum by making it a NaN,
// which minpd passes over (it returns its second operand), and out of the maximum as a zero.
__attribute__((target("avx2"))) std::size_t magnitudes_avx2(const double* x, std::size_t n, double& lo, double& hi,
                                                           bool& finite) noexcept {
  const __m256d sign = _mm256_set1_pd(-0.0), big = _mm256_set1_pd(DBL_MAX), zero = _mm256_setzero_pd();
  __m256d vlo = _mm256_set1_pd(INFINITY), vhi = zero, bad = zero;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d a = _mm256_andnot_pd(sign, _mm256_loadu_pd(x + i));
    const __m256d nf = _mm256_cmp_pd(a, big, _CMP_NLE_UQ);  // inf or NaN
    bad = _mm256_or_pd(bad, nf);
    vhi = _mm256_max_pd(_mm256_andnot_pd(nf, a), vhi);
    vlo = _mm256_min_pd(_mm256_or_pd(a, _mm256_or_pd(nf, _mm256_cmp_pd(a, zero, _CMP_EQ_OQ))), vlo);
  }
  if (_mm256_movemask_pd(bad) != 0) finite = false;
  alignas(32) double l[4], h[4];
  _mm256_store_pd(l, vlo), _mm256_store_pd(h, vhi);
  for (int k = 0; k < 4; ++k) lo = std::min(lo, l[k]), hi = std::max(hi, h[k]);
  return i;
}
bool avx2_here() noexcept {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
  }();
  return yes;
}
#endif

}  // namespace

Magnitudes magnitudes(const double* x, std::size_t n) noexcept {
  double lo = INFINITY, hi = 0;
  bool finite = true;
  std::size_t i = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  if (avx2_here()) i = magnitudes_avx2(x, n, lo, hi, finite);
#endif
  magnitudes_scalar(x, i, n, lo, hi, finite);
  return {lo, hi, finite};
}

void refresh(StateRange& r, const double* ST, std::size_t n) noexcept {
  if (r.known) return;
  const Magnitudes m = magnitudes(ST, n);
  r.known = true, r.lo = m.lo, r.hi = m.hi;
}

bool decayed_range(const StateRange& s, const Magnitudes& c, StateRange& r) noexcept {
  r.known = false;
  if (!s.known) return false;
  r.hi = s.hi * c.hi * kUp;
  if (!(r.hi <= DBL_MAX)) return false;
  if (s.lo == INFINITY || c.lo == INFINITY) {
    r.lo = INFINITY;  // every product has a zero factor: the decayed state is zero
  } else {
    r.lo = s.lo * c.lo * kDown;  // |S c| >= lo_S lo_c >= r.lo, a double: fl(|S c|) >= r.lo
    if (!(r.lo >= kNormal)) return false;
  }
  r.known = true;
  return true;
}

bool updated_range(const StateRange& s, const Magnitudes& d, const Magnitudes& k, StateRange& r) noexcept {
  r.known = false;
  if (!s.known) return false;
  r.hi = (d.hi * k.hi + s.hi) * kUp;
  if (!(r.hi <= DBL_MAX)) return false;
  // Every non-zero term is a multiple of 2^L (state_range.hpp), so is their exact sum.
  int L = INT_MAX;
  if (s.lo != INFINITY) L = std::min(L, std::ilogb(s.lo) - 52);
  if (d.lo != INFINITY && k.lo != INFINITY) L = std::min(L, std::ilogb(d.lo) + std::ilogb(k.lo) - 104);
  if (L == INT_MAX) {
    r.lo = INFINITY;  // d k and the state are all zeros
  } else {
    if (L < -1074) return false;
    r.lo = std::ldexp(1.0, L);
  }
  r.known = true;
  return true;
}

bool products_in_range(const StateRange& a, const Magnitudes& m) noexcept {
  if (!a.known) return false;
  if (a.lo == INFINITY || m.lo == INFINITY) return true;  // every product has a zero factor
  return a.lo * m.lo * kDown >= kTiny && a.hi * m.hi * kUp <= kHuge;
}

bool products_in_range(const Magnitudes& a, const Magnitudes& b) noexcept {
  if (!a.finite || !b.finite) return false;
  StateRange r;
  r.known = true, r.lo = a.lo, r.hi = a.hi;
  return products_in_range(r, b);
}

void carry(StateRange& state, bool derived, const StateRange& next) noexcept {
  if (derived && next.known && next.lo >= kRescan) {
    state = next;
    return;
  }
  state.known = false;
}

}  // namespace kparity::reference::kda::detail
