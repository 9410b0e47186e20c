#pragma once
// The op -> CUDA launcher mapping, written once (issue 32): each row names the op, the contract's
// typed-argument builder and the launcher call, where `a` is the typed arguments, `s` the stream,
// `o` the kernels::LaunchOptions and `ws` the sparse decode workspace. kernel_ops.cpp reads the op
// column in every build (the ops listed whether or not the kernels are built); kernel_launch.cpp the
// whole row in kernel builds. `kparity run --backend cuda`, the fuzz CUDA backend and launcher
// properties, `kparity.kernel` and the forwarding example plugin all go through it.
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

#define KPARITY_KERNEL_TABLE(X)                                                                              \
  X(kparity::kda::kReplaySsmDecodeOp, kparity::kda::replayssm_decode_args, kernels::kda::replayssm_decode(a, s, o)) \
  X(kparity::kda::kPackedDecodeOp, kparity::kda::packed_decode_args, kernels::kda::packed_decode(a, s, o))        \
  X(kparity::kda::kRecurrentOp, kparity::kda::recurrent_args, kernels::kda::recurrent(a, s, o))                  \
  X(kparity::kda::kChunkOp, kparity::kda::chunk_args, kernels::kda::chunk(a, s, o))                              \
  X(kparity::sparse::kPagedPrefillOp, kparity::sparse::paged_prefill_args, kernels::sparse::paged_prefill(a, s, o)) \
  X(kparity::sparse::kPagedDecodeOp, kparity::sparse::paged_decode_args, kernels::sparse::paged_decode(a, s, o, ws))
