#pragma once
// POD kernel parameters (style habit 6): raw pointers, int64 element strides and dtype codes
// (common/dtype_code.hpp), no tensor or CUDA type, so the host launchers fill it without nvcc.
// Whether an optional source or output is there is its own flag, set by the launcher, never a
// pointer's nullness: an empty tensor (no extend keys, T = 0) may have a null data pointer
// (PyTorch and DLPack give one), as the KDA params say too (kda/params.hpp).
#include <cstdint>

#include "common/dtype_code.hpp"

namespace kparity::kernels::sparse {

// Split-K: at most this many key-range splits per (token, head tile). The combine kernel runs one
// thread per split and keeps one weight per split in shared memory (attn_kernel.cuh).
inline constexpr int kMaxSplits = 128;
// The small-T decode kernel's in-cluster merge (SparseTuning::decode_combine 2): the splits of one
// (token, head group) form one thread-block cluster, so at most 16 (sm_90's non-portable cluster
// size; 8 is the portable one).
inline constexpr int kMaxClusterSplits = 16;
// Keys per tile of the two attention kernels (attn_kernel.cuh kBK, wg_common.cuh kWgBK): a split
// takes whole tiles, so the decode launcher never makes more splits than a token has tiles.
inline constexpr int kKeysPerTileMma = 32, kKeysPerTileWg = 64;
// Keys per tile of the small-T decode kernel (decode_small_kernel.cuh kDsBK).
inline constexpr int kKeysPerTileSmall = 64;

struct AttnParams {
  const void* q = nullptr;  std::int64_t q_st = 0, q_sh = 0, q_sd = 0;
  // Source 0 is unified_kv (prefix), source 1 is kv (extend; null for decode).
  int has_extend = 0;  // source 1 is there (prefill)
  const void* src[2] = {nullptr, nullptr};  std::int64_t src_sr[2] = {0, 0}, src_sd[2] = {0, 0};
  const void* idx[2] = {nullptr, nullptr};  int idx_dt[2] = {kI32, kI32};  std::int64_t idx_s[2] = {0, 0};
  const void* ptr[2] = {nullptr, nullptr};  int ptr_dt[2] = {kI32, kI32};  std::int64_t ptr_s[2] = {0, 0};
  const void* sink = nullptr;  int sink_dt = kF32;  std::int64_t sink_s = 0;
  void* out = nullptr;  std::int64_t out_st = 0, out_sh = 0, out_sd = 0;
  float* lse = nullptr;  std::int64_t lse_st = 0, lse_sh = 0;
  int has_lse = 0;  // the LSE is stored (return_lse)
  // Split-K partials (used when splits > 1): acc [splits, T, H, D], ml [splits, T, H, 2] (max, sum).
  float* ws_acc = nullptr;  float* ws_ml = nullptr;
  int ws_vec2 = 0;  // D even: acc partials stored as 8-byte pairs (LaunchOptions::decode_variant 2)
  std::int64_t T = 0, H = 0, D = 0;
  std::int64_t n_head_tiles = 0, splits = 1;
  int cluster = 0;  // the small-T decode kernel merges its splits inside a cluster of `splits` CTAs
  float scale = 0.f, shift = 0.f;
  int vec_q = 0, vec_kv = 0, vec_out = 0;  // 16-byte global accesses allowed
};

}  // namespace kparity::kernels::sparse
