#pragma once
// Pieces both decode launchers share: deriving (B, H, HV, K, V) from the views, the kernel-support
// checks that come after the contract, filling DecodeInputs and choosing the V tile.
#include <optional>
#include <string_view>

#include "kda/prepare.hpp"

namespace kparity::kernels::kda::detail {

struct DecodeViews {
  const TensorView *mixed_qkv, *a, *b, *A_log, *dt_bias, *state, *out, *idx;
  double scale;
  bool l2norm;
  std::optional<double> lower_bound;
};

// Sizes per kda.md B.0 item 2; nullopt when the views cannot describe a call (a contract gap).
std::optional<kparity::kda::DecodeDims> derive_decode_dims(const DecodeViews& v);

// NotImplementedError for dtypes/head dims the kernels lack (kda/support.hpp); `id` is the op's
// kernel-unsupported catalog entry.
Status check_decode_support(std::string_view op, std::string_view id, const DecodeViews& v,
                            const kparity::kda::DecodeDims& d);

void fill_decode_inputs(const DecodeViews& v, const kparity::kda::DecodeDims& d, DecodeInputs& in);

// Largest V tile (power of two, >= 16) that still gives about four CTAs per SM; small batches get
// more, thinner CTAs so the whole GPU streams the state.
std::int64_t choose_vtile(std::int64_t rows_x_heads, std::int64_t V);

}  // namespace kparity::kernels::kda::detail
