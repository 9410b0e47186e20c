// The vectorised widenings (elements::widen_f16_run, widen_bf16_run) give widen_f16 / widen_bf16's
// bits for every one of the 65,536 16-bit patterns (NaN payloads and signs included), at every
// alignment of a run.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kparity/reference/elements.hpp"

namespace {

namespace el = kparity::reference::elements;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

TEST(WidenRuns, EveryPatternWidensAsTheScalarWidening) {
  std::vector<std::uint16_t> all(65536 + 7);
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::uint16_t>(i);
  std::vector<double> f16(all.size()), bf16(all.size());
  for (std::size_t start : {0, 1, 3}) {
    const std::int64_t n = static_cast<std::int64_t>(all.size() - start);
    el::widen_f16_run(all.data() + start, n, f16.data());
    el::widen_bf16_run(all.data() + start, n, bf16.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const std::uint16_t h = all[start + static_cast<std::size_t>(i)];
      ASSERT_EQ(bits(f16[i]), bits(static_cast<double>(el::widen_f16(h)))) << std::hex << h;
      ASSERT_EQ(bits(bf16[i]), bits(static_cast<double>(el::widen_bf16(h)))) << std::hex << h;
    }
  }
}

}  // namespace
