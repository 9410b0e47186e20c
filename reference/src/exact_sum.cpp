// The long accumulator of exact_sum.hpp: the slow path and the final rounding.
#include "kparity/reference/exact_sum.hpp"

#include <algorithm>
#include <limits>

namespace kparity::reference {
namespace {

constexpr std::int64_t kMask32 = 0xffffffff;

// |x| = mant * 2^exp with an integer mantissa, for a finite non-zero double.
struct Parts {
  std::uint64_t mant;
  int exp;
};
Parts parts(double x) noexcept {
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const std::uint64_t frac = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0) return {frac, -1074};  // subnormal
  return {frac | (std::uint64_t{1} << 52), biased - 1075};
}

}  // namespace

void ExactSum::clear() noexcept {
  if (dhi_ >= dlo_) std::fill(digit_.begin() + dlo_, digit_.begin() + std::min(dhi_ + 2, kDigits), 0);
  dlo_ = kDigits;
  dhi_ = -1;
  negated_ = false;
  pending_ = 0;
  fast_ = true;
  fast_sum_ = -0.0;  // -0 + x is x for every x, -0 included: the fast sum's zero is IEEE's
  fast_abs_ = 0.0;
  fast_limit_ = std::numeric_limits<double>::infinity();  // no term yet, no constraint
  lo_exp_ = std::numeric_limits<int>::max();
  nan_ = pos_inf_ = neg_inf_ = false;
  neg_zero_only_ = true;
  count_ = 0;
}

void ExactSum::leave_fast() noexcept {
  if (!fast_) return;
  fast_ = false;
  if (fast_sum_ != 0) slow_add(fast_sum_);  // exact: the fast path's invariant held so far
}

void ExactSum::note_special(double x) noexcept {
  if (std::isnan(x)) nan_ = true;
  else if (x > 0) pos_inf_ = true;
  else neg_inf_ = true;
}

void ExactSum::slow_add(double x) noexcept {
  if (!std::isfinite(x)) return note_special(x);
  if (x == 0) return;  // the zero's sign is in neg_zero_only_
  const Parts p = parts(x);
  add_bits(std::signbit(x), p.mant, p.exp);
}

void ExactSum::slow_add_product(double a, double b) noexcept {
  if (!std::isfinite(a) || !std::isfinite(b)) return note_special(a * b);  // inf * 0 is NaN
  if (a == 0 || b == 0) return;
  const Parts pa = parts(a), pb = parts(b);
  add_bits(std::signbit(a) != std::signbit(b), static_cast<unsigned __int128>(pa.mant) * pb.mant, pa.exp + pb.exp);
}

// Adds +-mant * 2^exp: mant < 2^106, exp >= -2148. Each digit receives less than 2^33 per call, so
// the int64 cells cannot overflow before 2^29 calls; a carry pass runs before that.
void ExactSum::add_bits(bool negative, unsigned __int128 mant, int exp) noexcept {
  if (++pending_ >= (1u << 29)) {
    normalise();
    pending_ = 0;
  }
  const int o = exp + kBias, k = o >> 5, r = o & 31;
  const std::uint64_t low = (static_cast<std::uint64_t>(mant) & kMask32) << r;  // < 2^63
  const unsigned __int128 high = (mant >> 32) << r;                             // < 2^106
  const std::int64_t c[5] = {
      static_cast<std::int64_t>(low & kMask32),
      static_cast<std::int64_t>((low >> 32) + static_cast<std::uint64_t>(high & kMask32)),
      static_cast<std::int64_t>(static_cast<std::uint64_t>(high >> 32) & kMask32),
      static_cast<std::int64_t>(static_cast<std::uint64_t>(high >> 64) & kMask32),
      static_cast<std::int64_t>(static_cast<std::uint64_t>(high >> 96)),
  };
  if (negative != negated_) {
    for (int i = 0; i < 5; ++i) digit_[k + i] -= c[i];
  } else {
    for (int i = 0; i < 5; ++i) digit_[k + i] += c[i];
  }
  dlo_ = std::min(dlo_, k);
  dhi_ = std::max(dhi_, k + 4);
}

