#pragma once
// Error-free summation for the oracle (issue 18 item 1a): a sum of doubles and of products of two
// doubles, computed exactly and rounded once, to nearest even, into an fp64 result.
//
// Why: fp64 is not exact once the terms of a sum span more than 2^53 (keys of +-2^100 next to small
// integers: the fp64 logit in index order was -4, the exact one -2; ../shared/repro/README.md). The
// oracle's reductions (dot products, softmax sums, P.V, the KDA recurrences' dot products) go
// through this class instead.
//
// Semantics, for terms t_1..t_n (a term is a double x, or the exact real product a*b):
//   * all terms finite: the exact real sum rounded once to nearest even; it is +-inf only when that
//     rounding overflows (no intermediate overflow: 1e300 * 1e300 - 1e300 * 1e300 + 1 is 1);
//   * a NaN term, an inf * 0 product, or both +inf and -inf terms: NaN; otherwise an infinite term
//     gives that infinity (IEEE 754 addition and multiplication of the special values);
//   * a zero result is -0 iff n >= 1 and every term is -0 (what IEEE round-to-nearest addition gives
//     in any order: x + (-x) = +0, -0 + -0 = -0), else +0; the empty sum is +0.
//
// How: a long (Kulisch) accumulator: 32-bit digits in int64 cells covering every bit a product of
// two doubles can have (2^-2148 .. 2^2048, plus carry headroom), carries deferred to the end.
// Products are formed exactly from the 53-bit integer mantissas (64 x 64 -> 128 bits).
//
// Fast path (most oracle sums of bf16/f16 data): terms go into a plain fp64 sum while it is provably
// exact. Let every term so far be an exact product p (fma(a, b, -p) == 0 and |p| >= 2^-960, so that
// a non-zero product error is representable and the fma shows it), e_lo the exponent of the lowest
// set bit over all terms, and A = sum of |p|. Every partial sum of the terms, and of their absolute
// values, is an integer multiple of 2^e_lo of magnitude <= A; if A < 2^(53 + e_lo) every such number
// is representable, so each fp64 addition returns its exact result. A is itself summed in fp64 and
// checked before each term is committed: if the exact A reached 2^(53 + e_lo), its rounding (monotone)
// does too, and the check fails. On the first failure the fp64 sum (exact so far) moves into the long
// accumulator and the rest goes there.
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <span>

namespace kparity::reference {

class ExactSum {
 public:
  ExactSum() noexcept { clear(); }

  // Adds x exactly.
  void add(double x) noexcept {
    ++count_;
    neg_zero_only_ = neg_zero_only_ && x == 0 && std::signbit(x);
    if (fast_ && std::isfinite(x) && (x == 0 || std::fabs(x) >= kFastMin) && fast_try(x)) return;
    leave_fast();
    slow_add(x);
  }

  // Adds the exact product a * b (never rounded).
  void add_product(double a, double b) noexcept {
    const double p = a * b;
    ++count_;
    neg_zero_only_ = neg_zero_only_ && p == 0 && std::signbit(p) && (a == 0 || b == 0);
    if (fast_ && std::isfinite(p) &&
        (std::fabs(p) >= kFastMin ? std::fma(a, b, -p) == 0 : (p == 0 && (a == 0 || b == 0))) && fast_try(p))
      return;
    leave_fast();
    slow_add_product(a, b);
  }

  // The sum rounded once to nearest even (semantics above). Does not change the sum.
  double value() const noexcept;

  void clear() noexcept;

  // Whether every term so far went through the fp64 fast path (for tests).
  bool fast() const noexcept { return fast_; }

 private:
  static constexpr int kDigits = 136;   // 32-bit digits: bit 0 of digit 0 has weight 2^-kBias
  static constexpr int kBias = 2176;    // lowest product bit 2^-2148 sits at bit 28 of digit 0
  static constexpr double kFastMin = 0x1p-960;

  bool fast_try(double p) noexcept {
    int lo = lo_exp_;
    double limit = fast_limit_;
    if (p != 0) {
      const int e = lsb_exponent(p);
      if (e < lo) lo = e, limit = std::ldexp(1.0, 53 + e);  // inf when 53 + e >= 1024: A finite suffices
    }
    const double abs = fast_abs_ + std::fabs(p);
    if (!(abs < limit)) return false;
    fast_abs_ = abs;
    lo_exp_ = lo;
    fast_limit_ = limit;
    fast_sum_ += p;
    return true;
  }

  // Exponent of the lowest set bit of a finite, non-zero, normal double.
  static int lsb_exponent(double x) noexcept {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const int biased = static_cast<int>((bits >> 52) & 0x7ff);
    const std::uint64_t mant = (bits & ((std::uint64_t{1} << 52) - 1)) | (std::uint64_t{1} << 52);
    return biased - 1075 + std::countr_zero(mant);
  }

  void leave_fast() noexcept;
  void slow_add(double x) noexcept;
  void slow_add_product(double a, double b) noexcept;
  void add_bits(bool negative, unsigned __int128 mant, int exp) noexcept;
  void note_special(double x) noexcept;
  int normalise() const noexcept;  // carries out; returns the sign (-1, 0, 1) and leaves |sum| in digits

  // fast path
  bool fast_ = true;
  double fast_sum_ = -0.0, fast_abs_ = 0.0, fast_limit_ = 0.0;
  int lo_exp_ = 0;
  // long accumulator (mutable: value() carries and takes the magnitude, which keeps the sum)
  mutable std::array<std::int64_t, kDigits> digit_{};
  mutable int dlo_ = kDigits, dhi_ = -1;  // touched digits, dhi_ < dlo_ when none
  mutable bool negated_ = false;          // digits hold -sum (value() left the magnitude there)
  std::uint32_t pending_ = 0;             // adds since the last carry pass
  // specials and zero sign
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false, neg_zero_only_ = true;
  std::uint64_t count_ = 0;
};

// Convenience: the exact sum / dot product rounded once.
double exact_sum(std::span<const double> x) noexcept;
double exact_dot(std::span<const double> x, std::span<const double> y) noexcept;

}  // namespace kparity::reference
