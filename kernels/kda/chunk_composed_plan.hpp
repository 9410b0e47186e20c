#pragma once
// Layout of the composed chain form of kda/chunk (KPARITY_CHUNK_FORM=composed, built with
// KPARITY_CHUNK_COMPOSED; docs/kda_chunk_composed.md section 5): the workspace block's extra tables
// and the shared memory of the compose kernel (chunk_compose_kernel.cuh) and of the composed chain
// (chunk_composed_kernel.cuh). Host and device both use it (prepare_chunk sizes the launch from it).
#include <cstdint>

#include "kda/chunk_plan.hpp"

namespace kparity::kernels::kda {

// Chunks a composed chain step walks (m of docs/kda_chunk_composed.md). A sequence's groups start at
// its chunks 0, 4, 8, ...; its last group may hold fewer (m_eff = 1 .. 4).
inline constexpr int kComposeChunks = 4;

// One 16 x 16 mixing table (M_ba or N_ba), rows 16 floats apart as A_qk ([16][PA]: the chain loads
// it with A_qk's fragment pattern).
constexpr std::int64_t chunk_mn_table() { return kChunkTokens * chunk_pa(); }
// A chunk at position b of its group owns 2b tables: -M_b0 .. -M_b,b-1, then N_b0 .. N_b,b-1. Every
// block reserves the most (position m - 1) after its u tiles, so the prep kernel's offsets stay those
// of chunk_block and the blocks stay uniform.
constexpr std::int64_t chunk_mn_reserve() { return 2 * (kComposeChunks - 1) * chunk_mn_table(); }
constexpr std::int64_t chunk_composed_blk_floats(std::int64_t K, std::int64_t VT, std::int64_t n_vtiles) {
  return chunk_blk_floats(K, VT, n_vtiles) + chunk_mn_reserve();
}
// The first table of position b in a group's table area (sum of 2b' over b' < b).
constexpr int chunk_mn_first(int b) { return b * (b - 1); }

// The compose kernel stages each chunk's -w, Qg, Kd (the block's first chunk_block(K).oA floats, with
// their pitches) and its decay: K = 128, 103 KiB.
constexpr std::int64_t chunk_compose_smem_floats(std::int64_t K) {
  return kComposeChunks * (chunk_block(K, 16).oA + K);
}

// The composed chain's shared memory, in floats. Two regions, each refilled as soon as the step is
// done with it (one mbarrier each): R1 holds what only the round of products with the state reads
// (per chunk: -w D, Qg D as in the block, then this CTA's tile of u), R2 what the mixes and the state
// update read (per chunk: Kd D, A_qk, decay as in the block, contiguous there, so one copy; then the
// group's mixing tables). Then the warps' output staging, the split-K partials of the four chunks
// (KS > 1) and the two mbarriers. K = 128: 148 KiB (VT = 64), 172 KiB (VT = 32).
struct ComposedSmem {
  std::int64_t r1c, r2c;  // one chunk's part of R1, of R2 (before the tables)
  std::int64_t r2, mn, o, red, bars, floats;
};
constexpr ComposedSmem chunk_composed_smem(std::int64_t K, std::int64_t VT) {
  const std::int64_t C = kChunkTokens, M = kComposeChunks, KS = 64 / VT;
  const std::int64_t r1c = 2 * C * chunk_pw(K) + C * chunk_pu(VT);
  const std::int64_t r2c = C * chunk_pd(K) + C * chunk_pa() + K;
  const std::int64_t r2 = M * r1c, mn = r2 + M * r2c, o = mn + chunk_mn_first(M) * chunk_mn_table();
  const std::int64_t red = o + kChunkWarps * C * chunk_out_pitch();
  const std::int64_t bars = red + (KS > 1 ? 2 * kChunkWarps * M * 256 : 0);
  return {r1c, r2c, r2, mn, o, red, bars, bars + 4};  // 2 mbarriers, 8 bytes each
}
constexpr std::int64_t chunk_composed_smem_bytes(std::int64_t K, std::int64_t VT) {
  return 4 * chunk_composed_smem(K, VT).floats;
}
// Whether an instance exists: its shared memory within sm_90's 227 KiB a CTA (K <= 128 at every V
// tile; K = 256 needs 266-270 KiB and is refused under composed).
constexpr bool chunk_composed_fits(std::int64_t K, std::int64_t VT) {
  return chunk_composed_smem_bytes(K, VT) <= 227 * 1024 && chunk_compose_smem_floats(K) * 4 <= 227 * 1024;
}

}  // namespace kparity::kernels::kda