// Propagates carries so that digits dlo_..dhi_ lie in [0, 2^32) and hold |stored value|; flips
// negated_ when the stored value was negative. Returns the sign of the stored value.
int ExactSum::normalise() const noexcept {
  if (dhi_ < dlo_) return 0;
  auto carry_pass = [this] {
    for (int i = dlo_; i <= dhi_; ++i) {
      const std::int64_t carry = digit_[i] >> 32;  // arithmetic shift: floor division by 2^32
      digit_[i] &= kMask32;
      digit_[i + 1] += carry;
    }
  };
  // dhi_ + 1 < kDigits: the top term bit is 2^2048 + 2176 = bit 4224 (digit 132) and dhi_ <= 133.
  carry_pass();
  std::int64_t& top = digit_[dhi_ + 1];
  if (top < 0) {  // negative: keep the magnitude, remember the sign flip
    for (int i = dlo_; i <= dhi_ + 1; ++i) digit_[i] = -digit_[i];
    negated_ = !negated_;
    carry_pass();
  }
  if (top != 0) ++dhi_;  // now in [0, 2^32) too: the carry out of dhi_ is small
  while (dhi_ >= dlo_ && digit_[dhi_] == 0) --dhi_;
  if (dhi_ < dlo_) {
    dlo_ = kDigits, dhi_ = -1;
    return 0;
  }
  return negated_ ? -1 : 1;
}

double ExactSum::value() const noexcept {
  if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<double>::quiet_NaN();
  if (pos_inf_) return std::numeric_limits<double>::infinity();
  if (neg_inf_) return -std::numeric_limits<double>::infinity();
  if (count_ == 0) return 0.0;
  if (fast_) return fast_sum_;
  const int sign = normalise();
  if (sign == 0) return neg_zero_only_ ? -0.0 : 0.0;
  auto bit = [this](int pos) -> std::uint64_t {
    if (pos < 0) return 0;
    return static_cast<std::uint64_t>(digit_[pos >> 5] >> (pos & 31)) & 1;
  };
  // The most significant bit P, the lowest kept bit L (53 bits, or down to 2^-1074 for subnormals).
  const int P = dhi_ * 32 + (31 - std::countl_zero(static_cast<std::uint32_t>(digit_[dhi_])));
  const int msb_exp = P - kBias;
  const int lsb_exp = std::max(msb_exp - 52, -1074);
  const int L = lsb_exp + kBias;  // >= 1102 > 0
  std::uint64_t q = 0;
  for (int i = P; i >= L; --i) q = (q << 1) | bit(i);
  const bool round_bit = bit(L - 1) != 0;
  bool sticky = false;
  for (int i = dlo_; i < ((L - 1) >> 5) && !sticky; ++i) sticky = digit_[i] != 0;
  if (!sticky && L - 1 > 0) {
    const int k = (L - 1) >> 5, s = (L - 1) & 31;
    if (k >= dlo_) sticky = (static_cast<std::uint64_t>(digit_[k]) & ((std::uint64_t{1} << s) - 1)) != 0;
  }
  if (round_bit && (sticky || (q & 1))) ++q;  // to nearest, ties to even
  const double mag = std::ldexp(static_cast<double>(q), lsb_exp);  // exact, or inf on overflow
  return sign < 0 ? -mag : mag;
}

double exact_sum(std::span<const double> x) noexcept {
  ExactSum s;
  for (double v : x) s.add(v);
  return s.value();
}

double exact_dot(std::span<const double> x, std::span<const double> y) noexcept {
  ExactSum s;
  const std::size_t n = std::min(x.size(), y.size());
  for (std::size_t i = 0; i < n; ++i) s.add_product(x[i], y[i]);
  return s.value();
}

}  // namespace kparity::reference
