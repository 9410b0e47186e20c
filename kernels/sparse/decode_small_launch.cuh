#pragma once
// Launch of the small-T decode kernel (decode_small_kernel.cuh), shared by its per-dtype
// translation units: (head group, gather) -> instance, dynamic shared memory raised, launched with
// PDL when asked (the kernel calls pdl_entry first).
#include <string>

#include "common/pdl.cuh"
#include "sparse/decode_small_kernel.cuh"
#include "sparse/dispatch.hpp"

namespace kparity::kernels::sparse {

template <class T, int RB, bool kBulk>
DispatchResult launch_small_one(const AttnParams& p, cudaStream_t stream, bool pdl) {
  constexpr std::size_t smem = DsGeo<RB>::smem;
  static_assert(smem <= kSmemOptinPerBlock, "the small decode kernel's tiles exceed the shared memory of an SM");
  auto* k = &sparse_decode_small_kernel<T, RB, kBulk>;
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      e != cudaSuccess)
    return dispatched(e);
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  return dispatched(launch_kernel(k, blocks, kDsThreads, smem, stream, pdl, p));
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
