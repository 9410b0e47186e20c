#pragma once
// The (dp, ht) switch shared by the per-dtype translation units.
#include "sparse/attn_kernel.cuh"
#include "sparse/wg_addr_kernel.cuh"
#include "sparse/dispatch.hpp"

namespace kparity::kernels::sparse {

template <class T, int DP, int HT>
cudaError_t launch_one(const AttnParams& p, cudaStream_t stream) {
  constexpr std::size_t smem = Geo<DP, HT, sizeof(T)>::smem;
  auto* k = &sparse_attn_kernel<T, DP, HT>;
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      e != cudaSuccess)
    return e;
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  k<<<blocks, kThreads, smem, stream>>>(p);
  return cudaSuccess;
}

template <class T>
cudaError_t launch_wg_addr(const AttnParams& p, cudaStream_t stream) {
  auto* k = &sparse_attn_wg_addr_kernel<T>;
  if (auto e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(kWgAddrSmem));
      e != cudaSuccess)
    return e;
  const auto blocks = static_cast<unsigned>(p.T * p.n_head_tiles * p.splits);
  k<<<blocks, kWgThreads, kWgAddrSmem, stream>>>(p);
  return cudaSuccess;
}

template <class T>
cudaError_t launch_attn_t(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream) {
  if (wg != 0) {
    if (dp != 512 || ht != 64 || !p.vec_q || !p.vec_kv) return cudaErrorInvalidValue;
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
  return cudaErrorInvalidValue;
}

template <class T>
cudaError_t launch_combine_t(const AttnParams& p, cudaStream_t stream) {
  if (p.splits > 128) return cudaErrorInvalidValue;
  sparse_combine_kernel<T><<<static_cast<unsigned>(p.T * p.H), 128, 0, stream>>>(p);
  return cudaSuccess;
}

}  // namespace kparity::kernels::sparse
