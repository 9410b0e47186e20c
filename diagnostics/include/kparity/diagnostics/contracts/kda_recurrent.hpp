#pragma once
// kda/recurrent: the KDA recurrence over variable-length sequences (spec kda.md A; the
// flash-linear-attention naive recurrent form, in sglang's [N, HV, V, K] state orientation).
// Upstream has no wrapper checks for this form; every check here is origin kparity.
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/kda_common.hpp"

namespace kparity::kda {

inline constexpr std::string_view kRecurrentOp = "kda/recurrent";

struct RecurrentArgs {
  TensorView q;     // [T, H, K]
  TensorView k;     // [T, H, K]
  TensorView v;     // [T, HV, V]
  // Gate: either g (precomputed log-decay) or the raw form a + dt_bias + A_log (+ lower_bound).
  std::optional<TensorView> g;        // [T, HV, K]
  std::optional<TensorView> a;        // [T, HV, K]
  std::optional<TensorView> dt_bias;  // [HV, K]
  std::optional<TensorView> A_log;    // [HV]
  std::optional<double> lower_bound;
  TensorView beta;                    // [T, HV]
  bool beta_is_logits = false;        // true: beta = sigmoid(beta)
  bool use_qk_l2norm_in_kernel = false;
  std::optional<double> scale;        // default K^-0.5
  std::optional<TensorView> initial_state;  // [N, HV, V, K]
  std::optional<TensorView> final_state;    // [N, HV, V, K], written when given
  TensorView out;                           // [T, HV, V]
  std::optional<TensorView> cu_seqlens;     // [N+1] int32/int64; absent: one sequence of T tokens
};

struct RecurrentDims {
  std::int64_t T = 0, N = 0, H = 0, HV = 0, K = 0, V = 0;
};

std::vector<Diagnostic> validate_recurrent(const RecurrentArgs& a, const ValidateOptions& o = {});
std::vector<Diagnostic> check_recurrent(const RecurrentArgs& a, const ValidateOptions& o = {});
Status try_check_recurrent(const RecurrentArgs& a, const ValidateOptions& o = {}) noexcept;
RecurrentDims recurrent_dims(const RecurrentArgs& a);
RecurrentArgs recurrent_args(const ArgBag& bag);

}  // namespace kparity::kda
