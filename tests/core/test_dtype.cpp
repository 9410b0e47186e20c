#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kparity/core/dtype.hpp"

namespace kparity {
namespace {

// An oracle that shares no code with the library: the value of every non-negative 16-bit pattern is
// computed from the format definition with ldexp, and rounding picks the nearer table entry using
// fp64 differences (exact here: both operands have at most 24 significant bits and close exponents).
struct Format16 {
  int mant_bits;   // 10 for f16, 7 for bf16
  int bias;        // 15, 127
  int exp_max;     // all-ones exponent field: 31, 255
  std::uint16_t (*narrow)(float);
  float (*widen)(std::uint16_t);

  std::uint16_t inf_bits() const { return static_cast<std::uint16_t>(exp_max << mant_bits); }
  std::uint16_t quiet_bit() const { return static_cast<std::uint16_t>(1u << (mant_bits - 1)); }

  // Value of a non-negative pattern up to and including inf_bits(), which stands for 2^(emax+1):
  // the virtual next step after the largest finite value, so overflow is ordinary rounding.
  double value(std::uint32_t p) const {
    const int e = static_cast<int>(p >> mant_bits);
    const std::uint32_t m = p & ((1u << mant_bits) - 1);
    if (e == 0) return std::ldexp(static_cast<double>(m), 1 - bias - mant_bits);
    return std::ldexp(static_cast<double>((1u << mant_bits) + m), e - bias - mant_bits);
  }

  std::vector<double> table() const {
    std::vector<double> t;
    for (std::uint32_t p = 0; p <= inf_bits(); ++p) t.push_back(value(p));
    return t;
  }

