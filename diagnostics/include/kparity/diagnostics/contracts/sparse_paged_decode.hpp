#pragma once
// sparse/paged_decode: sglang's sparse_attn_v4_paged_decode (spec sparse_attention.md F.0).
#include <optional>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"

namespace kparity::sparse {

inline constexpr std::string_view kPagedDecodeOp = "sparse/paged_decode";

struct PagedDecodeArgs {
  TensorView q;           // [T, H, D] bf16/fp16
  TensorView unified_kv;  // [P, D]
  TensorView kv_indices;  // [N]; every entry a valid row (no sentinels)
  TensorView kv_indptr;   // [>= T+1]
  TensorView attn_sink;   // [>= H]
  double softmax_scale = 0.0;
  bool return_lse = false;
  TensorView out;                 // [T, H, D]
  std::optional<TensorView> lse;  // [T, H] fp32 when return_lse
};

struct DecodeDims {
  std::int64_t T = 0, H = 0, D = 0, P = 0;
};

std::vector<Diagnostic> validate_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o = {});
std::vector<Diagnostic> check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o = {});
Status try_check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o = {}) noexcept;
DecodeDims paged_decode_dims(const PagedDecodeArgs& a);
PagedDecodeArgs paged_decode_args(const ArgBag& bag);

}  // namespace kparity::sparse
