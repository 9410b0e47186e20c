#pragma once
// The composed form's middle kernel (KPARITY_CHUNK_FORM=composed; docs/kda_chunk_composed.md
// sections 1 and 5), launched between chunk_prep_kernel and the composed chain: it turns each group
// of m = 4 consecutive chunks of a sequence (fewer at its end) into the tables of one chain step.
// With dec_x the decay of the group's chunk x and D(a, b) = dec_{a+1} * ... * dec_{b-1} (chained in
// that order, fp32; the identity when empty), it rewrites in place, per chunk b of the group:
//   -w_b  <- tf32(-w_b * D(-1, b)),   Qg_b <- tf32(Qg_b * D(-1, b)),   Kd_b <- tf32(Kd_b * D(b, m_eff)),
// the first chunk's decay <- D(-1, m_eff) (the step's decay of the state; the others' are unread),
// and writes into chunk b's table area (chunk_composed_plan.hpp) for every a < b
//   -M_ba = tf32(sum_c tf32(-w_b D(a, b))[i][c] tf32(Kd_a)[j][c]),
//    N_ba = tf32(sum_c tf32( Qg_b D(a, b))[i][c] tf32(Kd_a)[j][c])
// over tensor-core steps (8 channels a step, in increasing order, fp32 accumulation). This is the
// rounding of chunk_model's chain_many (tests/gpu_kda/chunk_model.cpp): the fp32 operands (the prep
// stores them unrounded under this form) times the decay products, then tf32; its sums in channel
// order differ from the mma's only in the order inside a step (the tolerance recipe's allowance).
// Decays are in [0, 1] when the gates are <= 0 (section 2), so the tables are operands scaled down;
// a -inf gate gives 0 factors (0 * finite), exactly as in the model.
//
// One CTA of 4 warps per (64-token window of the packed token axis, value head): without cu_seqlens
// a window is a group of batch row b; with it, the CTA takes every group that starts in its window
// (one a sequence at most; several short sequences can start in one window), found as the prep
// kernel finds its chunks.
#include "kda/chunk_composed_plan.hpp"
#include "kda/chunk_mma.cuh"

