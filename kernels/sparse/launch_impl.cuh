#pragma once
// The (dp, ht) switch shared by the per-dtype translation units; a value without an instance comes
// back as a DispatchResult naming it.
#include <string>

#include "common/pdl.cuh"
#include "sparse/attn_kernel.cuh"
#include "sparse/combine_kernel.cuh"
#include "sparse/dispatch.hpp"
#include "sparse/launch_smem.cuh"
#include "sparse/wg_addr_kernel.cuh"

namespace kparity::kernels::sparse {

template <class T, int DP, int HT>
DispatchResult launch_one(const AttnParams& p, cudaStream_t stream, bool pdl) {
  static_assert(supported_tile(DP, HT), "an instance supported_tile() does not list");
  return launch_tiled(&sparse_attn_kernel<T, DP, HT>, Geo<DP, HT, sizeof(T)>::smem, kThreads, p, stream, pdl);
}

template <class T>
DispatchResult launch_wg_addr(const AttnParams& p, cudaStream_t stream, bool pdl) {
  return launch_tiled(&sparse_attn_wg_addr_kernel<T>, kWgAddrSmem, kWgThreads, p, stream, pdl);
}

template <class T>
DispatchResult launch_attn_t(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream, bool pdl) {
  if (wg != 0) {
    if (dp != kWgD || ht != kWgHeads || !p.vec_q || !p.vec_kv)
      return dispatch_miss("variant",
                           "2 (head_tile " + std::to_string(ht) + ", D padded to " + std::to_string(dp) + ")",
                           "2 only with D in (256, 512], head_tile 64 and 16-byte q and KV rows");
    return launch_wg_addr<T>(p, stream, pdl);
  }
  if (ht == 64) {
    switch (dp) {
      case 64: return launch_one<T, 64, 64>(p, stream, pdl);
      case 128: return launch_one<T, 128, 64>(p, stream, pdl);
      case 256: return launch_one<T, 256, 64>(p, stream, pdl);
      case 512: return launch_one<T, 512, 64>(p, stream, pdl);
      default: break;
    }
  } else if (ht == 16) {
    switch (dp) {
      case 128: return launch_one<T, 128, 16>(p, stream, pdl);
      case 256: return launch_one<T, 256, 16>(p, stream, pdl);
      case 512: return launch_one<T, 512, 16>(p, stream, pdl);
      default: break;
    }
  }
  return dispatch_miss("head_tile", std::to_string(ht) + " (D padded to " + std::to_string(dp) + ")",
                       std::string(kTilesText));
}

template <class T>
DispatchResult launch_combine_t(const AttnParams& p, cudaStream_t stream, bool wide) {
  if (p.splits > kMaxSplits)
    return dispatch_miss("kv_splits", std::to_string(p.splits), "at most " + std::to_string(kMaxSplits));
  const auto blocks = static_cast<unsigned>(p.T * p.H);
  // The wide kernel comes with the small-batch paths, so it is also the one launched with PDL.
  if (wide) return dispatched(launch_kernel(&sparse_combine_kernel<T, true>, blocks, kCombineThreads, 0, stream, true, p));
  return dispatched(launch_kernel(&sparse_combine_kernel<T, false>, blocks, kCombineThreads, 0, stream, false, p));
}

}  // namespace kparity::kernels::sparse
