#pragma once
// One head dim's instances of the two chunked kernels (the prep kernel, and the chain kernel once
// per warp split KS = 1, 2, 4 that the head dim allows), launched from chunk_launch.cu's switch;
// each chunk_k*.cu compiles one head dim so the instances build in parallel.
#include "kda/chunk_kernel.cuh"
#include "kda/chunk_prep_kernel.cuh"
#include "common/limits.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

// An instance's shared-memory opt-in, set once per process at its largest size, so that a launch
// inside CUDA-graph capture makes no attribute call.
template <class Kernel>
cudaError_t chunk_opt_in(Kernel kernel, std::size_t bytes) {
  return bytes > kSmemDefaultPerBlock
             ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes))
             : cudaSuccess;
}

template <int K, int KS>
DispatchResult chunk_go(const ChunkParams& p, const Launch& l) {
  if constexpr (K / KS < 8) {
    return dispatch_miss("vtile", std::to_string(p.vtile), "a tile that leaves each warp 8 channels");
  } else {
    auto prep = chunk_prep_kernel<K>;
    static const cudaError_t prep_opt = chunk_opt_in(prep, 4 * chunk_prep_smem_floats(K, kMaxHeadDim));
    if (prep_opt != cudaSuccess) return dispatched(prep_opt);
    auto chain = chunk_kernel<K, KS>;
    static const cudaError_t chain_opt = chunk_opt_in(chain, l.smem_bytes);
    if (chain_opt != cudaSuccess) return dispatched(chain_opt);
    const dim3 prep_grid(static_cast<unsigned>(p.n_windows * (p.has_cu ? 1 : p.B)), static_cast<unsigned>(p.HV));
    if (prep_grid.x > 0) {
      prep<<<prep_grid, kChunkThreads, 4 * chunk_prep_smem_floats(K, p.V), l.stream>>>(p);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return dispatched(e);
    }
    chain<<<l.grid, kChunkThreads, l.smem_bytes, l.stream>>>(p);
    return dispatched(cudaSuccess);
  }
}

template <int K>
DispatchResult launch_chunk_k(const ChunkParams& p, const Launch& l) {
  switch (p.vtile) {
    case 64: return chunk_go<K, 1>(p, l);
    case 32: return chunk_go<K, 2>(p, l);
    case 16: return chunk_go<K, 4>(p, l);
    default: return dispatch_miss("vtile", std::to_string(p.vtile), "16, 32, 64");
  }
}

}  // namespace kparity::kernels::kda
