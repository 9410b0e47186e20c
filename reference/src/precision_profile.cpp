#include "kparity/reference/precision_profile.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kparity::reference {
namespace {

thread_local PrecisionProfile t_profile = PrecisionProfile::faithful;

}  // namespace

std::string_view profile_name(PrecisionProfile p) noexcept {
  switch (p) {
    case PrecisionProfile::tf32_dot: return "tf32-dot";
    case PrecisionProfile::fla_chunk: return "fla-chunk";
    case PrecisionProfile::kparity_chunk: return "kparity-chunk";
    case PrecisionProfile::faithful: break;
  }
  return "faithful";
}

std::optional<PrecisionProfile> parse_profile(std::string_view s) noexcept {
  if (s == "faithful") return PrecisionProfile::faithful;
  if (s == "tf32-dot" || s == "sglang-triton") return PrecisionProfile::tf32_dot;
  if (s == "fla-chunk") return PrecisionProfile::fla_chunk;
  if (s == "kparity-chunk") return PrecisionProfile::kparity_chunk;
  return std::nullopt;
}

PrecisionProfile precision_profile() noexcept { return t_profile; }

PrecisionProfileScope::PrecisionProfileScope(PrecisionProfile p) noexcept : previous_(t_profile) { t_profile = p; }
PrecisionProfileScope::~PrecisionProfileScope() { t_profile = previous_; }

float truncate_to_tf32(float x) noexcept {
  if (!std::isfinite(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xffffe000u;  // 1 sign + 8 exponent + 10 mantissa bits kept
  std::memcpy(&x, &u, sizeof u);
  return x;
}

}  // namespace kparity::reference
