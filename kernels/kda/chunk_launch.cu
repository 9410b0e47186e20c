// kda/chunk dispatch: the head dim picks the instance file (chunk_k*.cu), the V tile the warp split.
#ifdef KPARITY_CHUNK_KERNEL
#include <cstdint>
#include <mutex>
#include <string>

#include "kda/chunk_plan.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

DispatchResult launch_chunk_k16(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k32(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k64(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k128(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k256(const ChunkParams& p, const Launch& l);

namespace {

DispatchResult launch_chunk_instance(const ChunkParams& p, const Launch& l) {
  switch (p.K) {
    case 16: return launch_chunk_k16(p, l);
    case 32: return launch_chunk_k32(p, l);
    case 64: return launch_chunk_k64(p, l);
    case 128: return launch_chunk_k128(p, l);
    case 256: return launch_chunk_k256(p, l);
    default: return dispatch_miss("K", std::to_string(p.K), std::string(kHeadDimsText));
  }
}

// The workspace between the two kernels comes from a memory pool of kparity's own per device
// (stream-ordered: nothing is synchronised, and a launch inside CUDA-graph capture becomes an
// allocation node). The pool keeps up to kRetainBytes mapped between calls, like a caching
// allocator, so that repeated prefills of a few thousand tokens do not map fresh pages each time;
// the device's default pool and its settings are left alone (the library lives in others' processes).
constexpr std::uint64_t kRetainBytes = 4ull << 30;

cudaError_t chunk_pool(cudaMemPool_t& pool) {
  constexpr int kMaxDevices = 64;
  static std::mutex mu;
  static cudaMemPool_t pools[kMaxDevices] = {};
  int dev = 0;
  if (cudaError_t e = cudaGetDevice(&dev); e != cudaSuccess) return e;
  if (dev < 0 || dev >= kMaxDevices) return cudaErrorInvalidDevice;
  std::lock_guard<std::mutex> lock(mu);
  if (!pools[dev]) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    cudaMemPool_t made = nullptr;
    if (cudaError_t e = cudaMemPoolCreate(&made, &props); e != cudaSuccess) return e;
    std::uint64_t keep = kRetainBytes;
    if (cudaError_t e = cudaMemPoolSetAttribute(made, cudaMemPoolAttrReleaseThreshold, &keep); e != cudaSuccess) {
      cudaMemPoolDestroy(made);
      return e;
    }
    pools[dev] = made;
  }
  pool = pools[dev];
  return cudaSuccess;
}

}  // namespace

static_assert(kMinHeadDim == 16 && kMaxHeadDim == 256, "launch_chunk has a case for each power of two in between");
DispatchResult launch_chunk(const ChunkParams& params, const Launch& l) {
  ChunkParams p = params;
  const std::size_t bytes = static_cast<std::size_t>(p.n_blocks) * static_cast<std::size_t>(p.HV) *
                            static_cast<std::size_t>(p.ws_blk) * sizeof(float);
  cudaMemPool_t pool = nullptr;
  if (cudaError_t e = chunk_pool(pool); e != cudaSuccess) return dispatched(e);
  void* ws = nullptr;
  // KPARITY_CHUNK_PREP=check (chunk_prep_check.cuh): a second workspace for the specialised prep,
  // both zeroed so that the pitch padding no kernel writes compares equal.
  const std::size_t total = p.prep_check ? 2 * bytes : bytes;
  if (total > 0) {
    if (cudaError_t e = cudaMallocFromPoolAsync(&ws, total, pool, l.stream); e != cudaSuccess) {
      cudaGetLastError();  // an allocation failure is returned, not left sticky for the next call
      return dispatched(e);
    }
  }
  p.ws = static_cast<float*>(ws);
  if (p.prep_check && total > 0) {
    p.ws_check = p.ws + bytes / sizeof(float);
    if (cudaError_t e = cudaMemsetAsync(ws, 0, total, l.stream); e != cudaSuccess) {
      cudaFreeAsync(ws, l.stream);
      return dispatched(e);
    }
  }
  DispatchResult r = launch_chunk_instance(p, l);
  // Freed in stream order after both kernels, whatever the launch returned.
  if (ws) {
    const cudaError_t fe = cudaFreeAsync(ws, l.stream);
    if (r.ok() && fe != cudaSuccess) r = dispatched(fe);
  }
  return r;
}

}  // namespace kparity::kernels::kda
#endif
