#pragma once
// Error-free summation for the oracle (issue 18 item 1a): a sum of doubles and of products of two
// doubles, computed exactly and rounded once, to nearest even, into an fp64 result.
//
// Why: fp64 is not exact once the terms of a sum span more than 2^53 (keys of +-2^100 next to small
// integers: the fp64 logit in index order was -4, the exact one -2; ../shared/repro/README.md). The
// oracle's reductions (dot products, softmax sums, P.V, the KDA recurrences' dot products) go
// through exact_sum_of_products instead.
//
// Semantics, for terms t_1..t_n (a term is a double x, or the exact real product a*b):
//   * all terms finite: the exact real sum rounded once to nearest even; it is +-inf only when that
//     rounding overflows (no intermediate overflow: 1e300 * 1e300 - 1e300 * 1e300 + 1 is 1);
//   * a NaN term, an inf * 0 product, or both +inf and -inf terms: NaN; otherwise an infinite term
//     gives that infinity (IEEE 754 addition and multiplication of the special values);
//   * a zero result is -0 iff n >= 1 and every term is -0 (what IEEE round-to-nearest addition gives
//     in any order: x + (-x) = +0, -0 + -0 = -0), else +0; the empty sum is +0.
//
// Two implementations of these semantics:
//
// LongSum, the definition: a long (Kulisch) accumulator, 32-bit digits in int64 cells covering every
// bit a product of two doubles can have (2^-2148 .. 2^2048, plus carry headroom), carries deferred
// to the end, products formed exactly from the 53-bit integer mantissas (64 x 64 -> 128 bits).
// About 12 ns a term.
//
// exact_sum_of_products, the one the oracle uses (about 2 ns a term): it runs the
// error-free transformations of Ogita, Rump and Oishi ("Accurate sum and dot product", SIAM J. Sci.
// Comput. 26(6), 2005, Dot2): for each term, h + r = a*b exactly (TwoProduct with an fma, or r = 0
// where the factors are short enough for an exact product: detail::product_error), then
// p' + q = p + h exactly (TwoSum), s <- fl(s + fl(q + r)), T <- fl(T + fl(|q| + |r|)). Then
//   exact sum X = p + R,  R = sum of (q_i + r_i),  and  |s - R| <= gamma_m (1 + gamma_2m) T
// for m terms (the c_i = fl(q_i + r_i) carry one rounding each, their recursive sum m - 1 more:
// |s - R| <= (u + gamma_{m-1}(1 + u)) sum(|q_i| + |r_i|) <= gamma_m sum(...), Higham Lemma 3.3; and
// a recursive sum of non-negative terms is at most a factor 1 + gamma_2m low). With
// E = 2 (m + 1) u T (+ 2^-1074 against underflow), which exceeds that bound for m < 2^30:
// (r, t) = TwoSum(p, s) gives X in [r + t - E, r + t + E], and r is the correctly rounded X when
// that interval lies strictly between r's two rounding midpoints: fl(t + E) < (next(r) - r) / 2 and
// fl(t - E) > -(r - prev(r)) / 2 (rounding is monotone, so the fp64 comparisons imply the exact
// ones). T = 0 means every operation was exact: X = p, signed zero included. The error-free
// transformations need no underflow in the product's error (|a*b| >= 2^-960: the error is a multiple
// of 2^-1066 or zero, so the fma returns it) and no overflow (|a*b| <= 2^1000; an overflowing
// partial sum shows as a non-finite p). Anything else - a special value, a tiny or huge product, a
// certificate that fails (a result within E of a midpoint, or |r| < 2^-1000) - sums the terms
// again in a LongSum.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>

namespace kparity::reference {

class LongSum {
 public:
  void add(double x) noexcept;
  void add_product(double a, double b) noexcept;  // the exact product, never rounded
  double value() const noexcept;                  // does not change the sum
  void clear() noexcept;

 private:
  static constexpr int kDigits = 136;  // 32-bit digits: bit 0 of digit 0 has weight 2^-kBias
  static constexpr int kBias = 2176;   // the lowest product bit, 2^-2148, is bit 28 of digit 0

  void add_bits(bool negative, unsigned __int128 mant, int exp) noexcept;
  void note_special(double x) noexcept;
  int normalise() const noexcept;  // carries out; leaves |sum| in the digits and returns its sign

