#pragma once
// The tensor-core step both chunked-KDA kernels use (chunk_prep_kernel.cuh: A_kk and A_qk;
// chunk_kernel.cuh: the three products with the state): m16n8k8 TF32 mma.sync with fp32 accumulators,
// its fragment layout, and a shuffle emulation of it in the same layout (KPARITY_CHUNK_SIMT).
#include <cstdint>

#include "kda/device.cuh"

namespace kparity::kernels::kda::chunk_dev {

using namespace kparity::kernels::kda::dev;

__device__ __forceinline__ std::uint32_t tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// d += a b, m16n8k8, tf32 operands, fp32 accumulators. Fragments (g = lane / 4, t = lane % 4):
// a = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; b = B[t][g], B[t+4][g];
// d = D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1].
__device__ __forceinline__ void mma_hw(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// The same product from the fragment layout written above, by shuffles and fmaf in k order
// (KPARITY_CHUNK_SIMT): if the layout above were wrong, this would still be right and mma_hw not.
__device__ __forceinline__ void mma_emul(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    const int src = g * 4 + (kk & 3);
    const float alo = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? a[0] : a[2], src));
    const float ahi = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? a[1] : a[3], src));
    const float b0 = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? b[0] : b[1], (2 * t) * 4 + (kk & 3)));
    const float b1 = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? b[0] : b[1], (2 * t + 1) * 4 + (kk & 3)));
    d[0] = fmaf(alo, b0, d[0]);
    d[1] = fmaf(alo, b1, d[1]);
    d[2] = fmaf(ahi, b0, d[2]);
    d[3] = fmaf(ahi, b1, d[3]);
  }
}
template <bool SIMT>
__device__ __forceinline__ void mma_t(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  if constexpr (SIMT) mma_emul(d, a, b);
  else mma_hw(d, a, b);
}
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                                    int simt) {
  if (simt) mma_emul(d, a, b);
  else mma_hw(d, a, b);
}

// An accumulator fragment used as the A operand of a product over its columns (permuted order, see
// chunk_kernel.cuh's file comment): A[g][t] = D[g][2t], A[g+8][t] = D[g+8][2t], A[g][t+4] = D[g][2t+1], ...
__device__ __forceinline__ void acc_as_a(const float (&d)[4], std::uint32_t (&a)[4]) {
  a[0] = tf32(d[0]);
  a[1] = tf32(d[2]);
  a[2] = tf32(d[1]);
  a[3] = tf32(d[3]);
}

}  // namespace kparity::kernels::kda::chunk_dev
