#pragma once
// POD parameters of the chunked KDA prefill kernel (kda/chunk, docs/kda_chunk_kernel.md): raw
// pointers, int64 element strides for every dimension, dtype codes; no tensor or CUDA type, so the
// launcher fills it without nvcc. Presence of an optional input is its has_* flag (params.hpp says
// why never the pointer).
#include <cstdint>

#include "common/dtype_code.hpp"

namespace kparity::kernels::kda {

// Tokens per chunk: the M of the m16n8k8 tensor-core tiles, and short enough that the gate's
// cumulative sums inside a chunk stay in fp32 range at the contract's lower bound (doc section 2).
inline constexpr int kChunkTokens = 16;
inline constexpr int kChunkWarps = 4;
inline constexpr int kChunkThreads = 32 * kChunkWarps;
// A chunk takes the factorised (tensor-core) form of the intra-chunk decays only while every
// |Gc_i - Gc_ref| of the chunk is at most this; else the exact elementwise form (doc section 3).
inline constexpr float kChunkSafeSpan = 64.f;

// ChunkParams::vec bits: the input's rows are 16-byte aligned with unit channel stride, so the prep
// kernel loads it 16 bytes a lane (chunk_prep_kernel.cuh, stage_rows).
enum ChunkVec : int { kVecQ = 1, kVecK = 2, kVecG = 4, kVecV = 8 };

// The chain kernel's form (chunk_kernel.cuh, docs/kda_chunk_kernel.md section 5), chosen per launch
// (KPARITY_CHUNK_FORM, read in chunk.cpp): the GPU-verified form, or the spread form (a producer warp
// issues the copies, the output work spread over a column group's warps; its Chunk tests pass on an
// H100, its sanitizer runs are pending: bench/results/kda_prefill_2026-12-06b.md). Both store the
// same bits.
enum ChunkForm : int { kChunkFormVerified = 0, kChunkFormSpread = 1 };
// Threads of a chain CTA: the 4 compute warps, and the spread form's producer warp.
constexpr int chunk_chain_threads(bool spread) { return kChunkThreads + (spread ? 32 : 0); }

// The prep kernel's instance (chunk_prep_kernel.cuh, KPARITY_CHUNK_PREP, read in chunk.cpp): the generic
// one, the one specialised for the common call wherever the call matches it (auto, the default), or
// both, their blocks compared word for word on the device (check: a debug mode, a difference traps).
enum ChunkPrep : int { kChunkPrepGeneric = 0, kChunkPrepAuto = 1, kChunkPrepCheck = 2 };

// beta as given, sigmoid(beta), or 2 * sigmoid(beta) (chunk_kda's allow_neg_eigval).
enum ChunkBeta : int { kBetaAsIs = 0, kBetaSigmoid = 1, kBetaTwiceSigmoid = 2 };

struct ChunkParams {
  // [B, T, H, K] / [B, T, HV, V] / [B, T, HV, K] / [B, T, HV]: strides batch, token, head, channel.
  const void* q = nullptr; int q_dt = kF32; std::int64_t q_sb = 0, q_st = 0, q_sh = 0, q_sk = 0;
  const void* k = nullptr; int k_dt = kF32; std::int64_t k_sb = 0, k_st = 0, k_sh = 0, k_sk = 0;
  const void* v = nullptr; int v_dt = kF32; std::int64_t v_sb = 0, v_st = 0, v_sh = 0, v_sv = 0;
  const void* g = nullptr; int g_dt = kF32; std::int64_t g_sb = 0, g_st = 0, g_sh = 0, g_sk = 0;
  const void* beta = nullptr; int beta_dt = kF32; std::int64_t beta_sb = 0, beta_st = 0, beta_sh = 0;
  void* out = nullptr; int out_dt = kF32; std::int64_t out_sb = 0, out_st = 0, out_sh = 0, out_sv = 0;
  // use_gate_in_kernel: g is the raw gate x; x + dt_bias[hv, k] (absent: + 0), A_log[hv] (absent: 0).
  const void* A_log = nullptr; int A_dt = kF32; std::int64_t A_s0 = 0;
  const void* dt_bias = nullptr; int dtb_dt = kF32; std::int64_t dtb_sh = 0, dtb_sk = 0;
  // States, addressed as [n, hv, k, v] whatever the layout (the launcher swaps the strides of a
  // V-first state).
  const void* init = nullptr; int init_dt = kF32; std::int64_t init_sn = 0, init_sh = 0, init_sk = 0, init_sv = 0;
  void* fin = nullptr; int fin_dt = kF32; std::int64_t fin_sn = 0, fin_sh = 0, fin_sk = 0, fin_sv = 0;
  const void* cu_seqlens = nullptr; int cu_dt = kI32; std::int64_t cu_s0 = 0;
  std::int64_t B = 0, T = 0, N = 0, H = 0, HV = 0, G = 1, K = 0, V = 0;
  std::int64_t vtile = 0, n_vtiles = 0;  // V columns per CTA, CTAs per (sequence, value head)
  // The workspace between the two kernels (docs/kda_chunk_kernel.md section 2): one operand block of
  // ws_blk floats per (chunk, value head), block (id * HV + hv) with id from chunk_first_block
  // (chunk_plan.hpp); n_blocks ids in all. Filled by chunk_prep_kernel, read by chunk_kernel.
  // Allocated by launch_chunk (stream-ordered), never by the caller.
  float* ws = nullptr;
  std::int64_t ws_blk = 0, n_blocks = 0;
  std::int64_t n_windows = 0;  // prep CTAs per value head: 16-token windows of the packed token axis
  float scale = 0.f, lower_bound = 0.f;
  int has_lower_bound = 0, l2norm = 0, beta_mode = kBetaAsIs;
  int gate_in_kernel = 0, has_A_log = 0, has_dt_bias = 0;
  int has_init = 0, has_final = 0, has_cu = 0;
  int vec = 0;   // ChunkVec bits
  int simt = 0;  // debug: the three state products in plain fp32 FMAs instead of tensor cores
  int form = kChunkFormVerified;  // ChunkForm of the chain kernel
  // The prep instance for this launch: prep_fast = the specialised one (the call matches it and
  // KPARITY_CHUNK_PREP asked for it); prep_check = also the generic one, the specialised one writing
  // to ws_check (a second workspace of the same size, allocated by launch_chunk) for the comparison.
  int prep_fast = 0, prep_check = 0;
  float* ws_check = nullptr;
};

}  // namespace kparity::kernels::kda
