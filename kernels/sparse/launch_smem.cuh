#pragma once
// One attention-kernel launch with a large dynamic shared-memory tile: the per-block limit raised to
// the tile (cudaFuncSetAttribute: above 48 KB a kernel must opt in), then T * head tiles * splits CTAs
// (token_rows.cuh cta_coords), with PDL when asked. Shared by the 64-head kernels' switch
// (launch_impl.cuh) and the small-T decode kernel's (decode_small_launch.cuh).
#include "common/dispatch_result.hpp"
#include "common/pdl.cuh"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse {

inline DispatchResult launch_tiled(void (*k)(AttnParams), std::size_t smem, int threads, const AttnParams& p,
                                   cudaStream_t stream, bool pdl) {
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      e != cudaSuccess)
    return dispatched(e);
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  return dispatched(launch_kernel(k, blocks, threads, smem, stream, pdl, p));
}

}  // namespace kparity::kernels::sparse
