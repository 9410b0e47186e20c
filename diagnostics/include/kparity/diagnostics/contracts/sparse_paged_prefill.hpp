#pragma once
// sparse/paged_prefill: sglang's sparse_attn_v4_paged_prefill, V-lse semantics
// (spec sparse_attention.md B, C, D.2, E.1).
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"

namespace kparity::sparse {

inline constexpr std::string_view kPagedPrefillOp = "sparse/paged_prefill";

struct PagedPrefillArgs {
  TensorView q;                  // [T, H, D] bf16/fp16
  TensorView unified_kv;         // [P, D]
  TensorView kv_indices_prefix;  // [N_p] rows of unified_kv; negative entries skipped
  TensorView kv_indptr_prefix;   // [>= T+1]
  TensorView kv;                 // [N_e, D]
  TensorView kv_indices_extend;  // [N_x] rows of kv
  TensorView kv_indptr_extend;   // [>= T+1]
  TensorView attn_sink;          // [>= H]
  double softmax_scale = 0.0;
  bool return_lse = false;
  double replicated_logit_shift = 0.0;
  // Outputs (upstream allocates them; the C++ API takes caller buffers).
  TensorView out;                // [T, H, D], dtype of q
  std::optional<TensorView> lse; // [T, H] fp32, required when return_lse
};

struct PrefillDims {
  std::int64_t T = 0, H = 0, D = 0, P = 0, N_e = 0;
};

std::vector<Diagnostic> validate_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o = {});
std::vector<Diagnostic> check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o = {});
Status try_check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o = {}) noexcept;
PrefillDims paged_prefill_dims(const PagedPrefillArgs& a);
PagedPrefillArgs paged_prefill_args(const ArgBag& bag);

}  // namespace kparity::sparse
