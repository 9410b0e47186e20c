#pragma once
// Launch of the small-T decode kernel (decode_small_kernel.cuh), shared by its per-dtype
// translation units: (head group, gather) -> instance (launch_smem.cuh launches it; the kernel calls
// pdl_entry first, so PDL is allowed).
#include <string>

#include "sparse/decode_small_kernel.cuh"
#include "sparse/dispatch.hpp"
#include "sparse/launch_smem.cuh"

namespace kparity::kernels::sparse {

// The in-cluster merge's launch: clusters of p.splits CTAs along x (the splits of one token and
// head group), with PDL when asked. Above 8 a cluster size is non-portable: the kernel opts in, and
// a device that cannot co-schedule such a cluster fails the launch (the launcher returns that error).
template <class T, int RB, bool kBulk>
DispatchResult launch_small_cluster(const AttnParams& p, cudaStream_t stream, bool pdl) {
  auto* k = &sparse_decode_small_kernel<T, RB, kBulk, true>;
  if (p.splits < 1 || p.splits > kMaxClusterSplits || p.cluster != p.splits)
    return dispatch_miss("kv_splits", std::to_string(p.splits) + " (in-cluster merge)",
                         "1 to " + std::to_string(kMaxClusterSplits));
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(DsGeo<RB>::smem));
      e != cudaSuccess)
    return dispatched(e);
  if (p.splits > 8)
    if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1); e != cudaSuccess)
      return dispatched(e);
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(p.T * p.n_head_tiles * p.splits));
  cfg.blockDim = dim3(kDsThreads);
  cfg.dynamicSmemBytes = DsGeo<RB>::smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(p.splits);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 2 : 1;
  return dispatched(cudaLaunchKernelEx(&cfg, k, p));
}

template <class T, int RB, bool kBulk>
DispatchResult launch_small_one(const AttnParams& p, cudaStream_t stream, bool pdl) {
  static_assert(DsGeo<RB>::smem <= kSmemOptinPerBlock, "the small decode kernel's tiles exceed an SM's shared memory");
  if (p.cluster) return launch_small_cluster<T, RB, kBulk>(p, stream, pdl);
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
