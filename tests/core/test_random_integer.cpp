// Rng::integer(IntRange) against Rng::integer(lo, hi): the same values from the same stream, and the
// stream left in the same place, for spans small and large (above 2^63 the division-free remainder's
// quotient often falls one short), powers of two and not, the full 64-bit range and empty ranges.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "kparity/core/random.hpp"

namespace kparity {
namespace {

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();

TEST(RngInteger, PrecomputedRangeDrawsTheSameValuesAndLeavesTheSameStream) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {
      {-4, 4}, {1, 2}, {0, 1}, {-60, -45}, {0, 6}, {0, 1023}, {-3, 3}, {5, 5}, {7, 3},
      {0, (std::int64_t{1} << 32)}, {-(std::int64_t{1} << 62), (std::int64_t{1} << 62)}, {kMin, kMax - 1},
      {kMin, kMax}, {kMin + 1, kMax}, {0, kMax}, {kMin, 0}};
  for (std::uint64_t seed : {1ull, 2ull, 0xdced29426b94f7daull}) {
    for (const auto& [lo, hi] : ranges) {
      Rng a(seed), b(seed);
      const Rng::IntRange r = Rng::int_range(lo, hi);
      for (int i = 0; i < 3000; ++i) {
        const std::int64_t want = a.integer(lo, hi), got = b.integer(r);
        ASSERT_EQ(got, want) << "lo " << lo << " hi " << hi << " draw " << i;
        if (hi > lo) {
          ASSERT_GE(got, lo);
          ASSERT_LE(got, hi);
        }
      }
      EXPECT_EQ(a.next_u64(), b.next_u64()) << "lo " << lo << " hi " << hi;
    }
  }
}

}  // namespace
}  // namespace kparity