  // mutable: value() carries and keeps the magnitude (negated_ records the sign), same sum
  mutable std::int64_t digit_[kDigits] = {};
  mutable int dlo_ = kDigits, dhi_ = -1;  // touched digits; dhi_ < dlo_ when none
  mutable bool negated_ = false;
  std::uint32_t pending_ = 0;  // adds since the last carry pass
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false, neg_zero_only_ = true;
  std::uint64_t count_ = 0;
};

namespace detail {
// TwoProduct's error a*b - h (h = fl(a*b)), for a product the guard in exact_sum_of_products let
// through (no underflow, no overflow). A product of two doubles with at most 26 significant bits
// each (their low 27 fraction bits zero) needs at most 52 bits, so h is exact and the error 0; the
// oracle's terms are mostly such (widened fp32/bf16/f16 inputs, and plain terms {x, 1.0}), and
// the test spares them the fma, a library call in x86-64 builds without -mfma.
inline double product_error(double a, double b, double h) noexcept {
  constexpr std::uint64_t kLow27 = (std::uint64_t{1} << 27) - 1;
  if (b == 1.0 || ((std::bit_cast<std::uint64_t>(a) | std::bit_cast<std::uint64_t>(b)) & kLow27) == 0) [[likely]]
    return 0.0;
  return std::fma(a, b, -h);
}

// The exact sum of n products rounded once when the error-free transformations' errors add up
// without rounding (issue 25). The certificate brackets X = p + R (R the sum of the TwoSum and
// TwoProduct errors) by an interval around fl(p + s), and no interval decides an X that lies exactly
// on a rounding midpoint - common for a few products of small integers and weights (w - 1 for a
// weight w in [1/4, 1/2) needs 54 bits); such sums went to the long accumulator (a sixth of the
// kernel-sized sparse oracle). When every c_i = fl(q_i + r_i) and every partial sum s + c_i is exact
// (their TwoSum errors are zero), s is R itself, X = p + s, and fl(p + s) - one IEEE addition, ties
// to even - is X rounded once. False when a step rounds, a product leaves the transformations'
// range (no product is left out here: the caller's `tiny` terms must be none) or X is zero.
template <class Term>
bool exact_error_sum(std::size_t n, Term&& term, double& result) noexcept {
  auto exact = [](double a, double b, double sum) {  // TwoSum's error of a + b is zero
    const double z = sum - a;
    return (a - (sum - z)) + (b - z) == 0;
  };
  double p = -0.0, s = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [a, b] = term(i);
    const double h = a * b, ah = std::fabs(h);
    if (h == 0 ? !(a == 0 || b == 0) : !(ah >= 0x1p-960 && ah <= 0x1p1000)) return false;
    const double r = product_error(a, b, h);
    const double x = p + h, z = x - p;
    const double q = (p - (x - z)) + (h - z);
    p = x;
    const double c = q + r;
    if (!exact(q, r, c)) return false;
    const double s2 = s + c;
    if (!exact(s, c, s2)) return false;
    s = s2;
  }
  if (!std::isfinite(p) || !std::isfinite(s)) return false;
  result = p + s;
  return result != 0;  // an exact zero's sign follows its own rule (LongSum's)
}

// ExactSum's certificate (proof above): the correctly rounded sum of m terms whose error-free
// transformations left p, s and T, plus terms left out whose sum is at most `extra` in magnitude,
// or false when it cannot be certified.
bool certify(double p, double s, double T, std::size_t m, double& result, double extra = 0.0) noexcept;
}  // namespace detail

// The exact sum of the n products term(i).first * term(i).second (i = 0..n-1), rounded once;
// `term` is called once per index, once more when the certificate cannot decide, and once more for
// every index when the long accumulator is needed. For a plain term x, return {x, 1.0}.
template <class Term>
double exact_sum_of_products(std::size_t n, Term&& term) noexcept {
  double p = -0.0, s = 0.0, T = 0.0;  // p starts at -0: -0 + x is x for every x, -0 included
  // Finite products below 2^-960 (their error could underflow; the softmax's tiny weights times a
  // value) stay out of the transformations: `tiny` bounds the sum of their magnitudes (fl(|ab|) is
  // within 2^-52 relative plus 2^-1074 of |ab|), and the certificate widens its interval by it.
  double tiny = 0.0;
  bool split = true;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [a, b] = term(i);
    const double h = a * b, ah = std::fabs(h);
    if (h == 0 ? !(a == 0 || b == 0) : !(ah >= 0x1p-960 && ah <= 0x1p1000)) {  // NaN fails too
      if (ah < 0x1p-960 && std::isfinite(a) && std::isfinite(b)) {
        tiny += ah * (1 + 0x1p-52) + 0x1p-1074;
        continue;
      }
      split = false;
      break;
    }
    const double r = detail::product_error(a, b, h);  // TwoProduct: h + r = a * b
    const double x = p + h, z = x - p;
    const double q = (p - (x - z)) + (h - z);  // TwoSum: x + q = p + h
    p = x;
    s += q + r;
    T += std::fabs(q) + std::fabs(r);
  }
  double result;
  // tiny's own fp64 sum of n < 2^30 non-negative terms is low by less than 2^-20 relative.
  if (split && detail::certify(p, s, T, n, result, tiny * (1 + 0x1p-20))) return result;
  // Undecided with every product transformed: the sum may sit on a midpoint with errors that add up
  // exactly (detail::exact_error_sum, a second call of term per index).
  if (split && tiny == 0 && detail::exact_error_sum(n, term, result)) return result;
  // A non-finite factor decides the sum alone (IEEE 754, as LongSum::value() reads its flags): the
  // special-value cases need no long accumulator.
  if (!split) {
    bool special = false, nan = false, pos = false, neg = false;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [a, b] = term(i);
      if (std::isfinite(a) && std::isfinite(b)) continue;
      special = true;
      const double x = a * b;  // inf * 0 is NaN
      if (std::isnan(x)) nan = true;
      else if (x > 0) pos = true;
      else neg = true;
    }
    if (special) return nan || (pos && neg) ? std::numeric_limits<double>::quiet_NaN()
                        : pos               ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::infinity();
  }
  LongSum acc;
  for (std::size_t i = 0; i < n; ++i) {
    const auto [a, b] = term(i);
    acc.add_product(a, b);
  }
  return acc.value();
}

