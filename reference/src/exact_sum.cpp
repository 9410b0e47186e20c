// LongSum (the long accumulator) and the certificate of exact_sum_of_products; the semantics and the proofs are in
// exact_sum.hpp.
#include "kparity/reference/exact_sum.hpp"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
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

// ---------------------------------------------------------------------------------------------
// LongSum

void LongSum::clear() noexcept {
  if (dhi_ >= dlo_) std::fill(digit_ + dlo_, digit_ + std::min(dhi_ + 2, kDigits), 0);
  dlo_ = kDigits;
  dhi_ = -1;
  negated_ = false;
  pending_ = 0;
  nan_ = pos_inf_ = neg_inf_ = false;
  neg_zero_only_ = true;
  count_ = 0;
}

void LongSum::note_special(double x) noexcept {
  if (std::isnan(x)) nan_ = true;
  else if (x > 0) pos_inf_ = true;
  else neg_inf_ = true;
}

void LongSum::add(double x) noexcept {
  ++count_;
  neg_zero_only_ = neg_zero_only_ && x == 0 && std::signbit(x);
  if (!std::isfinite(x)) return note_special(x);
  if (x == 0) return;  // its sign is in neg_zero_only_
  const Parts p = parts(x);
  add_bits(std::signbit(x), p.mant, p.exp);
}

void LongSum::add_product(double a, double b) noexcept {
  ++count_;
  const bool zero_factor = (a == 0 && !std::isnan(b)) || (b == 0 && !std::isnan(a));
  neg_zero_only_ = neg_zero_only_ && zero_factor && std::signbit(a) != std::signbit(b) && std::isfinite(a * b);
  if (!std::isfinite(a) || !std::isfinite(b)) return note_special(a * b);  // inf * 0 is NaN
  if (a == 0 || b == 0) return;
  const Parts pa = parts(a), pb = parts(b);
  add_bits(std::signbit(a) != std::signbit(b), static_cast<unsigned __int128>(pa.mant) * pb.mant, pa.exp + pb.exp);
}

