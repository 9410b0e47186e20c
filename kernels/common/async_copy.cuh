#pragma once
// cp.async (sm_80+ PTX, run on sm_90a): 16-byte global -> shared copies that hold no register, so a
// whole tile or ring is one memory round trip. Both kernel families stage through these.
#include <cstdint>

namespace kparity::kernels::dev {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Always 16 bytes (the KDA ring rows: every chunk copied is inside the ring).
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
// src_bytes 0 writes zeros without reading (masked rows, the D tail of the sparse tiles).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_u32(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
// The same with both addresses already integers (a shared-window offset and a global byte address),
// for issue loops that compute them without pointer arithmetic.
__device__ __forceinline__ void cp_async16_at(std::uint32_t dst, std::uint64_t src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes) : "memory");
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

}  // namespace kparity::kernels::dev
