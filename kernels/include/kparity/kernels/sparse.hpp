#pragma once
// CUDA kernels for DeepSeek-V4 sparse attention (spec sparse_attention.md B, C, F.0). Semantics: the
// reference's faithful mode (one online softmax over prefix then extend rows, negative entries
// skipped, duplicates counted, sink folded in at the end as a zero-value logit). Each launcher runs
// the op's contract, fills a POD params struct, dispatches on dtype / head dim / head tile and
// launches on `stream`; it never synchronises unless LaunchOptions asks and never allocates.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/kernels/launch.hpp"

namespace kparity::kernels::sparse {

using kparity::sparse::PagedDecodeArgs;
using kparity::sparse::PagedPrefillArgs;

// Optional tile choices (tests pin them for launch-configuration independence, spec AP-S7; 0 = auto).
struct SparseTuning {
  int head_tile = 0;  // heads per CTA: 16 (needs D > 64) or 64; under variant 3: 16 or 32
  int kv_splits = 0;  // decode only: key-range splits per (token, head tile); 1 disables split-K
  // 0: auto -- the wgmma kernel (2) when D is in (256, 512], the head tile is 64 and q and the KV
  // sources allow 16-byte loads, else the mma.sync kernel; 1: always the mma.sync kernel; 2: the
  // wgmma kernel where it applies (split S, row addresses decoded once per tile, the next gather
  // issued under the QK wgmma), mma.sync elsewhere. 3 (decode only): the small-T decode kernel
  // (kernels/sparse/decode_small_kernel.cuh: 16- or 32-head groups so T = 1..8 fills the SMs; needs
  // D <= 512 and 16-byte KV rows), which auto also picks for small T * H when the build option
  // KPARITY_SPARSE_SMALL_DECODE (or the environment's KPARITY_SPARSE_SMALL_DECODE=1) enables it.
  int variant = 0;
  // Variant 3's KV gather: 0 auto, 1 16-byte cp.async, 2 one bulk (TMA) copy per selected row.
  int decode_gather = 0;
  // Variant 3's split-K merge: 0 auto (today: 1), 1 the combine kernel through the caller's
  // workspace, 2 inside a thread-block cluster (the splits of one token and head group, at most 16,
  // merge through distributed shared memory: no workspace, no second launch, the same finalisation).
  int decode_combine = 0;
};

// Supported: q/unified_kv/kv/out bf16 or fp16 (one dtype), 1 <= D <= 512, any H and T, any strides
// (16-byte loads when the last dim is contiguous and rows are 16-byte aligned, element loads
// otherwise), int32/int64 indices and pointers, f32/bf16/f16 sink, lse f32. Row ids must be below
// 2^31 - 2 (upstream converts indices to int32). Anything else: NotImplementedError naming it.
Status paged_prefill(const PagedPrefillArgs& args, cudaStream_t stream, const LaunchOptions& options = {},
                     const SparseTuning& tuning = {});

// Split-K workspace of paged_decode: fp32 partials (running max, sum, unnormalised output) per
// (split, token, head). Caller-owned device memory, at least paged_decode_workspace_bytes(args) bytes,
// 16-byte aligned, not shared by launches in flight. Without one (nullptr / too small) decode runs a
// single pass per (token, head tile), which is slower when T * ceil(H / 64) is far below the SM count.
struct DecodeWorkspace {
  void* data = nullptr;
  std::size_t bytes = 0;
};
// Bytes paged_decode would use for these shapes on the current device (0: no split-K needed). The
// split count follows T, H, the SM count and kv_indices' length (never more splits than the mean
// list has key tiles), so size the workspace with the arguments of the calls it serves (and the
// same tuning and small-decode switch: variant 3 makes its own split counts).
std::size_t paged_decode_workspace_bytes(const PagedDecodeArgs& args, const SparseTuning& tuning = {});

// Decode: one source, no shift. Negative entries (undefined upstream, F.0 item 2) are skipped like
// prefill sentinels. Upstream works in the log2 domain; this kernel uses exp2 with log2(e) folded at
// the subtraction, numerically within the faithful tolerance of either form.
Status paged_decode(const PagedDecodeArgs& args, cudaStream_t stream, const LaunchOptions& options = {},
                    DecodeWorkspace workspace = {}, const SparseTuning& tuning = {});

}  // namespace kparity::kernels::sparse
