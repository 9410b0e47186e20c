#pragma once
// A portable generator: the same seed gives the same stream on every compiler and libc
// (std:: distributions do not guarantee that). normal() is Boost.Random's ziggurat: its accepted
// draws (about 99%) are a multiply of table constants, the rest go through libm's exp or log.
#include <bit>
#include <cstdint>

namespace kparity {

// One splitmix64 step (Steele, Lea and Flood 2014): advances `state` by the golden gamma and
// returns the mix of the new state. On a copy it is a cheap 64-bit hash: every input, 0 included,
// gives a well-mixed output.
std::uint64_t splitmix64(std::uint64_t& state) noexcept;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept;
  std::uint64_t next_u64() noexcept;                 // xoshiro256** (inline: every draw's hot path)
  double uniform() noexcept;                         // [0, 1), 53 random bits
  double uniform(double lo, double hi) noexcept;     // [lo, hi)
  double normal() noexcept;                          // N(0, 1), ziggurat
  void normal_fill(double* out, std::int64_t n) noexcept;  // n normal() values in order, into out
  std::int64_t integer(std::int64_t lo, std::int64_t hi_inclusive) noexcept;  // unbiased

  // integer(lo, hi) for many draws of one range: the span, the rejection threshold and a reciprocal
  // computed once (integer() divides twice a draw; filling a decode case's state pool with small
  // integers was 4-5% of its host time, issue 32 (3)). The same draws and values as integer().
  struct IntRange {
    std::int64_t lo = 0;
    std::uint64_t span = 1, threshold = 0, inverse = 0;  // span 0: the full 64-bit range
  };
  static IntRange int_range(std::int64_t lo, std::int64_t hi_inclusive) noexcept;
  std::int64_t integer(const IntRange& r) noexcept;

 private:
  double normal_slow() noexcept;  // Boost.Random's ziggurat, whole
  std::uint64_t s_[4];
};

inline std::uint64_t Rng::next_u64() noexcept {
  const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

}  // namespace kparity
