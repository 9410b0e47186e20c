#pragma once
// Host half of the chunked KDA launcher (kda/chunk): the plan prepare_chunk fills, the shared-memory
// layout the kernel is compiled against, the V-tile choice, and the dispatch entry point.
#include <cstdint>
#include <cstdlib>

#include "common/dispatch_result.hpp"
#include "kda/chunk_params.hpp"
#include "kda/dispatch.hpp"
#include "kparity/kernels/kda.hpp"

namespace kparity::kernels::kda {

struct ChunkPlan {
  ChunkParams params;
  Launch launch;
};

// Row pitch (floats) of the [16][K] and [16][VT] shared tables: +4 keeps rows 16-byte aligned and
// spreads a fragment's eight rows over different banks.
constexpr std::int64_t chunk_pitch(std::int64_t n) { return n + 4; }
// Shared floats, in the order chunk_kernel.cuh carves them: eight [16][K] tables (q_s, k_hat, g, Gc,
// Rs, -w, Qg, Kd), three [16][VT] (v, u, o), A_kk and A_qk [16][16], beta [16], decay and ref [K], the
// split-K partials [2][4 warps][16][16]. K = 128, VT = 64: 92 KiB, two CTAs per SM.
constexpr std::int64_t chunk_smem_floats(std::int64_t K, std::int64_t VT) {
  return 8 * kChunkTokens * chunk_pitch(K) + 3 * kChunkTokens * chunk_pitch(VT) +
         2 * kChunkTokens * chunk_pitch(kChunkTokens) + kChunkTokens + 2 * K + 2 * kChunkWarps * 256;
}
constexpr std::int64_t chunk_smem_bytes(std::int64_t K, std::int64_t VT) { return 4 * chunk_smem_floats(K, VT); }

// V columns per CTA (64, 32 or 16: 16 per warp group, the warps splitting K 1, 2 or 4 ways).
std::int64_t chunk_vtile(std::int64_t seqs_x_heads, std::int64_t K, std::int64_t V, int sms);

// KPARITY_CHUNK_SIMT=1 in the environment (read once): the kernel's three state products by plain
// fp32 FMAs in the tensor-core fragment layout, a debug aid that tells a fragment-layout mistake
// from an algorithm mistake on the device.
inline int chunk_simt_requested() {
  static const int v = [] {
    const char* e = std::getenv("KPARITY_CHUNK_SIMT");
    return e && e[0] == '1' ? 1 : 0;
  }();
  return v;
}

Status prepare_chunk(const ChunkArgs& a, cudaStream_t stream, const LaunchOptions& o, ChunkPlan& plan);
// Defined in chunk_launch.cu when the kernel is built (KPARITY_CHUNK_KERNEL), else in chunk.cpp.
DispatchResult launch_chunk(const ChunkParams& p, const Launch& l);

}  // namespace kparity::kernels::kda
