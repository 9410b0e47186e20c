#pragma once
// kda/packed_decode: sglang's helion_fused_recurrent_kda_packed_decode (spec kda.md B.1, C.2).
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/kda_common.hpp"

namespace kparity::kda {

inline constexpr std::string_view kPackedDecodeOp = "kda/packed_decode";

struct PackedDecodeArgs {
  TensorView mixed_qkv;  // [B, 2*H*K + HV*V]
  TensorView a;          // [B, HV*K]
  TensorView b;          // [B, HV]
  TensorView A_log;      // [HV]
  TensorView dt_bias;    // [HV*K]
  double scale = 0.0;
  TensorView initial_state;      // [slots, HV, V, K], updated in place
  TensorView out;                // [B, 1, HV, V]
  TensorView ssm_state_indices;  // [B]; negative = padding row
  bool use_qk_l2norm_in_kernel = false;
  std::optional<double> lower_bound;
};

std::vector<Diagnostic> validate_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o = {});
std::vector<Diagnostic> check_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o = {});
Status try_check_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o = {}) noexcept;
DecodeDims packed_decode_dims(const PackedDecodeArgs& a);
PackedDecodeArgs packed_decode_args(const ArgBag& bag);

}  // namespace kparity::kda
