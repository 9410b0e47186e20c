#include "kparity/core/random.hpp"

#include <bit>
#include <cmath>
#include <limits>

#include <boost/random/normal_distribution.hpp>

namespace kparity {

std::uint64_t splitmix64(std::uint64_t& x) noexcept {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

namespace {

// The generator as Boost.Random's uniform random bit generator: 64 bits a call.
struct Bits {
  using result_type = std::uint64_t;
  static constexpr result_type min() noexcept { return 0; }
  static constexpr result_type max() noexcept { return std::numeric_limits<result_type>::max(); }
  Rng& rng;
  result_type operator()() noexcept { return rng.next_u64(); }
};

}  // namespace

Rng::Rng(std::uint64_t seed) noexcept {
  // splitmix64 never yields an all-zero state, which xoshiro could not leave.
  for (auto& w : s_) w = splitmix64(seed);
}

double Rng::uniform() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1p-53; }

double Rng::uniform(double lo, double hi) noexcept {
  const double v = lo + (hi - lo) * uniform();
  // lo + (hi-lo)*u can round up to hi; keep the interval half-open.
  return (v < hi || !(lo < hi)) ? v : std::nextafter(hi, lo);
}

// Boost.Random's normal_distribution<double>(0, 1) with this generator, its first and usually only
// try taken here without Boost's generic code (issue 32 (3): Rng::normal was a tenth of a
// kernel-sized sparse case's host time): for a 64-bit engine, generate_int_float_pair<double, 8>
// takes one next_u64() u, the layer and sign from u's low byte and the abscissa fraction
// double((u & ~2^11) >> 8) * 2^-56; x = fraction * table_x[layer] is accepted when below
// table_x[layer + 1] and returned as x * sign * sigma + mean, sigma 1 and mean 0 (+0 for -0, as
// Boost's sum gives). Otherwise the generator is put back as it was and Boost's own loop runs from
// there, drawing the same u again: the same values and the same stream, bit for bit (checked
// against Boost over 2 * 10^8 draws of five seeds, tails and wedges included). No SLP vectorisation:
// GCC paired the state's words into 16-byte loads of words stored 8 bytes at a time by the call
// before, a failed store-to-load forwarding on every draw.
__attribute__((optimize("no-tree-slp-vectorize"))) double Rng::normal() noexcept {
  const double* const table_x = boost::random::detail::normal_table<double>::table_x;
  const std::uint64_t s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
  const std::uint64_t u = next_u64();
  const int bucket = static_cast<int>(u & 0xff), layer = bucket >> 1;
  const double fraction = static_cast<double>((u & ~(std::uint64_t{1} << 11)) >> 8) * 0x1p-56;
  const double x = fraction * table_x[layer];
  if (x < table_x[layer + 1]) [[likely]] return x * static_cast<double>((bucket & 1) * 2 - 1) * 1.0 + 0.0;
  s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;
  return normal_slow();
}

// normal() n times, the generator's words in registers for the whole run (the slow path goes
// through the object: its words stored before, reloaded after).
__attribute__((optimize("no-tree-slp-vectorize"))) void Rng::normal_fill(double* out, std::int64_t n) noexcept {
  const double* const table_x = boost::random::detail::normal_table<double>::table_x;
  std::uint64_t s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
  for (std::int64_t i = 0; i < n; ++i) {
    // next_u64() on the local words.
    const std::uint64_t u = std::rotl(s1 * 5, 7) * 9;
    const std::uint64_t t = s1 << 17;
    std::uint64_t n2 = s2 ^ s0, n3 = s3 ^ s1;
    const std::uint64_t n1 = s1 ^ n2, n0 = s0 ^ n3;
    n2 ^= t;
    n3 = std::rotl(n3, 45);
    const int bucket = static_cast<int>(u & 0xff), layer = bucket >> 1;
    const double fraction = static_cast<double>((u & ~(std::uint64_t{1} << 11)) >> 8) * 0x1p-56;
    const double x = fraction * table_x[layer];
    if (x < table_x[layer + 1]) [[likely]] {
      out[i] = x * static_cast<double>((bucket & 1) * 2 - 1) * 1.0 + 0.0;
      s0 = n0, s1 = n1, s2 = n2, s3 = n3;
      continue;
    }
    s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;  // as before this draw: Boost's loop from here
    out[i] = normal_slow();
    s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
  }
  s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;
}

__attribute__((noinline)) double Rng::normal_slow() noexcept {
  // Boost.Random's ziggurat (128 layers; Boost >= 1.56): one next_u64() gives the layer, the sign
  // and 56 bits of the abscissa, accepted by a multiply and a compare about 99% of the time; the
  // wedges and the tail take more draws and an exp or a log. It replaced Box-Muller (a libm log and
  // cos and two uniforms per value: 27-31% of a kernel-sized sparse case's host time, issue 32), so
  // a seed draws other values than before 2026-12-05; the stream stays stateless (no cached value).
  Bits bits{*this};
  return boost::random::normal_distribution<double>(0.0, 1.0)(bits);
}

std::int64_t Rng::integer(std::int64_t lo, std::int64_t hi_inclusive) noexcept {
  if (hi_inclusive <= lo) return lo;
  const std::uint64_t span = static_cast<std::uint64_t>(hi_inclusive) - static_cast<std::uint64_t>(lo) + 1;
  if (span == 0) return static_cast<std::int64_t>(next_u64());  // the full 64-bit range
  // Rejecting the lowest 2^64 mod span draws leaves a multiple of span outcomes: no modulo bias.
  const std::uint64_t threshold = (0 - span) % span;
  std::uint64_t x = next_u64();
  while (x < threshold) x = next_u64();
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(lo) + x % span);
}

Rng::IntRange Rng::int_range(std::int64_t lo, std::int64_t hi_inclusive) noexcept {
  IntRange r;
  r.lo = lo;
  if (hi_inclusive <= lo) return r;  // span 1: always lo, no draw (as integer())
  r.span = static_cast<std::uint64_t>(hi_inclusive) - static_cast<std::uint64_t>(lo) + 1;
  if (r.span == 0) return r;
  r.threshold = (0 - r.span) % r.span;
  r.inverse = ~std::uint64_t{0} / r.span;  // floor((2^64 - 1) / span)
  return r;
}

std::int64_t Rng::integer(const IntRange& r) noexcept {
  if (r.span == 1) return r.lo;
  if (r.span == 0) return static_cast<std::int64_t>(next_u64());
  std::uint64_t x = next_u64();
  while (x < r.threshold) x = next_u64();
  // x mod span without a division: q = floor(x * inverse / 2^64) is floor(x / span) or one less
  // (inverse > 2^64 / span - 1, so x * inverse / 2^64 > x / span - 1), so x - q * span is below
  // 2 * span and one subtraction at most makes it x mod span.
  const std::uint64_t q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * r.inverse) >> 64);
  std::uint64_t m = x - q * r.span;
  if (m >= r.span) m -= r.span;
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(r.lo) + m);
}

}  // namespace kparity
