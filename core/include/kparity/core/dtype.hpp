#pragma once
// Element types and exact IEEE conversions between fp64, fp32 and the 16-bit float formats.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kparity {

// f64 comes last so the values of the older enumerators (and the order of kAllDTypes' first six
// entries) stay what they were.
enum class DType : std::uint8_t { f32, f16, bf16, i32, i64, boolean, f64 };

inline constexpr DType kAllDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::i32,
                                       DType::i64, DType::boolean, DType::f64};

// Inline (with the 16-bit widenings below): every element load calls them (issue 25: out of line,
// they were a visible share of the rule's element-by-element reads).
inline std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::f64: case DType::i64: return 8;
    case DType::f32: case DType::i32: return 4;
    case DType::f16: case DType::bf16: return 2;
    case DType::boolean: return 1;
  }
  return 0;
}
bool is_floating(DType t) noexcept;  // f64, f32, f16, bf16
bool is_integral(DType t) noexcept;  // i32, i64 (not bool)

// "f32", "f16", "bf16", "i32", "i64", "bool", "f64": the spelling of fixtures, CLI flags and file names.
std::string_view dtype_name(DType t) noexcept;
// torch's repr: torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool,
// torch.float64 (str(torch.double) is also "torch.float64": torch prints the canonical name).
std::string_view torch_repr(DType t) noexcept;
// safetensors' spelling: F32, F16, BF16, I32, I64, BOOL, F64.
std::string_view safetensors_name(DType t) noexcept;
// Accepts every spelling above plus fp64/fp32/fp16/float64/float32/float16/bfloat16/int32/int64.
std::optional<DType> parse_dtype(std::string_view s) noexcept;
std::optional<DType> parse_safetensors_dtype(std::string_view s) noexcept;

// Round-to-nearest-even narrowing; NaN stays NaN (quiet, sign kept), overflow goes to ±Inf,
// subnormal results are produced exactly. Widening is exact.
std::uint16_t f32_to_bf16_bits(float x) noexcept;
inline float bf16_bits_to_f32(std::uint16_t b) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16);
}
std::uint16_t f32_to_f16_bits(float x) noexcept;
inline float f16_bits_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // mant * 2^-24 is exact in fp32.
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
}

// rt(x, T) of the specs: round an fp32 value through dtype T and widen it back.
float round_through(float x, DType t) noexcept;

// Narrowing from fp64 with a single rounding (no double rounding through fp32): what a host fill or
// store of a double into a 16-bit float buffer must produce.
std::uint16_t f64_to_bf16_bits(double x) noexcept;
std::uint16_t f64_to_f16_bits(double x) noexcept;
// The value `v` takes once stored in dtype `t`, widened back to fp64: f64 keeps it bit for bit (NaN
// payloads included), the other floats round to nearest even;
// integers follow torch's cast (truncate toward zero), saturating at the type's range, NaN -> 0;
// bool is v != 0 (NaN is true, as in Python).
double round_to_dtype(double v, DType t) noexcept;

}  // namespace kparity