  std::uint16_t expected_narrow(float x, const std::vector<double>& t) const {
    const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double ax = std::fabs(static_cast<double>(x));
    if (std::isinf(x)) return sign | inf_bits();
    auto hi_it = std::lower_bound(t.begin(), t.end(), ax);
    if (hi_it == t.end()) return sign | inf_bits();
    auto hi = static_cast<std::uint16_t>(hi_it - t.begin());
    if (*hi_it == ax) return sign | hi;
    const std::uint16_t lo = hi - 1;
    const double dlo = ax - t[lo], dhi = t[hi] - ax;
    if (dlo < dhi) return sign | lo;
    if (dhi < dlo) return sign | hi;
    return sign | ((lo & 1) ? hi : lo);
  }
};

const Format16 kF16{10, 15, 31, f32_to_f16_bits, f16_bits_to_f32};
const Format16 kBF16{7, 127, 255, f32_to_bf16_bits, bf16_bits_to_f32};

float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

class Format16Test : public ::testing::TestWithParam<const Format16*> {};

TEST_P(Format16Test, EveryPatternWidensExactly) {
  const Format16& f = *GetParam();
  for (std::uint32_t p = 0; p < 0x10000; ++p) {
    const auto h = static_cast<std::uint16_t>(p);
    const float w = f.widen(h);
    const bool neg = (p & 0x8000) != 0;
    const std::uint32_t mag = p & 0x7fff;
    ASSERT_EQ(std::signbit(w), neg) << std::hex << p;
    if (mag > f.inf_bits()) {
      ASSERT_TRUE(std::isnan(w)) << std::hex << p;
    } else if (mag == f.inf_bits()) {
      ASSERT_TRUE(std::isinf(w)) << std::hex << p;
    } else {
      ASSERT_EQ(std::fabs(static_cast<double>(w)), f.value(mag)) << std::hex << p;
    }
  }
}

TEST_P(Format16Test, EveryPatternRoundTrips) {
  const Format16& f = *GetParam();
  for (std::uint32_t p = 0; p < 0x10000; ++p) {
    const auto h = static_cast<std::uint16_t>(p);
    const std::uint16_t back = f.narrow(f.widen(h));
    if ((p & 0x7fff) > f.inf_bits()) {
      // NaN stays NaN with its sign and payload; a signalling NaN comes back quiet.
      ASSERT_EQ(back, h | f.quiet_bit()) << std::hex << p;
    } else {
      ASSERT_EQ(back, h) << std::hex << p;
    }
  }
}

TEST_P(Format16Test, SampledFloatsMatchOracle) {
  const Format16& f = *GetParam();
  const auto t = f.table();
  // A prime stride visits every exponent and many mantissa patterns of both signs.
  for (std::uint64_t u = 0; u < (1ull << 32); u += 997) {
    const float x = from_bits(static_cast<std::uint32_t>(u));
    if (std::isnan(x)) continue;
    ASSERT_EQ(f.narrow(x), f.expected_narrow(x, t)) << std::hexfloat << x;
  }
}

TEST_P(Format16Test, HalfwayPointsAndNeighboursMatchOracle) {
  const Format16& f = *GetParam();
  const auto t = f.table();
  for (std::size_t p = 0; p + 1 < t.size(); ++p) {
    const double mid = (t[p] + t[p + 1]) / 2;
    const auto m = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(m), mid) << "midpoint must be an fp32 value";
    for (float x : {m, std::nextafter(m, 0.0f), std::nextafter(m, INFINITY)}) {
      ASSERT_EQ(f.narrow(x), f.expected_narrow(x, t)) << std::hexfloat << x;
      ASSERT_EQ(f.narrow(-x), f.expected_narrow(-x, t)) << std::hexfloat << -x;
    }
  }
}

TEST_P(Format16Test, NaNInputsStayNaNWithSign) {
  const Format16& f = *GetParam();
  // Payload only in the low bits: plain truncation would produce Inf.
  for (std::uint32_t u : {0x7f800001u, 0x7fc00000u, 0x7fffffffu, 0x7f801000u}) {
    for (std::uint32_t s : {0u, 0x80000000u}) {
      const std::uint16_t h = f.narrow(from_bits(u | s));
      EXPECT_GT(h & 0x7fff, f.inf_bits()) << std::hex << (u | s);
      EXPECT_TRUE(h & f.quiet_bit());
      EXPECT_EQ((h & 0x8000) != 0, s != 0);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Dtype, Format16Test, ::testing::Values(&kF16, &kBF16),
                         [](const auto& info) { return info.param == &kF16 ? "f16" : "bf16"; });

TEST(Dtype, F16KnownRoundings) {
  EXPECT_EQ(f32_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(f32_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);              // tie, even stays
  EXPECT_EQ(f32_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);          // tie, odd rounds up
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(1.0f + 0x1p-11f, 2.0f)), 0x3c01);  // just above half
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(1.0f + 3 * 0x1p-11f, 0.0f)), 0x3c01);  // just below half
  EXPECT_EQ(f32_to_f16_bits(65504.0f), 0x7bff);                     // max finite
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00);                     // halfway to 2^16: overflow
  EXPECT_EQ(f32_to_f16_bits(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16_bits(0x1p-24f), 0x0001);                     // smallest subnormal
  EXPECT_EQ(f32_to_f16_bits(0x1p-25f), 0x0000);                     // tie with zero, even
  EXPECT_EQ(f32_to_f16_bits(std::nextafter(0x1p-25f, 1.0f)), 0x0001);
  EXPECT_EQ(f32_to_f16_bits(3 * 0x1p-25f), 0x0002);                 // subnormal tie, odd up
  EXPECT_EQ(f32_to_f16_bits(0x1p-14f - 0x1p-25f), 0x0400);          // carries into the smallest normal
  EXPECT_EQ(f32_to_f16_bits(0x1p-149f), 0x0000);                    // fp32 subnormal
  EXPECT_EQ(f16_bits_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(f16_bits_to_f32(0x03ff), 1023 * 0x1p-24f);
  EXPECT_EQ(f16_bits_to_f32(0x7bff), 65504.0f);
}

TEST(Dtype, BF16KnownRoundings) {
  EXPECT_EQ(f32_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 0x1p-8f), 0x3f80);              // tie, even stays
  EXPECT_EQ(f32_to_bf16_bits(1.0f + 3 * 0x1p-8f), 0x3f82);          // tie, odd rounds up
  EXPECT_EQ(f32_to_bf16_bits(std::nextafter(1.0f + 0x1p-8f, 2.0f)), 0x3f81);
  EXPECT_EQ(f32_to_bf16_bits(std::nextafter(1.0f + 3 * 0x1p-8f, 0.0f)), 0x3f81);
  EXPECT_EQ(bf16_bits_to_f32(0x7f7f), 0x1.fep+127f);                // max finite
  EXPECT_EQ(f32_to_bf16_bits(0x1.fep+127f), 0x7f7f);
  EXPECT_EQ(f32_to_bf16_bits(std::numeric_limits<float>::max()), 0x7f80);  // overflow to inf
  EXPECT_EQ(f32_to_bf16_bits(0x1.ffp+127f), 0x7f80);                // halfway, odd: to inf
  EXPECT_EQ(f32_to_bf16_bits(std::nextafter(0x1.ffp+127f, 0.0f)), 0x7f7f);
  EXPECT_EQ(f32_to_bf16_bits(0x1p-133f), 0x0001);                   // smallest subnormal
  EXPECT_EQ(f32_to_bf16_bits(0x1p-134f), 0x0000);                   // tie with zero
  EXPECT_EQ(f32_to_bf16_bits(-0x1p-133f), 0x8001);
  EXPECT_EQ(bf16_bits_to_f32(0x0001), 0x1p-133f);
}

