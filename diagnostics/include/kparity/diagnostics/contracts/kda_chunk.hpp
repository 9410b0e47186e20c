#pragma once
// kda/chunk: flash-linear-attention's chunk_kda (fla/ops/kda/chunk.py @bc3b101d), the chunked KDA
// prefill, as an op of its own. Its result is the KDA recurrence (spec kda.md A), so its reference is
// kda/recurrent's; what differs is the calling convention, modelled here argument by argument.
//
// Layout. q, k [B, T, H, K]; v [B, T, HV, V]; g [B, T, HV, K]; beta [B, T, HV]; out [B, T, HV, V].
// Without cu_seqlens the B rows are B sequences of T tokens each (N = B). With cu_seqlens (int,
// [N+1] offsets into the T axis) B must be 1 and the rows of q[0] are N packed sequences, empty
// ones allowed. GQA: value head hv reads q/k head hv / (HV / H) (fla/ops/kda/chunk_intra.py).
// States are fp32 [N, HV, K, V], or [N, HV, V, K] with state_v_first (fla's default is K-first;
// kda/recurrent and sglang use V-first).
//
// Options (what each means, after fla/ops/kda/chunk.py and the functions it calls):
//   scale                 q is scaled by it; None = K ** -0.5.
//   use_qk_l2norm_in_kernel  q and k are divided by sqrt(sum of squares + 1e-6) per head
//                         (fla/modules/l2norm.py, l2norm_fwd).
//   use_gate_in_kernel    False: g is the per-channel log-decay, the state decays by exp(g).
//                         True: g is the raw gate x (+ dt_bias, [HV*K] or [HV, K], when given) and the
//                         log-decay is -exp(A_log) * softplus(x), softplus(x) = x above 20; with
//                         lower_bound set it is lower_bound * sigmoid(exp(A_log) * x), and A_log may
//                         then be None (lower_bound * sigmoid(x)) (fla/ops/kda/gate.py,
//                         kda_gate_chunk_cumsum). Without use_gate_in_kernel, A_log, dt_bias and
//                         lower_bound are ignored (the wrapper drops A_log and dt_bias).
//   use_beta_sigmoid_in_kernel  beta holds logits: beta = sigmoid(beta) (fla/ops/common/gate.py).
//   allow_neg_eigval      with use_beta_sigmoid_in_kernel: beta = 2 * sigmoid(beta), in [0, 2); fla
//                         materialises it as an fp32 tensor, and kparity takes that fp32 value in both
//                         precisions (the one rounding the oracle inherits from upstream).
//   safe_gate             a kernel choice (the M = 16 sub-chunk path of chunk_intra.py), not a change
//                         of the result: it assumes every log-decay lies in [-5, 0), which the bounded
//                         gate guarantees; with use_gate_in_kernel it requires lower_bound in [-5, 0).
//   lower_bound           see use_gate_in_kernel and safe_gate.
//   chunk_size            32 or 64 (a kwarg upstream, default 64): a tiling choice, no effect on the result.
//   output_final_state    write the final state of each sequence into final_state (fp32 upstream).
//   initial_state         the state each sequence starts from; None = zeros.
//   disable_recompute     memory/speed trade for the backward pass; no effect on the forward result.
//   return_intermediate_states  upstream also returns the per-chunk states h (bf16, inference mode
//                         only); kparity models o and final_state, not h.
//   state_v_first, transpose_state_layout (its deprecated spelling, a kwarg)  the state layout.
//   cu_seqlens_cpu        a host copy of cu_seqlens upstream counts chunks with; it must agree.
// Not modelled: cp_context (context parallelism across devices), and the FlashKDA / TileLang /
// Ascend backends fla dispatches to when installed (fla/ops/kda/backends): this is the Triton path.
//
// Checks, in order: the wrapper's raises and asserts (upstream, byte-identical), the places where it
// fails implicitly (IndexError, ValueError, TypeError, ZeroDivisionError; kparity entries naming the
// cause), the assert after the kernels (return_intermediate_states), then kparity's structural checks
// (on by default: without them the reference would read out of bounds), then optional extra and deep
// checks.
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"

namespace kparity::kda {

inline constexpr std::string_view kChunkOp = "kda/chunk";

struct ChunkArgs {
  // chunk_kda's parameters, in its positional order.
  TensorView q;     // [B, T, H, K]
  TensorView k;     // [B, T, H, K]
  TensorView v;     // [B, T, HV, V]
  TensorView g;     // [B, T, HV, K]: log-decay, or the raw gate with use_gate_in_kernel
  TensorView beta;  // [B, T, HV]: probabilities, or logits with use_beta_sigmoid_in_kernel
  std::optional<double> scale;              // None: K ** -0.5
  std::optional<TensorView> initial_state;  // [N, HV, K, V] (state_v_first: [N, HV, V, K]), fp32
  bool output_final_state = false;
  bool use_qk_l2norm_in_kernel = false;
  bool use_gate_in_kernel = false;
  bool use_beta_sigmoid_in_kernel = false;
  bool allow_neg_eigval = false;
  bool safe_gate = false;
  std::optional<double> lower_bound;
  bool disable_recompute = false;
  bool return_intermediate_states = false;
  bool state_v_first = false;
  std::optional<TensorView> cu_seqlens;      // [N+1]
  std::optional<TensorView> cu_seqlens_cpu;  // [N+1], host copy of cu_seqlens
  // chunk_kda's **kwargs.
  std::optional<TensorView> A_log;    // [HV]
  std::optional<TensorView> dt_bias;  // [HV*K] or [HV, K]
  std::optional<double> chunk_size;   // None: 64
  std::optional<bool> transpose_state_layout;  // deprecated spelling of state_v_first
  // What upstream returns, as tensors the caller provides.
  TensorView out;                         // [B, T, HV, V]: o
  std::optional<TensorView> final_state;  // like initial_state; written when output_final_state
};

struct ChunkDims {
  std::int64_t B = 0, T = 0, N = 0, H = 0, HV = 0, K = 0, V = 0;
  bool state_v_first = false;  // after transpose_state_layout
};

std::vector<Diagnostic> validate_chunk(const ChunkArgs& a, const ValidateOptions& o = {});
std::vector<Diagnostic> check_chunk(const ChunkArgs& a, const ValidateOptions& o = {});
Status try_check_chunk(const ChunkArgs& a, const ValidateOptions& o = {}) noexcept;
// Throws std::invalid_argument unless the call passes the default checks.
ChunkDims chunk_dims(const ChunkArgs& a);
ChunkArgs chunk_args(const ArgBag& bag);

}  // namespace kparity::kda
