#include "kparity/core/dtype.hpp"

#include <bit>
#include <cmath>
#include <limits>

namespace kparity {

bool is_floating(DType t) noexcept {
  return t == DType::f64 || t == DType::f32 || t == DType::f16 || t == DType::bf16;
}
bool is_integral(DType t) noexcept { return t == DType::i32 || t == DType::i64; }

std::string_view dtype_name(DType t) noexcept {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
    case DType::f64: return "f64";
  }
  return "?";
}

std::string_view torch_repr(DType t) noexcept {
  switch (t) {
    case DType::f32: return "torch.float32";
    case DType::f16: return "torch.float16";
    case DType::bf16: return "torch.bfloat16";
    case DType::i32: return "torch.int32";
    case DType::i64: return "torch.int64";
    case DType::boolean: return "torch.bool";
    case DType::f64: return "torch.float64";
  }
  return "?";
}

std::string_view safetensors_name(DType t) noexcept {
  switch (t) {
    case DType::f32: return "F32";
    case DType::f16: return "F16";
    case DType::bf16: return "BF16";
    case DType::i32: return "I32";
    case DType::i64: return "I64";
    case DType::boolean: return "BOOL";
    case DType::f64: return "F64";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) noexcept {
  struct Alias { std::string_view name; DType t; };
  static constexpr Alias kAliases[] = {
      {"fp32", DType::f32}, {"float32", DType::f32},   {"fp16", DType::f16}, {"float16", DType::f16},
      {"bfloat16", DType::bf16}, {"int32", DType::i32}, {"int64", DType::i64}, {"fp64", DType::f64},
      {"float64", DType::f64}};
  for (DType t : kAllDTypes) {
    if (s == dtype_name(t) || s == torch_repr(t) || s == safetensors_name(t)) return t;
  }
  for (const Alias& a : kAliases) {
    if (s == a.name) return a.t;
  }
  return std::nullopt;
}

std::optional<DType> parse_safetensors_dtype(std::string_view s) noexcept {
  for (DType t : kAllDTypes) {
    if (s == safetensors_name(t)) return t;
  }
  return std::nullopt;
}

std::uint16_t f32_to_bf16_bits(float x) noexcept {
  std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    // Truncating could clear every payload bit and turn the NaN into Inf; forcing the quiet bit
    // keeps it a NaN.
    return static_cast<std::uint16_t>((u >> 16) | 0x0040u);
  }
  // Adding 0x7fff plus the kept lsb rounds half to even; a carry out of the mantissa bumps the
  // exponent, which also turns the largest values into Inf.
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>(u >> 16);
}

std::uint16_t f32_to_f16_bits(float x) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t exp = (u >> 23) & 0xffu;
  const std::uint32_t mant = u & 0x7fffffu;
  if (exp == 0xffu) {
    if (mant == 0) return sign | 0x7c00u;
    return static_cast<std::uint16_t>(sign | 0x7e00u | (mant >> 13));
  }
  const int e = static_cast<int>(exp) - 127;
  if (e > 15) return sign | 0x7c00u;
  // fp32 subnormals (exp == 0) are far below half the smallest f16 subnormal.
  if (e < -25 || exp == 0) return sign;
  const std::uint32_t sig = mant | 0x800000u;
  // Normal results keep 10 of 23 mantissa bits; subnormal results are sig * 2^(e+1) in units of
  // 2^-24, i.e. a wider shift. A rounding carry moves into the exponent field by itself.
  const int shift = e >= -14 ? 13 : -e - 1;
  const std::uint32_t base = e >= -14 ? (static_cast<std::uint32_t>(e + 15) << 10) | (mant >> 13) : sig >> shift;
  const std::uint32_t rem = (e >= -14 ? mant : sig) & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1);
  std::uint32_t h = base;
  if (rem > half || (rem == half && (base & 1u))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

namespace {

// fp64 -> fp32 with round-to-odd: rounding that result again to 11 or 8 significant bits equals a
// single rounding of the fp64 value, because fp32 keeps at least two extra bits.
float f64_to_f32_odd(double x) noexcept {
  if (std::isnan(x)) return static_cast<float>(x);
  float f = static_cast<float>(x);
  if (static_cast<double>(f) == x) return f;
  if (std::fabs(static_cast<double>(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
  return std::bit_cast<float>(std::bit_cast<std::uint32_t>(f) | 1u);
}

}  // namespace

std::uint16_t f64_to_bf16_bits(double x) noexcept { return f32_to_bf16_bits(f64_to_f32_odd(x)); }
std::uint16_t f64_to_f16_bits(double x) noexcept { return f32_to_f16_bits(f64_to_f32_odd(x)); }

namespace {

template <class Int>
double cast_to_int(double v) noexcept {
  if (std::isnan(v)) return 0.0;
  const double t = std::trunc(v);
  constexpr double lo = static_cast<double>(std::numeric_limits<Int>::min());
  // max() of i64 is not representable; 2^63 is the first value out of range.
  constexpr double hi_excl = -lo;
  if (t < lo) return lo;
  if (t >= hi_excl) return static_cast<double>(std::numeric_limits<Int>::max());
  return t;
}

}  // namespace

double round_to_dtype(double v, DType t) noexcept {
  switch (t) {
    case DType::f32: return static_cast<double>(static_cast<float>(v));
    case DType::f16: return f16_bits_to_f32(f64_to_f16_bits(v));
    case DType::bf16: return bf16_bits_to_f32(f64_to_bf16_bits(v));
    case DType::i32: return cast_to_int<std::int32_t>(v);
    case DType::i64: return cast_to_int<std::int64_t>(v);
    case DType::boolean: return v != 0.0 ? 1.0 : 0.0;
    case DType::f64: return v;
  }
  return v;
}

float round_through(float x, DType t) noexcept {
  switch (t) {
    case DType::f32: case DType::f64: return x;
    case DType::f16: return f16_bits_to_f32(f32_to_f16_bits(x));
    case DType::bf16: return bf16_bits_to_f32(f32_to_bf16_bits(x));
    default: return static_cast<float>(round_to_dtype(x, t));
  }
}

}  // namespace kparity
