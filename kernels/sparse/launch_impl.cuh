#pragma once
// The (dp, ht) switch shared by the per-dtype translation units; a value without an instance comes
// back as a DispatchResult naming it.
#include <string>

#include "sparse/attn_kernel.cuh"
#include "sparse/dispatch.hpp"
#include "sparse/wg_addr_kernel.cuh"

namespace kparity::kernels::sparse {

template <class T, int DP, int HT>
DispatchResult launch_one(const AttnParams& p, cudaStream_t stream) {
  static_assert(supported_tile(DP, HT), "an instance supported_tile() does not list");
  constexpr std::size_t smem = Geo<DP, HT, sizeof(T)>::smem;
  auto* k = &sparse_attn_kernel<T, DP, HT>;
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      e != cudaSuccess)
    return dispatched(e);
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  k<<<blocks, kThreads, smem, stream>>>(p);
  return dispatched(cudaSuccess);
}

template <class T>
DispatchResult launch_wg_addr(const AttnParams& p, cudaStream_t stream) {
  auto* k = &sparse_attn_wg_addr_kernel<T>;
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWgAddrSmem));
      e != cudaSuccess)
    return dispatched(e);
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  k<<<blocks, kWgThreads, kWgAddrSmem, stream>>>(p);
  return dispatched(cudaSuccess);
}

template <class T>
DispatchResult launch_attn_t(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream) {
  if (wg != 0) {
    if (dp != kWgD || ht != kWgHeads || !p.vec_q || !p.vec_kv)
      return dispatch_miss("variant",
                           "2 (head_tile " + std::to_string(ht) + ", D padded to " + std::to_string(dp) + ")",
                           "2 only with D in (256, 512], head_tile 64 and 16-byte q and KV rows");
    return launch_wg_addr<T>(p, stream);
  }
  if (ht == 64) {
    switch (dp) {
      case 64: return launch_one<T, 64, 64>(p, stream);
      case 128: return launch_one<T, 128, 64>(p, stream);
      case 256: return launch_one<T, 256, 64>(p, stream);
      case 512: return launch_one<T, 512, 64>(p, stream);
      default: break;
    }
  } else if (ht == 16) {
    switch (dp) {
      case 128: return launch_one<T, 128, 16>(p, stream);
      case 256: return launch_one<T, 256, 16>(p, stream);
      case 512: return launch_one<T, 512, 16>(p, stream);
      default: break;
    }
  }
  return dispatch_miss("head_tile", std::to_string(ht) + " (D padded to " + std::to_string(dp) + ")",
                       std::string(kTilesText));
}

template <class T>
DispatchResult launch_combine_t(const AttnParams& p, cudaStream_t stream) {
  if (p.splits > kMaxSplits)
    return dispatch_miss("kv_splits", std::to_string(p.splits), "at most " + std::to_string(kMaxSplits));
  sparse_combine_kernel<T><<<static_cast<unsigned>(p.T * p.H), kCombineThreads, 0, stream>>>(p);
  return dispatched(cudaSuccess);
}

}  // namespace kparity::kernels::sparse
