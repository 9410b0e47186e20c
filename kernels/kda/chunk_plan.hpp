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

// Shared floats of chunk_prep_kernel: five [16][K] tables (q_s, k_hat, g then exp(Gc - ref),
// exp(ref - Gc), x), v then u [16][V], A_kk and A_qk [16][16], beta [16], dt_bias [K] (the cumulative
// gates live in registers). K = V = 128: 51 KiB, four CTAs to an SM.
constexpr std::int64_t chunk_prep_smem_floats(std::int64_t K, std::int64_t V) {
  return 5 * kChunkTokens * chunk_pitch(K) + kChunkTokens * chunk_pitch(V) + 2 * kChunkTokens * chunk_pitch(kChunkTokens) +
         kChunkTokens + K;
}

// chunk_kernel's tables, in the order a chunk's operand block holds them. Pitches chosen for the
// fragment loads (a float2 of -w or Qg at rows g, columns 2t: pitch = 8 mod 32; Kd read down two
// rows 2t, 2t+1 at column g: pitch = 4 mod 32; A_qk as -w; u at rows 2t, 2t+1, column g: 4 mod 32).
constexpr std::int64_t chunk_pw(std::int64_t K) { return K + 8; }
constexpr std::int64_t chunk_pd(std::int64_t K) { return K + 4; }
constexpr std::int64_t chunk_pa() { return kChunkTokens + 8; }
constexpr std::int64_t chunk_pu(std::int64_t VT) { return VT + 4; }

// A chunk's operand block in the workspace (docs/kda_chunk_kernel.md section 2), laid out exactly as
// chunk_kernel's shared buffer so that one bulk copy moves it: the part every V tile reads, -w
// [16][PW], Qg [16][PW], Kd [16][PD], A_qk [16][PA] (tf32-rounded), decay [K] (fp32) ...
struct ChunkBlock {
  std::int64_t oW, oQ, oD, oA, oDec, shared;  // offsets (floats) and the shared part's size
  std::int64_t u;                             // one V tile's u, [16][PU] fp32, after the shared part
};
constexpr ChunkBlock chunk_block(std::int64_t K, std::int64_t VT) {
  const std::int64_t C = kChunkTokens, oW = 0, oQ = oW + C * chunk_pw(K), oD = oQ + C * chunk_pw(K),
                     oA = oD + C * chunk_pd(K), oDec = oA + C * chunk_pa();
  return {oW, oQ, oD, oA, oDec, oDec + K, C * chunk_pu(VT)};
}
// ... then every V tile's u in tile order: the whole block, per (chunk, value head), in floats. Every
// part is a multiple of 4 floats (K, V multiples of 16), so each starts 16-byte aligned.
constexpr std::int64_t chunk_blk_floats(std::int64_t K, std::int64_t VT, std::int64_t n_vtiles) {
  return chunk_block(K, VT).shared + n_vtiles * chunk_block(K, VT).u;
}
// A chain buffer: the shared part and the CTA's own tile of u.
constexpr std::int64_t chunk_buf_floats(std::int64_t K, std::int64_t VT) {
  return chunk_block(K, VT).shared + chunk_block(K, VT).u;
}
// Chain buffers: the copies of the next kChunkBuffers - 1 chunks are in flight while one is used.
inline constexpr int kChunkBuffers = 3;

// The block of a sequence's first chunk; its chunks are consecutive blocks. Without cu_seqlens batch
// row b's chunks start at b * n_windows. With it, sequence n (tokens bos ..) starts at bos / 16 + n:
// sequence n's last block, bos / 16 + n + ceil(len / 16) - 1, is below sequence n + 1's first,
// (bos + len) / 16 + n + 1, because ceil(len / 16) <= len / 16 + 1 and floor sums are superadditive;
// so n_windows + N blocks cover every sequence.
__host__ __device__ constexpr std::int64_t chunk_first_block(bool has_cu, std::int64_t n, std::int64_t bos,
                                                             std::int64_t n_windows) {
  return has_cu ? bos / kChunkTokens + n : n * n_windows;
}

// kChunkBuffers buffers, the warps' output staging [4][16][17], the split-K
// partials [2][4][16][16] and one mbarrier per buffer. K = 128, VT = 64: 105 KiB.
constexpr std::int64_t chunk_out_pitch() { return 17; }
constexpr std::int64_t chunk_smem_floats(std::int64_t K, std::int64_t VT) {
  return kChunkBuffers * chunk_buf_floats(K, VT) + kChunkWarps * kChunkTokens * chunk_out_pitch() +
         2 * kChunkWarps * 256 + 2 * kChunkBuffers + 2;  // + mbarriers (8 bytes each, 8-byte aligned)
}
constexpr std::int64_t chunk_smem_bytes(std::int64_t K, std::int64_t VT) { return 4 * chunk_smem_floats(K, VT); }
// The spread chain's minimum CTAs an SM (its __launch_bounds__; chunk_kernel.cuh): as many as its
// shared memory allows on sm_90 (228 KiB an SM, 1 KiB reserved a CTA; K = 128: 2, K = 64: 3,
// K = 256: 1), at most 4. ptxas then keeps the registers within what lets that many 5-warp CTAs share
// an SM (K = 128: 168, K = 64: 128, K <= 32: 96). Left to its default for 160 threads it capped
// K = 128, KS = 2 at 96 registers and spilled; the shared-memory count itself at K = 16 and 32 (5-6
// CTAs) leaves 64-72 registers and spills too.
constexpr int chunk_chain_min_ctas(std::int64_t K, std::int64_t VT) {
  const std::int64_t by_smem = (228 * 1024) / (chunk_smem_bytes(K, VT) + 1024);
  return static_cast<int>(by_smem < 4 ? by_smem : 4);
}

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

// The call the specialised prep instance is compiled for (chunk_prep_kernel.cuh): bf16 q, k and v,
// fp32 g, every row of the four 16-byte vectorisable (ChunkParams::vec), V == K. kda_prefill_bench's
// calls and fla's (bench/peers/fla_prefill_shapes.py: bf16 activations, fp32 log-decay) are such.
inline bool chunk_prep_fast_fits(const ChunkParams& p) {
  constexpr int all = kVecQ | kVecK | kVecG | kVecV;
  return p.q_dt == kBF16 && p.k_dt == kBF16 && p.v_dt == kBF16 && p.g_dt == kF32 && (p.vec & all) == all &&
         p.V == p.K;
}

Status prepare_chunk(const ChunkArgs& a, cudaStream_t stream, const LaunchOptions& o, ChunkPlan& plan);
// Defined in chunk_launch.cu when the kernel is built (KPARITY_CHUNK_KERNEL), else in chunk.cpp.
DispatchResult launch_chunk(const ChunkParams& p, const Launch& l);

}  // namespace kparity::kernels::kda
