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

// Row pitch (floats) of the prep kernel's [16][K] and [16][V] shared tables: +4 keeps rows 16-byte
// aligned and spreads a fragment's eight rows over different banks.
constexpr std::int64_t chunk_pitch(std::int64_t n) { return n + 4; }

// The workspace row of one (token, value head), in floats: -w (tf32), Qg (tf32), Kd (tf32), decay
// (fp32, written in the row of a chunk's first token only), the token's row of A_qk (16, tf32), u
// (V, fp32). Offsets in that order; every part starts 16-byte aligned (K, V multiples of 16).
constexpr std::int64_t chunk_ws_row(std::int64_t K, std::int64_t V) { return 4 * K + kChunkTokens + V; }

// Shared floats of chunk_prep_kernel: six [16][K] tables (q_s, k_hat, g, Gc then exp(Gc - ref),
// Rs then exp(ref - Gc), x then w), v then u [16][V], A_kk and A_qk [16][16], beta [16].
// K = V = 128: 57 KiB.
constexpr std::int64_t chunk_prep_smem_floats(std::int64_t K, std::int64_t V) {
  return 6 * kChunkTokens * chunk_pitch(K) + kChunkTokens * chunk_pitch(V) + 2 * kChunkTokens * chunk_pitch(kChunkTokens) +
         kChunkTokens;
}

// chunk_kernel's tables per chunk buffer (two buffers: the next chunk's rows arrive by cp.async while
// this chunk's products run). Pitches chosen for the fragment loads (a float2 of -w or Qg at rows
// g, columns 2t: pitch = 8 mod 32; Kd read down two rows 2t, 2t+1 at column g: pitch = 4 mod 32;
// A_qk as -w; u at rows 2t, 2t+1, column g: 4 mod 32).
constexpr std::int64_t chunk_pw(std::int64_t K) { return K + 8; }
constexpr std::int64_t chunk_pd(std::int64_t K) { return K + 4; }
constexpr std::int64_t chunk_pa() { return kChunkTokens + 8; }
constexpr std::int64_t chunk_pu(std::int64_t VT) { return VT + 4; }
constexpr std::int64_t chunk_buf_floats(std::int64_t K, std::int64_t VT) {
  return kChunkTokens * (2 * chunk_pw(K) + chunk_pd(K) + chunk_pa() + chunk_pu(VT)) + K;
}
// Two buffers, the warps' output staging [4][16][17] and the split-K partials [2][4][16][16].
// K = 128, VT = 64: 53 KiB.
constexpr std::int64_t chunk_out_pitch() { return 17; }
constexpr std::int64_t chunk_smem_floats(std::int64_t K, std::int64_t VT) {
  return 2 * chunk_buf_floats(K, VT) + kChunkWarps * kChunkTokens * chunk_out_pitch() + 2 * kChunkWarps * 256;
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

// KPARITY_CHUNK_VTILE=16|32|64 in the environment (read once): the V tile the launcher would choose
// replaced by this one where the head dim allows it (a tuning aid: the device runs sweep it to set
// chunk_vtile's rule by measurement); 0 when unset or not one of the three.
inline int chunk_vtile_requested() {
  static const int v = [] {
    const char* e = std::getenv("KPARITY_CHUNK_VTILE");
    const int t = e ? std::atoi(e) : 0;
    return (t == 16 || t == 32 || t == 64) ? t : 0;
  }();
  return v;
}

Status prepare_chunk(const ChunkArgs& a, cudaStream_t stream, const LaunchOptions& o, ChunkPlan& plan);
// Defined in chunk_launch.cu when the kernel is built (KPARITY_CHUNK_KERNEL), else in chunk.cpp.
DispatchResult launch_chunk(const ChunkParams& p, const Launch& l);

}  // namespace kparity::kernels::kda
