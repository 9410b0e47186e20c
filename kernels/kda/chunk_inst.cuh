#pragma once
// One head dim's instances of the two chunked kernels (the prep kernel, and the chain kernel once
// per warp split KS = 1, 2, 4 that the head dim allows and per form, ChunkParams::form), launched
// from chunk_launch.cu's switch;
// each chunk_k*.cu compiles one head dim so the instances build in parallel.
#include "kda/chunk_kernel.cuh"
#include "kda/chunk_prep_check.cuh"
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

// The chain kernel of one form (ChunkParams::form): both forms use the same shared memory
// (chunk_smem_bytes; the spread form's producer warp uses none but the mbarriers), the spread form
// one warp more (chunk_chain_threads).
template <int K, int KS, bool SPREAD>
DispatchResult chunk_chain_go(const ChunkParams& p, const Launch& l) {
  auto chain = chunk_kernel<K, KS, SPREAD>;
  static const cudaError_t chain_opt = chunk_opt_in(chain, l.smem_bytes);
  if (chain_opt != cudaSuccess) return dispatched(chain_opt);
  chain<<<l.grid, chunk_chain_threads(SPREAD), l.smem_bytes, l.stream>>>(p);
  return dispatched(cudaSuccess);
}

// The prep kernel of one instance (FAST: the specialised one, chunk_prep_kernel.cuh) writing to ws.
template <int K, bool FAST>
cudaError_t chunk_prep_go(const ChunkParams& p, float* ws, cudaStream_t stream) {
  auto prep = chunk_prep_kernel<K, FAST>;
  static const cudaError_t prep_opt = chunk_opt_in(prep, 4 * chunk_prep_smem_floats(K, kMaxHeadDim));
  if (prep_opt != cudaSuccess) return prep_opt;
  const dim3 grid(static_cast<unsigned>(p.n_windows * (p.has_cu ? 1 : p.B)), static_cast<unsigned>(p.HV));
  if (grid.x == 0) return cudaSuccess;
  ChunkParams q = p;
  q.ws = ws;
  prep<<<grid, kChunkThreads, 4 * chunk_prep_smem_floats(K, p.V), stream>>>(q);
  return cudaGetLastError();
}

// The prep of every form: the generic instance, the specialised one, or in check mode both (the
// specialised one into ws_check) and the word-for-word comparison. The chain reads p.ws.
template <int K>
cudaError_t chunk_prep_all(const ChunkParams& p, cudaStream_t stream) {
  if (!p.prep_fast || p.prep_check)
    if (const cudaError_t e = chunk_prep_go<K, false>(p, p.ws, stream); e != cudaSuccess) return e;
  if (p.prep_fast) {
    if (const cudaError_t e = chunk_prep_go<K, true>(p, p.prep_check ? p.ws_check : p.ws, stream); e != cudaSuccess)
      return e;
  }
  if (p.prep_check) {
    const std::int64_t words = p.n_blocks * p.HV * p.ws_blk;
    if (words > 0) {
      chunk_prep_compare<<<1024, kPrepCheckThreads, 0, stream>>>(reinterpret_cast<const std::uint32_t*>(p.ws),
                                                                   reinterpret_cast<const std::uint32_t*>(p.ws_check), words);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
  }
  return cudaSuccess;
}

template <int K, int KS>
DispatchResult chunk_go(const ChunkParams& p, const Launch& l) {
  if constexpr (K / KS < 8) {
    return dispatch_miss("vtile", std::to_string(p.vtile), "a tile that leaves each warp 8 channels");
  } else {
    // Refused before anything runs (prepare_chunk has already refused any other form). K = 256 with
    // VT = 64 (KS = 1) is never planned (chunk_vtile keeps K = 256 split, and so does the
    // KPARITY_CHUNK_VTILE override): the spread form has no such instance (it spilled 60 bytes).
    constexpr bool has_spread = !(K > 128 && KS == 1);
    if ((p.form != kChunkFormVerified && p.form != kChunkFormSpread) || (p.form == kChunkFormSpread && !has_spread))
      return dispatch_miss("form", std::to_string(p.form), has_spread ? "0 (verified), 1 (spread)" : "0 (verified) at K = 256, VT = 64");
    // The chain reads p.ws: the specialised prep's blocks, or in check mode the generic one's (the
    // specialised one then writes to ws_check and the two are compared).
    if (const cudaError_t e = chunk_prep_all<K>(p, l.stream); e != cudaSuccess) return dispatched(e);
    if constexpr (has_spread)
      if (p.form == kChunkFormSpread) return chunk_chain_go<K, KS, true>(p, l);
    return chunk_chain_go<K, KS, false>(p, l);
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
