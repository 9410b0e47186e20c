#pragma once
#include <cstdint>

namespace kparity::kda {

// Spec kda.md A.4 item 6.
enum class BetaRounding { through_b_dtype, fp32 };

// (B, H, HV, K, V) as upstream's validate_packed_decode_inputs returns them.
struct DecodeDims {
  std::int64_t B = 0, H = 0, HV = 0, K = 0, V = 0;
};
struct ReplayDims : DecodeDims {
  std::int64_t L = 0;
};

}  // namespace kparity::kda
