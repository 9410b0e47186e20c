#include "kparity/core/random.hpp"

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

double Rng::normal() noexcept {
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

}  // namespace kparity
