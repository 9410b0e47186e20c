#pragma once
// Launch of the small-T decode kernel (decode_small_kernel.cuh), shared by its per-dtype
// translation units: (head group, gather) -> instance (launch_smem.cuh launches it; the kernel calls
// pdl_entry first, so PDL is allowed).
#include <string>

#include "sparse/decode_small_kernel.cuh"
#include "sparse/dispatch.hpp"
#include "sparse/launch_smem.cuh"

namespace kparity::kernels::sparse {

template <class T, int RB, bool kBulk>
DispatchResult launch_small_one(const AttnParams& p, cudaStream_t stream, bool pdl) {
  static_assert(DsGeo<RB>::smem <= kSmemOptinPerBlock, "the small decode kernel's tiles exceed an SM's shared memory");
  return launch_tiled(&sparse_decode_small_kernel<T, RB, kBulk>, DsGeo<RB>::smem, kDsThreads, p, stream, pdl);
}

template <class T>
DispatchResult launch_small_t(const AttnParams& p, int hg, int gather, cudaStream_t stream, bool pdl) {
  if (gather != kGatherCpAsync && gather != kGatherBulk)
    return dispatch_miss("decode_gather", std::to_string(gather), "1 (cp.async), 2 (bulk row copies)");
  const bool bulk = gather == kGatherBulk;
  if (hg == 16) return bulk ? launch_small_one<T, 1, true>(p, stream, pdl) : launch_small_one<T, 1, false>(p, stream, pdl);
  if (hg == 32) return bulk ? launch_small_one<T, 2, true>(p, stream, pdl) : launch_small_one<T, 2, false>(p, stream, pdl);
  return dispatch_miss("head_tile", std::to_string(hg) + " (variant 3)", std::string(kSmallTilesText));
}

}  // namespace kparity::kernels::sparse