namespace kparity::kernels::kda {

template <int K>
__global__ void __launch_bounds__(kChunkThreads) chunk_compose_kernel(const ChunkParams p) {
  using namespace chunk_dev;
  constexpr int C = kChunkTokens, M = kComposeChunks, GT = C * M;
  constexpr int PW = chunk_pw(K), PD = chunk_pd(K), PA = chunk_pa(), TAB = chunk_mn_table();
  constexpr ChunkBlock kB = chunk_block(K, 16);  // the offsets below oDec do not depend on VT
  constexpr int CH = kB.oA;                      // -w, Qg, Kd of one chunk, with their pitches
  static_assert(kB.oW == 0 && kB.oQ == C * PW && kB.oD == 2 * C * PW && CH % 4 == 0, "-w, Qg, Kd contiguous");
  extern __shared__ __align__(16) float smem[];
  float* s_blk = smem;           // [M][CH]: chunk b's -w, Qg, Kd as in its block (unrounded)
  float* s_dec = smem + M * CH;  // [M][K]: the chunks' decays
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t hv = blockIdx.y;
  const std::int64_t mn_at = p.ws_blk - chunk_mn_reserve();  // a block's table area

  // D(x0 - 1, x1) at channel c: dec_{x0} * ... * dec_{x1 - 1}, chained in order; 1 when empty
  // (x * 1 is x exactly, so an empty product leaves the operand's bits as the model does).
  const auto chain = [&](int x0, int x1, int c) {
    float d = 1.f;
    for (int x = x0; x < x1; ++x) d = x == x0 ? s_dec[x * K + c] : __fmul_rn(d, s_dec[x * K + c]);
    return d;
  };

  // The group whose first block is `first`, m_eff = me chunks (1 .. 4).
  const auto compose = [&](std::int64_t first, int me) {
    const auto blk = [&](int b) { return p.ws + ((first + b) * p.HV + hv) * p.ws_blk; };
    for (int b = 0; b < me; ++b) {
      const float4* src = reinterpret_cast<const float4*>(blk(b));
      float4* dst = reinterpret_cast<float4*>(s_blk + b * CH);
      for (int i = tid; i < CH / 4; i += kChunkThreads) dst[i] = src[i];
      for (int c = tid; c < K; c += kChunkThreads) s_dec[b * K + c] = blk(b)[kB.oDec + c];
    }
    __syncthreads();
    // -M_ba and N_ba (from the staged, unscaled operands): unit u is pair (a, b) (pairs in the order
    // (0,1), (0,2), (1,2), (0,3), ...), table u / 2 % 2 (0: M, 1: N), token columns 8 (u % 2) .. +7.
    const int pairs = me * (me - 1) / 2;
    for (int u = warp; u < 4 * pairs; u += kChunkWarps) {
      const int pi = u / 4, is_n = (u / 2) % 2, jh = u % 2;
      int b = 1;
      while (pi >= b * (b + 1) / 2) ++b;
      const int a = pi - b * (b - 1) / 2;
      const float* X = s_blk + b * CH + (is_n ? kB.oQ : kB.oW);
      const float* Kd = s_blk + a * CH + kB.oD;
      float d[4] = {0.f, 0.f, 0.f, 0.f};
      for (int kb = 0; kb < K; kb += 8) {
        const int c0 = kb + t4, c1 = kb + t4 + 4;
        const float m0 = chain(a + 1, b, c0), m1 = chain(a + 1, b, c1);
        const std::uint32_t af[4] = {tf32(__fmul_rn(X[g8 * PW + c0], m0)), tf32(__fmul_rn(X[(g8 + 8) * PW + c0], m0)),
                                     tf32(__fmul_rn(X[g8 * PW + c1], m1)), tf32(__fmul_rn(X[(g8 + 8) * PW + c1], m1))};
        const int j = 8 * jh + g8;
        const std::uint32_t bf[2] = {tf32(Kd[j * PD + c0]), tf32(Kd[j * PD + c1])};
        mma(d, af, bf, p.simt);
      }
      float* t = blk(b) + mn_at + (is_n ? b + a : a) * TAB;  // the block holds its own 2b tables
#pragma unroll
      for (int e = 0; e < 4; ++e) t[(g8 + 8 * (e >> 1)) * PA + 8 * jh + 2 * t4 + (e & 1)] = __uint_as_float(tf32(d[e]));
    }
    // The scaled operands, in place (the products above read only the staged copy).
    for (int b = 0; b < me; ++b) {
      float* o = blk(b);
      const float* s = s_blk + b * CH;
      for (int idx = tid; idx < C * K; idx += kChunkThreads) {
        const int i = idx / K, c = idx % K;
        const float pre = chain(0, b, c), post = chain(b + 1, me, c);
        o[kB.oW + i * PW + c] = __uint_as_float(tf32(__fmul_rn(s[kB.oW + i * PW + c], pre)));
        o[kB.oQ + i * PW + c] = __uint_as_float(tf32(__fmul_rn(s[kB.oQ + i * PW + c], pre)));
        o[kB.oD + i * PD + c] = __uint_as_float(tf32(__fmul_rn(s[kB.oD + i * PD + c], post)));
      }
    }
    for (int c = tid; c < K; c += kChunkThreads) blk(0)[kB.oDec + c] = chain(0, me, c);
    // The CTA's next group (another sequence) restages the tables.
    __syncthreads();
  };

  if (!p.has_cu) {
    const std::int64_t per_row = (p.n_windows + M - 1) / M;
    const std::int64_t b = blockIdx.x / per_row, gi = blockIdx.x % per_row, t0 = gi * GT;
    if (t0 >= p.T) return;
    const std::int64_t left = (p.T - t0 + C - 1) / C;
    compose(chunk_first_block(false, b, 0, p.n_windows) + gi * M, static_cast<int>(left < M ? left : M));
    return;
  }
  // As the prep kernel: the first sequence that ends after the window's start, then every sequence
  // that starts before its end; a sequence's group starts are bos + 64 g.
  const std::int64_t w0 = static_cast<std::int64_t>(blockIdx.x) * GT, w1 = w0 + GT;
  std::int64_t lo = 0, hi = p.N;
  while (lo < hi) {
    const std::int64_t mid = (lo + hi) / 2;
    if (ld_index(p.cu_seqlens, p.cu_dt, (mid + 1) * p.cu_s0) <= w0) lo = mid + 1;
    else hi = mid;
  }
  for (std::int64_t n = lo; n < p.N; ++n) {
    const std::int64_t bos = ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0);
    const std::int64_t eos = ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0);
    if (bos >= w1) break;
    if (eos <= bos || bos < 0 || eos > p.T) continue;
    const std::int64_t t0 = bos >= w0 ? bos : bos + (w0 - bos + GT - 1) / GT * GT;
    if (t0 < w1 && t0 < eos) {
      const std::int64_t left = (eos - t0 + C - 1) / C;
      compose(chunk_first_block(true, n, bos, p.n_windows) + (t0 - bos) / C, static_cast<int>(left < M ? left : M));
    }
  }
}

}  // namespace kparity::kernels::kda
