#pragma once
// The op's kernel launcher on argument views, by op name (the one dispatch both CUDA fuzz sources use).
#include <stdexcept>
#include <string>
#include <string_view>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/kernels/sparse.hpp"

namespace kparity::fuzz {

inline Status launch_op(std::string_view op, const ArgBag& args, const kernels::LaunchOptions& o,
                        kernels::sparse::DecodeWorkspace ws = {}) {
  if (op == kda::kReplaySsmDecodeOp) return kernels::kda::replayssm_decode(kda::replayssm_decode_args(args), nullptr, o);
  if (op == kda::kPackedDecodeOp) return kernels::kda::packed_decode(kda::packed_decode_args(args), nullptr, o);
  if (op == kda::kRecurrentOp) return kernels::kda::recurrent(kda::recurrent_args(args), nullptr, o);
  if (op == sparse::kPagedPrefillOp) return kernels::sparse::paged_prefill(sparse::paged_prefill_args(args), nullptr, o);
  if (op == sparse::kPagedDecodeOp) return kernels::sparse::paged_decode(sparse::paged_decode_args(args), nullptr, o, ws);
  throw std::invalid_argument("no kernel launcher for op '" + std::string(op) + "'");
}

}  // namespace kparity::fuzz