// Adds +-mant * 2^exp: mant < 2^106, exp >= -2148. Each digit receives less than 2^33 per call, so
// the int64 cells cannot overflow before 2^29 calls; a carry pass runs before that.
void LongSum::add_bits(bool negative, unsigned __int128 mant, int exp) noexcept {
  if (++pending_ >= (1u << 29)) {
    normalise();
    pending_ = 0;
  }
  const int o = exp + kBias, k = o >> 5, r = o & 31;
  const std::uint64_t low = (static_cast<std::uint64_t>(mant) & kMask32) << r;  // < 2^63
  const unsigned __int128 high = (mant >> 32) << r;                             // < 2^106
  const std::int64_t c[5] = {
      static_cast<std::int64_t>(low & kMask32),
      static_cast<std::int64_t>((low >> 32) + (static_cast<std::uint64_t>(high) & kMask32)),
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
// negated_ when the stored value was negative. Returns the sign of the sum.
int LongSum::normalise() const noexcept {
  if (dhi_ < dlo_) return 0;
  auto carry_pass = [this] {
    for (int i = dlo_; i <= dhi_; ++i) {
      const std::int64_t carry = digit_[i] >> 32;  // arithmetic shift: floor division by 2^32
      digit_[i] &= kMask32;
      digit_[i + 1] += carry;
    }
  };
  // dhi_ + 1 < kDigits: the top product bit is bit 2048 + 2176 = 4224 (digit 132), dhi_ <= 134.
  carry_pass();
  std::int64_t& top = digit_[dhi_ + 1];  // was 0: every digit above dhi_ is
  if (top < 0) {                          // negative: keep the magnitude, remember the sign flip
    for (int i = dlo_; i <= dhi_ + 1; ++i) digit_[i] = -digit_[i];
    negated_ = !negated_;
    carry_pass();
  }
  if (top != 0) ++dhi_;  // a carry below 2^31: already a digit
  while (dhi_ >= dlo_ && digit_[dhi_] == 0) --dhi_;
  if (dhi_ < dlo_) {
    dlo_ = kDigits, dhi_ = -1;
    return 0;
  }
  return negated_ ? -1 : 1;
}

double LongSum::value() const noexcept {
  if (nan_ || (pos_inf_ && neg_inf_)) return std::numeric_limits<double>::quiet_NaN();
  if (pos_inf_) return std::numeric_limits<double>::infinity();
  if (neg_inf_) return -std::numeric_limits<double>::infinity();
  const int sign = normalise();
  if (sign == 0) return count_ > 0 && neg_zero_only_ ? -0.0 : 0.0;
  // Bits [from, from + 53) of the magnitude (from >= 0; the digits above dhi_ are zero).
  auto bits53 = [this](int from) -> std::uint64_t {
    const int k = from >> 5, s = from & 31;
    unsigned __int128 w = 0;
    for (int i = 2; i >= 0; --i) w = (w << 32) | static_cast<std::uint32_t>(k + i < kDigits ? digit_[k + i] : 0);
    return static_cast<std::uint64_t>(w >> s) & ((std::uint64_t{1} << 53) - 1);
  };
  // The most significant bit P, the lowest kept bit L (53 bits, or down to 2^-1074 for subnormals).
  const int P = dhi_ * 32 + (31 - std::countl_zero(static_cast<std::uint32_t>(digit_[dhi_])));
  const int lsb_exp = std::max(P - kBias - 52, -1074);
  const int L = lsb_exp + kBias;  // >= 1102
  std::uint64_t q = L <= P ? bits53(L) : 0;
  const int R = L - 1;  // the rounding bit
  const bool round_bit = ((digit_[R >> 5] >> (R & 31)) & 1) != 0;
  bool sticky = (static_cast<std::uint64_t>(digit_[R >> 5]) & ((std::uint64_t{1} << (R & 31)) - 1)) != 0;
  for (int i = dlo_; i < (R >> 5) && !sticky; ++i) sticky = digit_[i] != 0;
  if (round_bit && (sticky || (q & 1))) ++q;  // to nearest, ties to even
  const double mag = std::ldexp(static_cast<double>(q), lsb_exp);  // exact, or inf on overflow
  return sign < 0 ? -mag : mag;
}

// ---------------------------------------------------------------------------------------------
// exact_sum_of_products' certificate

bool detail::certify(double p, double s, double T, std::size_t m, double& result, double extra) noexcept {
  if (m == 0) {
    result = 0.0;
    return true;
  }
  if (!std::isfinite(p) || !std::isfinite(s) || !std::isfinite(T) || m >= (std::size_t{1} << 30)) return false;
  if (T == 0 && extra == 0) {  // every operation was exact, nothing left out
    result = p;
    return true;
  }
  const double x = p + s, z = x - p;
  const double t = (p - (x - z)) + (s - z);  // TwoSum: x + t = p + s
  const double E = 2.0 * static_cast<double>(m + 1) * 0x1p-53 * T + 0x1p-1074 + extra;
  if (!(std::fabs(x) >= 0x1p-1000 && std::fabs(x) < DBL_MAX)) return false;  // NaN fails too
  // The neighbours of x (finite: |x| < DBL_MAX), one unit in the last place of its bit pattern away.
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
  const double away = std::bit_cast<double>(bits + 1), toward = std::bit_cast<double>(bits - 1);
  const double up = x > 0 ? away : toward, dn = x > 0 ? toward : away;
  if (!(t + E < (up - x) / 2 && t - E > -((x - dn) / 2))) return false;
  result = x;
  return true;
}

double exact_sum(std::span<const double> x) noexcept {
  return exact_sum_of_products(x.size(), [&](std::size_t i) { return std::pair{x[i], 1.0}; });
}

double exact_dot(std::span<const double> x, std::span<const double> y) noexcept {
  return exact_sum_of_products(std::min(x.size(), y.size()), [&](std::size_t i) { return std::pair{x[i], y[i]}; });
}

}  // namespace kparity::reference
