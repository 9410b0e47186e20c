#pragma once
// One head dim's instances of the chunked kernel (one per warp split KS = 1, 2, 4 that the head dim
// allows), launched from chunk_launch.cu's switch; each chunk_k*.cu compiles one head dim so the
// instances build in parallel.
#include "kda/chunk_kernel.cuh"
#include "common/limits.hpp"

namespace kparity::kernels::kda {

template <int K, int KS>
DispatchResult chunk_go(const ChunkParams& p, const Launch& l) {
  if constexpr (K / KS < 8) {
    return dispatch_miss("vtile", std::to_string(p.vtile), "a tile that leaves each warp 8 channels");
  } else {
    auto kernel = chunk_kernel<K, KS>;
    // An instance's shared memory is fixed by (K, KS): the opt-in is set once per process, so a
    // launch inside CUDA-graph capture makes no attribute call.
    static const cudaError_t opt_in =
        l.smem_bytes > kSmemDefaultPerBlock
            ? cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(l.smem_bytes))
            : cudaSuccess;
    if (opt_in != cudaSuccess) return dispatched(opt_in);
    kernel<<<l.grid, kChunkThreads, l.smem_bytes, l.stream>>>(p);
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
