#pragma once
// Host-visible launch geometry of the KDA kernels: the block sizes and shared-memory layouts the
// launchers size a launch with and the kernels are compiled for (the kernels static_assert what
// they assume of these numbers).
#include <cstdint>

namespace kparity::kernels::kda {

inline constexpr int kPackedThreads = 128;
// The packed kernel's small-batch instance (decode_variant 2) is register-capped for this residency,
// and the launcher gives it a V tile whose grid fits one wave of it.
inline constexpr int kPackedEarlyCtasPerSm = 4;
inline constexpr int kRecurrentThreads = 128;
inline constexpr int kRecurrentRowsUnroll = 2;  // state rows per lane group held at once

// ReplaySSM: 4 warps; a thread holds 32 channels' worth of state per pass (K < 32: a whole row), so
// a warp covers 32 / replay_lanes_per_row(K) rows at a time (in lane groups of two rows, see
// ReplayLayout) and a pass of the CTA covers replay_rows_per_pass(K) rows. Each thread keeps two
// passes of state vectors in flight. The V tile is a power-of-two number of passes
// (replayssm_decode.cpp chooses); kReplayCtasPerSm is the residency the register report gives
// (128 registers x 128 threads: 4 CTAs per SM).
inline constexpr int kReplayThreads = 128;
inline constexpr int kReplayCtasPerSm = 4;
inline constexpr std::int64_t replay_lanes_per_row(std::int64_t K) { return K < 32 ? 1 : K / 32; }
inline constexpr std::int64_t replay_rows_per_pass(std::int64_t K) {
  return (kReplayThreads / 32) * (32 / replay_lanes_per_row(K));
}
// Floats of ReplaySSM shared memory before the raw rings: the g ring / prefix / k*W table [L][K],
// six K vectors, two [L] dot tables and block-reduction scratch (rounded up to 16 bytes), the v tile.
inline constexpr std::int64_t replay_smem_floats(std::int64_t L, std::int64_t K, std::int64_t VT) {
  return L * K + 6 * K + ((2 * L + 2 * (kReplayThreads / 32) + 3) / 4) * 4 + VT;
}
// ... then the raw k ring [L][K] and d ring tile [L][VT] in the ring dtype (ring_bytes each).
inline std::int64_t replay_smem_bytes(std::int64_t L, std::int64_t K, std::int64_t VT, std::int64_t ring_bytes) {
  return 4 * replay_smem_floats(L, K, VT) + ring_bytes * L * (K + VT);
}
// Packed decode: q_s, k_hat, alpha, one spare K vector, VT outputs, scratch.
inline std::int64_t packed_smem_bytes(std::int64_t K, std::int64_t VT) {
  return 4 * (4 * K + VT + 2 * (kPackedThreads / 32));
}
// Recurrent: three K vectors, v and o tiles, scratch.
inline std::int64_t recurrent_smem_bytes(std::int64_t K, std::int64_t VT) {
  return 4 * (3 * K + 2 * VT + 2 * (kRecurrentThreads / 32));
}
// Rows of V per recurrent CTA: warps x rows per warp (K/4 lanes per fp32 row: RowLayout<float, K>)
// x rows unrolled; the whole tile stays in registers for the whole sequence.
inline constexpr std::int64_t recurrent_vtile(std::int64_t K, std::int64_t V) {
  const std::int64_t lanes = K / 4 < 32 ? K / 4 : 32;
  const std::int64_t vt = (kRecurrentThreads / 32) * (32 / lanes) * kRecurrentRowsUnroll;
  return vt < V ? vt : V;
}

}  // namespace kparity::kernels::kda
