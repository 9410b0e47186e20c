// The vectorised widenings (elements::widen_f16_run, widen_bf16_run) give widen_f16 / widen_bf16's
// bits for every one of the 65,536 16-bit patterns (NaN payloads and signs included), at every
// alignment of a run; the vectorised narrowings (narrow_f16_run, narrow_bf16_run) give
// f64_to_f16_bits / f64_to_bf16_bits' bits on fp32 values of every exponent (ties, subnormals,
// overflow, NaNs with payloads, infinities) and on fp64 values that are not fp32 values (beside
// 16-bit ties, past fp32's range, below its subnormals, normal draws).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kparity/core/dtype.hpp"
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
      ASSERT_EQ(bits(f16[i]), bits(static_cast<double>(kparity::f16_bits_to_f32(h)))) << std::hex << h;
      ASSERT_EQ(bits(bf16[i]), bits(static_cast<double>(kparity::bf16_bits_to_f32(h)))) << std::hex << h;
    }
  }
}

TEST(WidenRuns, NarrowingsStoreAsTheScalarConversions) {
  std::mt19937_64 g(25);
  std::vector<double> in;
  for (int i = 0; i < 200000; ++i) {
    const std::uint32_t r = static_cast<std::uint32_t>(g());
    double x = static_cast<double>(std::bit_cast<float>(r));  // any fp32 pattern: NaNs, infs, subnormals
    // fp64 values beside a 16-bit tie: rounding them to fp32 to nearest first would land on the tie
    // and then round to even, the wrong way for half of them (what round-to-odd prevents).
    const double nudge = (g() % 2 ? 1.0 : -1.0) * std::ldexp(1.0, -30 - static_cast<int>(g() % 20));
    switch (g() % 12) {
      case 0: x = std::bit_cast<double>(g()); break;  // any fp64 pattern, mostly not an fp32 value
      case 1: x = static_cast<double>(std::bit_cast<float>((r & 0x807fe000u) | 0x38000000u | 0x1000u)); break;  // f16 ties
      case 2: x = static_cast<double>(std::bit_cast<float>((r & 0x80ff0000u) | 0x8000u)); break;  // bf16 ties
      case 3: x = static_cast<double>(std::bit_cast<float>((r & 0x807fe000u) | 0x38000000u | 0x1000u)); x += x * nudge; break;
      case 4: x = static_cast<double>(std::bit_cast<float>((r & 0x80ff0000u) | 0x8000u)); x += x * nudge; break;
      case 5: x = std::ldexp(static_cast<double>(g() % (1u << 20)) + 0.5 + nudge, -44); break;  // f16 subnormal ties, nudged
      case 6: x = std::ldexp(1.0 + static_cast<double>(g() % 1000) * 1e-3, 128 + static_cast<int>(g() % 8)) * (g() % 2 ? 1 : -1); break;  // past fp32's range
      case 7: x = std::ldexp(1.0 + static_cast<double>(g() % 1000) * 1e-3, -160 + static_cast<int>(g() % 20)); break;  // below fp32's subnormals
      case 8: x = std::normal_distribution<double>(0.0, 1.0)(g); break;  // what the generators draw
      default: break;
    }
    in.push_back(x);
  }
  // Whole blocks of fp32 values, blocks with one fp64-only value, and every alignment of a run.
  for (std::size_t i = 0; i < in.size(); i += 64) in[i] = in[i] + 0x1p-40 * in[i];
  std::vector<std::uint16_t> f16(in.size()), bf16(in.size());
  for (std::size_t start : {0, 1, 5}) {
    const std::int64_t n = static_cast<std::int64_t>(in.size() - start);
    el::narrow_f16_run(in.data() + start, n, f16.data());
    el::narrow_bf16_run(in.data() + start, n, bf16.data());
    for (std::int64_t i = 0; i < n; ++i) {
      const double x = in[start + static_cast<std::size_t>(i)];
      ASSERT_EQ(f16[i], kparity::f64_to_f16_bits(x)) << std::hexfloat << x;
      ASSERT_EQ(bf16[i], kparity::f64_to_bf16_bits(x)) << std::hexfloat << x;
    }
  }
}

}  // namespace
