#pragma once
// Compile-time dispatch entry points, one translation unit per storage dtype (style habit 9).
// The launchers validate the (dp, ht) pair first; a pair no instance exists for comes back as a
// DispatchResult naming it.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <string_view>

#include "common/dispatch_result.hpp"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse {

// dp: D rounded up to 64/128/256/512; ht: heads per CTA (16 needs dp >= 128, 64 any dp). The
// instances launch_attn_* has (launch_impl.cuh's switch).
constexpr bool supported_tile(int dp, int ht) {
  const bool dp_ok = dp == 64 || dp == 128 || dp == 256 || dp == 512;
  return dp_ok && (ht == 64 || (ht == 16 && dp >= 128));
}
inline constexpr std::string_view kTilesText = "64, or 16 when D > 64";
inline constexpr int kMaxD = 512;  // the largest dp: D up to this

// wg: 0 the mma.sync kernel; 1 the wgmma kernel of wg_addr_kernel.cuh (sm_90a; dp 512, ht 64,
// p.vec_q and p.vec_kv). pdl: launched with programmatic dependent launch (common/pdl.cuh).
DispatchResult launch_attn_bf16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream, bool pdl);
DispatchResult launch_attn_f16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream, bool pdl);
// The small-T decode kernel (decode_small_kernel.cuh, SparseTuning::variant 3): head groups of 16
// or 32 heads, D padded to 512, 16-byte KV rows; the KV gather by 16-byte cp.async or one bulk copy
// per row.
inline constexpr int kGatherCpAsync = 1, kGatherBulk = 2;
constexpr bool supported_small_group(int hg) { return hg == 16 || hg == 32; }
inline constexpr std::string_view kSmallTilesText = "16 or 32 under variant 3";
DispatchResult launch_small_bf16(const AttnParams& p, int hg, int gather, cudaStream_t stream, bool pdl);
DispatchResult launch_small_f16(const AttnParams& p, int hg, int gather, cudaStream_t stream, bool pdl);
// wide: sparse_combine_kernel<T, true> launched with PDL, else <T, false> (combine_kernel.cuh).
DispatchResult launch_combine_bf16(const AttnParams& p, cudaStream_t stream, bool wide);
DispatchResult launch_combine_f16(const AttnParams& p, cudaStream_t stream, bool wide);

}  // namespace kparity::kernels::sparse