// ---- A cheaper certificate for short factors -------------------------------------------------
// If every x_i is a multiple of 2^Lx and every y_i of 2^Ly, every product is a multiple of
// 2^L, L = Lx + Ly >= -1074. If moreover the sum of the |products| is below 2^(L + 53), every
// product and every partial sum of them, in any order, is a multiple of 2^L of magnitude below
// 2^(L + 53): representable, so plain fp64 arithmetic never rounds and returns the exact sum. The
// test runs on the computed sum of the fl(|products|): rounding is monotone, so if an exact
// partial sum of them reached 2^(L + 53) (a power of two, representable) the computed one would
// too. Zero signs come out as exact_sum_of_products defines them (-0 only when every term is -0:
// the lanes start at -0, the identity of IEEE addition, and x + y = 0 is +0 unless both are -0).
// The oracle's inputs are widened fp32/bf16/f16 values, so its dot products of inputs mostly pass.

// The exponent of the lowest set bit of x (x = odd * 2^e) for a finite non-zero x; kNoLsb for zeros
// and non-finite values (a zero never lowers the minimum; a non-finite factor fails the test below
// through its infinite or NaN product).
inline constexpr int kNoLsb = 1 << 20;
inline int lsb_exponent(double x) noexcept {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t mant = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return kNoLsb;
  if (biased != 0) mant |= std::uint64_t{1} << 52;
  if (mant == 0) return kNoLsb;
  return std::countr_zero(mant) + (biased == 0 ? -1074 : biased - 1075);
}
// The smallest lsb_exponent of x[0..n).
inline int min_lsb_exponent(const double* x, std::size_t n) noexcept {
  int L = kNoLsb;
  for (std::size_t i = 0; i < n; ++i) L = std::min(L, lsb_exponent(x[i]));
  return L;
}
// Whether a sum of terms that are multiples of 2^L with |terms| summing to abs_sum (computed) is
// exact in fp64 in any order; false past 2^1023 (a partial sum could overflow).
inline bool exact_in_fp64(double abs_sum, int L) noexcept {
  if (L < -1074) return false;
  const double limit = L + 53 >= 1023 ? 0x1p1023 : std::ldexp(1.0, L + 53);
  return abs_sum < limit;  // NaN and inf fail
}
// x.y over n terms, x's elements multiples of 2^Lx and y's of 2^Ly (min_lsb_exponent): true with the
// exact sum in `dot` (and the computed sum of the |products| in `abs_sum`) when the above certifies
// it; false when the caller must use exact_sum_of_products.
inline bool short_exact_dot(const double* x, int Lx, const double* y, int Ly, std::size_t n, double& dot,
                            double& abs_sum) noexcept {
  double s[4] = {-0.0, -0.0, -0.0, -0.0}, a[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; ++k) {
      const double p = x[i + k] * y[i + k];
      s[k] += p;
      a[k] += std::fabs(p);
    }
  for (; i < n; ++i) {
    const double p = x[i] * y[i];
    s[0] += p;
    a[0] += std::fabs(p);
  }
  abs_sum = (a[0] + a[1]) + (a[2] + a[3]);
  if (!exact_in_fp64(abs_sum, Lx + Ly)) return false;
  dot = n == 0 ? 0.0 : (s[0] + s[1]) + (s[2] + s[3]);
  return true;
}

// Convenience: the exact sum / dot product rounded once.
double exact_sum(std::span<const double> x) noexcept;
double exact_dot(std::span<const double> x, std::span<const double> y) noexcept;

}  // namespace kparity::reference
