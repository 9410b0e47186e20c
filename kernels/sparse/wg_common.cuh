#pragma once
// Shared pieces of the wgmma sparse attention kernel (wg_addr_kernel.cuh; sm_90a): D padded to 512,
// 64 heads per CTA, q and the KV sources 16-byte loadable. Same function as sparse_attn_kernel (spec
// sparse_attention.md C.1-C.4), same rounding points, another accumulation order.
//
// One CTA = one token x 64 heads (x one key range under split-K), 256 threads = 2 warpgroups.
// Q (64 x 512) sits in shared memory for the whole CTA; KV rows are gathered 64 at a time with
// 16-byte cp.async into a 128-byte-swizzled tile, two stages (64 KB each; 3 x 64 KB + codes, + 32 KB
// of S partials for kSplitS, fit the 227 KB limit). Per tile the warpgroups compute S = Q.K^T
// (64 x 64, wgmma m64n64k16, A and B from shared memory), each the partial over its D half (16
// k-steps), summed through shared memory (own + other: IEEE addition commutes, so both warpgroups
// hold bitwise-identical S and softmax statistics; half the QK work of computing S redundantly). Then warpgroup w adds P.V for its half of D (m64n256k16, P from registers,
// V = the same tile read N-major). O is 64 x 256 fp32 per warpgroup = 128 registers per thread.
//
// Shared layout of a 64-row x 512-column tile: 8 blocks of 64 columns (8 KB each); in a block, row r
// is 128 bytes at r * 128 and its 16-byte chunk c sits at chunk position c ^ (r % 8) (Swizzle<3,4,3>,
// tiles 1024-byte aligned). K-major operand descriptors (Q, K): SBO = 1024 (8-row groups), a k-step
// of 16 columns advances the start by 32 bytes inside the swizzled row. N-major descriptor (V):
// LBO = 8192 (next 64 columns), SBO = 1024 (next 8 keys).
#include <cfloat>
#include <cstdint>

#include "sparse/mma.cuh"
#include "sparse/softmax.cuh"
#include "sparse/token_rows.cuh"
#include "sparse/wgmma_ops.cuh"

namespace kparity::kernels::sparse {

inline constexpr int kWgThreads = 256, kWgBK = 64, kWgSlots = 4;
inline constexpr int kWgHeads = 64;                    // heads per CTA (the wgmma M)
inline constexpr int kWgD = 512;                       // D padded to this
inline constexpr int kWgChunks = kWgD / 8, kWgChunksLog2 = 6;  // 16-byte chunks of a row
inline constexpr int kWgRowBytes = 128;                // a row of one 64-column block (bf16/f16)
inline constexpr int kWgBlockBytes = 64 * kWgRowBytes;  // one 64-column block of a 64-row tile
inline constexpr std::uint32_t kWgTile = (kWgD / 64) * kWgBlockBytes;  // 64 rows x 512 columns x 2 bytes
inline constexpr std::uint32_t kWgAlign = 1024;        // a swizzle atom (8 rows x 128 bytes): tiles start on it
inline constexpr int kWgOutLd = kWgD + 8;               // output staging row (elements), conflict-free
static_assert(kWgBK == kKeysPerTileWg, "the decode launcher sizes splits in these tiles (params.hpp)");
static_assert(kWgChunks == 1 << kWgChunksLog2, "thread -> chunk maps shift by kWgChunksLog2");
static_assert(kWgHeads == kWgBK && kWgBlockBytes == 8192 && kWgTile == 64u * 1024u,
              "the descriptors (LBO/SBO) and the swizzle below assume 64 x 64 blocks of 128-byte rows");

namespace dev {

__device__ __forceinline__ std::uint32_t sw_off(int r, int c) {
  return static_cast<std::uint32_t>((c >> 3) * kWgBlockBytes + r * kWgRowBytes + (((c & 7) ^ (r & 7)) << 4));
}
__device__ __forceinline__ std::uint64_t desc_sw128(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>(lbo >> 4) << 16) |
         (static_cast<std::uint64_t>(sbo >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Pins accumulator registers at this point: reads after a wgmma wait stay after it.
template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

}  // namespace dev

}  // namespace kparity::kernels::sparse