TEST(Dtype, F64NarrowingRoundsOnce) {
  // Rounding to fp32 first would land exactly on the tie and then round to even (down).
  EXPECT_EQ(f64_to_f16_bits(1.0 + 0x1p-11 + 0x1p-40), 0x3c01);
  EXPECT_EQ(f64_to_f16_bits(1.0 + 0x1p-11 - 0x1p-40), 0x3c00);
  EXPECT_EQ(f64_to_f16_bits(1.0 + 0x1p-11), 0x3c00);
  EXPECT_EQ(f64_to_bf16_bits(1.0 + 0x1p-8 + 0x1p-40), 0x3f81);
  EXPECT_EQ(f64_to_bf16_bits(1.0 + 0x1p-8), 0x3f80);
  EXPECT_EQ(f64_to_f16_bits(1e300), 0x7c00);
  EXPECT_EQ(f64_to_bf16_bits(-1e300), 0xff80);
  EXPECT_EQ(f64_to_f16_bits(1e-300), 0x0000);
  EXPECT_EQ(f64_to_f16_bits(-1e-300), 0x8000);
  EXPECT_EQ(f64_to_bf16_bits(0x1p-134 + 0x1p-180), 0x0001);  // fp32 subnormal range
  EXPECT_EQ(f64_to_bf16_bits(0x1p-134), 0x0000);
  EXPECT_TRUE(std::isnan(f16_bits_to_f32(f64_to_f16_bits(std::nan("")))));
}

TEST(Dtype, RoundThroughAndRoundToDtype) {
  EXPECT_EQ(round_through(1.0f + 0x1p-9f, DType::f32), 1.0f + 0x1p-9f);
  EXPECT_EQ(round_through(1.0f + 0x1p-9f, DType::bf16), 1.0f);
  EXPECT_EQ(round_through(1.0f + 0x1p-9f, DType::f16), 1.0f + 0x1p-9f);
  EXPECT_EQ(round_through(70000.0f, DType::f16), INFINITY);
  EXPECT_EQ(round_to_dtype(2.7, DType::i32), 2.0);
  EXPECT_EQ(round_to_dtype(-2.7, DType::i64), -2.0);
  EXPECT_EQ(round_to_dtype(1e30, DType::i32), 2147483647.0);
  EXPECT_EQ(round_to_dtype(-1e30, DType::i64), -0x1p63);
  EXPECT_EQ(round_to_dtype(std::nan(""), DType::i32), 0.0);
  EXPECT_EQ(round_to_dtype(0.5, DType::boolean), 1.0);
  EXPECT_EQ(round_to_dtype(0.0, DType::boolean), 0.0);
  EXPECT_EQ(round_to_dtype(0.1, DType::f32), static_cast<double>(0.1f));
}

