#pragma once
// kda/replayssm_decode: sglang's helion_fused_recurrent_kda_replayssm_decode (spec kda.md B.2, C.1).
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/kda_common.hpp"

namespace kparity::kda {

inline constexpr std::string_view kReplaySsmDecodeOp = "kda/replayssm_decode";

// Upstream's positional order; `out`, `initial_state` and the three rings are updated in place.
struct ReplaySsmDecodeArgs {
  TensorView mixed_qkv;  // [B, 2*H*K + HV*V]
  TensorView a;          // [B, HV*K] or [B, HV, K], contiguous
  TensorView b;          // [B, HV]
  TensorView A_log;      // [HV]
  TensorView dt_bias;    // [HV*K] or [HV, K], contiguous
  double scale = 0.0;
  TensorView initial_state;  // [slots, HV, V, K]
  TensorView d_cache;        // [slots, HV, L, V]
  TensorView k_cache;        // [slots, H, L, K]
  TensorView g_cache;        // [slots, HV, L, K] fp32
  TensorView out;            // [B, 1, HV, V]
  TensorView ssm_state_indices;  // [B]; negative = padding row
  TensorView write_pos;          // [B] int32 cursor in [0, L-1]
  std::optional<TensorView> force_flush;  // [B] int32; nonzero forces a flush
  bool use_qk_l2norm_in_kernel = false;
  std::optional<double> lower_bound;
  // Not an upstream argument: the Helion kernel rounds beta through b's dtype (spec A.4).
  BetaRounding beta_rounding = BetaRounding::through_b_dtype;
};

std::vector<Diagnostic> validate_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o = {});
// Throws the first error in upstream order; returns warnings.
std::vector<Diagnostic> check_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o = {});
Status try_check_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o = {}) noexcept;
// Sizes of a call that passed the checks (L = d_cache.size(2)).
ReplayDims replayssm_dims(const ReplaySsmDecodeArgs& a);
// Arguments by upstream name; throws std::invalid_argument naming a missing required one.
ReplaySsmDecodeArgs replayssm_decode_args(const ArgBag& bag);

// The call as the op reads it: `a` as upstream's a.view(batch, -1) and `dt_bias` as dt_bias.view(-1)
// (C.1 #3), so any contiguous `a` with batch * HV * K elements means the same thing to the reference
// and the kernels. Only for a call the contract accepted.
ReplaySsmDecodeArgs replayssm_flattened(const ReplaySsmDecodeArgs& a);

}  // namespace kparity::kda
