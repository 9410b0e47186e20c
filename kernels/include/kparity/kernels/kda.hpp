#pragma once
// CUDA kernels for the KDA ops (spec kda.md). Semantics: the reference's faithful mode. Each
// launcher runs the op's contract, fills a POD params struct, dispatches on dtypes and head dims
// and launches on `stream`; it never allocates device memory and never synchronises unless asked,
// so the decode launchers can be captured into a CUDA graph.
#include <cuda_runtime_api.h>

#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/kernels/launch.hpp"

namespace kparity::kernels::kda {

using kparity::kda::ChunkArgs;
using kparity::kda::PackedDecodeArgs;
using kparity::kda::RecurrentArgs;
using kparity::kda::ReplaySsmDecodeArgs;

// Supported by the kernels (anything else is a NotImplementedError naming the value):
// state f32/bf16/f16; out (and, for ReplaySSM, the d/k rings, which must share one dtype)
// f32/bf16/f16; every other float input any of f32/bf16/f16; K and V powers of two in [16, 256].
Status replayssm_decode(const ReplaySsmDecodeArgs& args, cudaStream_t stream, const LaunchOptions& options = {});
Status packed_decode(const PackedDecodeArgs& args, cudaStream_t stream, const LaunchOptions& options = {});
// Varlen prefill: one CTA row per (sequence, value head, V tile), tokens walked in order.
Status recurrent(const RecurrentArgs& args, cudaStream_t stream, const LaunchOptions& options = {});
// fla's chunk_kda (kda/chunk): chunks of 16 tokens on tensor cores, one CTA per (sequence, value
// head, V tile) walking its chunks in order (docs/kda_chunk_kernel.md: algorithm and rounding
// points). Same support set as recurrent. In a build configured with KPARITY_CHUNK_KERNEL=OFF the
// launcher still runs the contract and the support checks, then refuses every call with the
// kda-chunk-kernel-not-built NotImplementedError before any CUDA call.
Status chunk(const ChunkArgs& args, cudaStream_t stream, const LaunchOptions& options = {});
// Whether this build has the chunked kernel (KPARITY_CHUNK_KERNEL).
bool chunk_kernel_built() noexcept;

}  // namespace kparity::kernels::kda
