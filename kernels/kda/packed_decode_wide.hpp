#pragma once
// kda/packed_decode, form "wide" (KPARITY_PACKED_DECODE_FORM=wide; docs/kda_decode_kernel_forms.md):
// the host-visible geometry the launcher sizes a launch with and the kernel is compiled for
// (packed_decode_wide_kernel.cuh static_asserts what it assumes of these numbers), and the entry
// point of its instances (packed_decode_wide_inst.cu). Host code includes this without nvcc.
#include <cstdint>

#include "common/dispatch_result.hpp"
#include "kda/dispatch.hpp"
#include "kda/launch_geometry.hpp"
#include "kda/params.hpp"

namespace kparity::kernels::kda {

// PackedParams::form values.
inline constexpr int kPackedFormVerified = 0;  // packed_decode_kernel / packed_decode_early_kernel
inline constexpr int kPackedFormWide = 1;      // packed_decode_wide_kernel

// One wave of this many CTAs per SM is the whole grid (the launcher picks the V tile for it): 4 warps
// each, so 16 warps an SM (4 a scheduler, where the verified small-batch form gets 1.8 at B = 1), and
// the kernel's register cap (__launch_bounds__) is set for this residency.
inline constexpr int kPackedWideCtasPerSm = 4;
// Rows a lane group takes from shared memory at a time (independent reduction chains in flight).
inline constexpr int kPackedWideRowsUnroll = 2;
// A CTA's tile arrives in at most this many bulk copies, one mbarrier each, so the first rows are
// computed while the later ones land (B = 4..8 tiles of 16-32 KB).
inline constexpr int kPackedWideMaxStages = 8;
// Largest state tile (bytes) one CTA holds in shared memory; 4 CTAs an SM take 4 x (32 + 3) KB of the
// 227 KB. A call whose one-wave tile would be larger is not a small batch: the verified form runs it.
inline constexpr std::int64_t kPackedWideMaxTileBytes = 32 * 1024;

// RowLayout<S, K> (device.cuh) from the state's element size: rows of V a warp covers at a time.
constexpr std::int64_t packed_wide_rows_per_warp(std::int64_t elem_bytes, std::int64_t K) {
  const std::int64_t vec = 16 / elem_bytes, lanes = K / vec < 32 ? K / vec : 32;
  return 32 / lanes;
}
// Rows of the tile one iteration of the CTA covers: 4 warps x rows per warp x rows unrolled.
constexpr std::int64_t packed_wide_iter_rows(std::int64_t elem_bytes, std::int64_t K) {
  return (kPackedThreads / 32) * packed_wide_rows_per_warp(elem_bytes, K) * kPackedWideRowsUnroll;
}
// Rows per bulk copy (stage): whole iterations, at most kPackedWideMaxStages stages, at most the tile.
constexpr std::int64_t packed_wide_stage_rows(std::int64_t VT, std::int64_t iter_rows) {
  const std::int64_t r = VT / kPackedWideMaxStages > iter_rows ? VT / kPackedWideMaxStages : iter_rows;
  return r < VT ? r : VT;
}
// Shared memory: the stages' mbarriers, q_s / k_hat / alpha [K] each, the norm partials (2 per
// warp), v [VT] (fp32), then the state tile [VT][K] in the state dtype at a 128-byte boundary.
constexpr std::int64_t packed_wide_tile_offset(std::int64_t K, std::int64_t VT) {
  const std::int64_t head = 8 * kPackedWideMaxStages + 4 * (3 * K + 2 * (kPackedThreads / 32) + VT);
  return (head + 127) / 128 * 128;
}
constexpr std::int64_t packed_wide_smem_bytes(std::int64_t K, std::int64_t VT, std::int64_t elem_bytes) {
  return packed_wide_tile_offset(K, VT) + VT * K * elem_bytes;
}

// The wide form's instances (state dtype x out dtype x K), launched like launch_packed's.
DispatchResult launch_packed_wide(const PackedParams& p, int state_dt, int out_dt, const Launch& l);

}  // namespace kparity::kernels::kda