TEST(Dtype, F64KeepsEveryDouble) {
  // Storing in f64 is the identity: the values other dtypes round are kept, including the ones that
  // sit between two fp32 values and the signed zero.
  for (double v : {0.1, 1.0 + 0x1p-52, 0x1p-1074, -0x1.fffffffffffffp+1023, 1e-310, -0.0,
                   std::numeric_limits<double>::infinity()}) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(round_to_dtype(v, DType::f64)), std::bit_cast<std::uint64_t>(v)) << v;
  }
  EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::f64)));
  EXPECT_EQ(round_through(1.0f + 0x1p-23f, DType::f64), 1.0f + 0x1p-23f);
  EXPECT_NE(round_to_dtype(0.1, DType::f64), round_to_dtype(0.1, DType::f32));
}

TEST(Dtype, NamesAndParsing) {
  EXPECT_EQ(dtype_size(DType::f32), 4u);
  EXPECT_EQ(dtype_size(DType::f16), 2u);
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::i32), 4u);
  EXPECT_EQ(dtype_size(DType::i64), 8u);
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
  EXPECT_EQ(dtype_size(DType::f64), 8u);
  EXPECT_TRUE(is_floating(DType::f64));
  EXPECT_FALSE(is_integral(DType::f64));
  EXPECT_TRUE(is_floating(DType::bf16));
  EXPECT_FALSE(is_floating(DType::i32));
  EXPECT_TRUE(is_integral(DType::i64));
  EXPECT_FALSE(is_integral(DType::boolean));
  for (DType t : kAllDTypes) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
    EXPECT_EQ(parse_dtype(torch_repr(t)), t);
    EXPECT_EQ(parse_dtype(safetensors_name(t)), t);
    EXPECT_EQ(parse_safetensors_dtype(safetensors_name(t)), t);
  }
  EXPECT_EQ(torch_repr(DType::bf16), "torch.bfloat16");
  EXPECT_EQ(safetensors_name(DType::boolean), "BOOL");
  EXPECT_EQ(dtype_name(DType::boolean), "bool");
  EXPECT_EQ(parse_dtype("fp32"), DType::f32);
  EXPECT_EQ(parse_dtype("float32"), DType::f32);
  EXPECT_EQ(parse_dtype("fp16"), DType::f16);
  EXPECT_EQ(parse_dtype("float16"), DType::f16);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::bf16);
  EXPECT_EQ(parse_dtype("int32"), DType::i32);
  EXPECT_EQ(parse_dtype("int64"), DType::i64);
  // str(torch.float64) and str(torch.double) are both "torch.float64"; the catalog's messages quote it.
  EXPECT_EQ(torch_repr(DType::f64), "torch.float64");
  EXPECT_EQ(dtype_name(DType::f64), "f64");
  EXPECT_EQ(safetensors_name(DType::f64), "F64");
  EXPECT_EQ(parse_dtype("float64"), DType::f64);
  EXPECT_EQ(parse_dtype("fp64"), DType::f64);
  EXPECT_EQ(parse_dtype("double"), std::nullopt);  // torch's alias, never printed by torch
  EXPECT_EQ(parse_dtype(""), std::nullopt);
  EXPECT_EQ(parse_safetensors_dtype("f32"), std::nullopt);
  EXPECT_EQ(parse_safetensors_dtype("F64"), DType::f64);
  EXPECT_EQ(parse_safetensors_dtype("f64"), std::nullopt);
  // Every name is distinct, so parsing any spelling is unambiguous.
  for (DType a : kAllDTypes) {
    for (DType b : kAllDTypes) {
      if (a != b) {
        EXPECT_NE(dtype_name(a), dtype_name(b));
        EXPECT_NE(torch_repr(a), torch_repr(b));
        EXPECT_NE(safetensors_name(a), safetensors_name(b));
      }
    }
  }
}

}  // namespace
}  // namespace kparity
