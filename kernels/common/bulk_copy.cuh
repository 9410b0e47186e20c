#pragma once
// Bulk (TMA, non-tensor) global -> shared copies completing on an mbarrier (sm_90 PTX): one
// instruction moves a whole contiguous block where cp.async needs a 16-byte request per thread and
// the address arithmetic for each. Users: the small-T sparse decode kernel's row gather
// (sparse/decode_small_kernel.cuh: a selected row, 1 KB at D = 512) and the chunked KDA chain
// (kda/chunk_kernel.cuh: a chunk's operand block, ~28 KB at K = 128, as one copy).
// Protocol per stage: mbarrier initialised with one arrival per issuing thread; each issuing thread
// arrives with the bytes it is about to copy (arrive.expect_tx: the phase cannot complete while
// those bytes are outstanding) and then issues its copy; consumers wait on the phase's parity.
#include <cstdint>

namespace kparity::kernels::dev {

__device__ __forceinline__ void mbar_init(std::uint32_t bar, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}
// Makes the initialised barriers visible to the async proxy (the copy engine) before first use.
__device__ __forceinline__ void mbar_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
// One plain arrival (release: the thread's earlier shared-memory reads are ordered before a waiter's
// later operations): a consumer handing a buffer back to its producer.
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase with parity `parity` has completed (its copies landed and are visible). A
// phase that never completes (a copy that faulted, bytes miscounted) traps after about 2^22 tries
// (seconds; a tile lands in microseconds): a launch error the caller reports, not a hung stream.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t done = 0, tries = 0;
  do {
    if (++tries > (1u << 22)) __trap();
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n"
        "}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// Orders this thread's earlier shared-memory accesses (and, after a barrier, the block's) before
// its later async-proxy operations: a stage the block just read with ldmatrix is refilled by TMA.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// bytes: a multiple of 16; dst and src 16-byte aligned.
__device__ __forceinline__ void bulk_g2s(std::uint32_t dst, std::uint64_t src, std::uint32_t bytes, std::uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}

}  // namespace kparity::kernels::dev
