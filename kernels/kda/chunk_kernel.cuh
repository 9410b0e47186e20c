#pragma once
// The second chunked-KDA kernel (kda/chunk): the chain over a sequence's chunks, which is all that
// depends on the state (docs/kda_chunk_kernel.md sections 3.9-3.11); chunk_prep_kernel.cuh has
// already written each token's operands to the workspace.
//
// One CTA of 4 warps per (sequence, value head, V tile), chunks of 16 tokens in order. Warp w holds
// the state slice S^T[16 value columns][K / KS channels] as m16n8k8 accumulator fragments (rows =
// value columns, columns = channels), kept in registers for the whole sequence. The three products
// with the state use that fragment directly as the A operand: a thread's accumulator holds channels
// 2t and 2t+1 of each 8-channel block where an A fragment wants t and t+4, so those products run
// over the channel index in the permuted order (2t, 2t+1) <-> (t, t+4) inside each block and load
// their B operands in the same order. Summing over a permuted index changes nothing but the order
// the hardware adds the 8 products of one step.
//
// A chunk's workspace rows (-w, Qg, Kd, A_qk, the tile's u, decay) arrive by cp.async into one of
// two shared buffers while the previous chunk's products run: one barrier a chunk (two with KS > 1).
#include "kda/chunk_mma.cuh"
#include "kda/chunk_plan.hpp"

namespace kparity::kernels::kda {

template <int K, int KS>
__global__ void __launch_bounds__(kChunkThreads) chunk_kernel(const ChunkParams p) {
  using namespace chunk_dev;
  constexpr int C = kChunkTokens, NVG = kChunkWarps / KS, VT = 16 * NVG, KW = K / KS, NT = KW / 8;
  static_assert(KW % 8 == 0 && KW >= 8, "a warp's channel slice is whole 8-channel mma steps");
  constexpr int PW = chunk_pw(K), PD = chunk_pd(K), PA = chunk_pa(), PU = chunk_pu(VT), PO = chunk_out_pitch();
  constexpr int BUF = chunk_buf_floats(K, VT);
  // Offsets inside a buffer, in the order chunk_buf_floats counts them.
  constexpr int oW = 0, oQ = oW + C * PW, oD = oQ + C * PW, oA = oD + C * PD, oU = oA + C * PA, oDec = oU + C * PU;
  static_assert(oDec + K == BUF && BUF % 4 == 0, "16-byte aligned tables");
  extern __shared__ __align__(16) float smem[];
  float* s_o = smem + 2 * BUF;                       // [warps][16 tokens][PO]
  float* s_red = s_o + kChunkWarps * C * PO;         // [2][warps][16][16] split-K partials

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vti = bid % p.n_vtiles, nh = bid / p.n_vtiles;
  const std::int64_t hv = nh % p.HV, n = nh / p.HV, v0 = vti * VT;
  // Without cu_seqlens batch row n is sequence n; with it the one row holds the N sequences.
  const std::int64_t b = p.has_cu ? 0 : n;
  const std::int64_t bos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0) : 0;
  const std::int64_t eos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0) : p.T;
  const int vg = warp % NVG, ks = warp / NVG;
  const std::int64_t vc0 = v0 + 16 * vg;  // the warp's first value column
  const bool active = vc0 < p.V;          // V is a multiple of 16: a group is whole or absent
  const int c0 = ks * KW;                 // the warp's first channel
  const std::int64_t R = p.ws_row, rs = p.HV * R;

  // Issue the cp.async copies of the chunk at t0 (L real slots) into buffer `buf`; the missing
  // slots' rows are zero-filled (zero rows are what the prep kernel's missing slots would hold).
  const auto issue = [&](std::int64_t t0, int L, float* buf) {
    const float* row0 = p.ws + ((b * p.T + t0) * p.HV + hv) * R;
    constexpr int Q4 = K / 4, PER_ROW = 3 * Q4 + C / 4 + VT / 4;
    for (int x = tid; x < C * PER_ROW + Q4; x += kChunkThreads) {
      float* dst;
      const float* src;
      bool valid;
      if (x < C * PER_ROW) {
        const int i = x / PER_ROW, r = x % PER_ROW;
        const float* row = row0 + i * rs;
        valid = i < L;
        if (r < Q4) { dst = buf + oW + i * PW + 4 * r; src = row + 4 * r; }
        else if (r < 2 * Q4) { dst = buf + oQ + i * PW + 4 * (r - Q4); src = row + K + 4 * (r - Q4); }
        else if (r < 3 * Q4) { dst = buf + oD + i * PD + 4 * (r - 2 * Q4); src = row + 2 * K + 4 * (r - 2 * Q4); }
        else if (r < 3 * Q4 + C / 4) { dst = buf + oA + i * PA + 4 * (r - 3 * Q4); src = row + 4 * K + 4 * (r - 3 * Q4); }
        else {
          const int col = 4 * (r - 3 * Q4 - C / 4);
          dst = buf + oU + i * PU + col;
          src = row + 4 * K + C + v0 + col;
          valid = valid && v0 + col < p.V;
        }
      } else {
        const int col = 4 * (x - C * PER_ROW);
        dst = buf + oDec + col;
        src = row0 + 3 * K + col;
        valid = true;
      }
      kernels::dev::cp_async16(dst, valid ? src : p.ws, valid ? 16 : 0);
    }
  };

  // S^T fragments: S[s] covers channels c0 + 8s .. +7; element e is (row g8 + 8 (e / 2), channel
  // c0 + 8s + 2 t4 + e % 2).
  float S[NT][4];
#pragma unroll
  for (int s = 0; s < NT; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t ch = c0 + 8 * s + 2 * t4 + (e & 1), col = vc0 + g8 + 8 * (e >> 1);
      S[s][e] = (p.has_init && active)
                    ? ld_any(p.init, p.init_dt, n * p.init_sn + hv * p.init_sh + ch * p.init_sk + col * p.init_sv)
                    : 0.f;
    }

  const auto len = [&](std::int64_t t0) { return static_cast<int>(eos - t0 < C ? eos - t0 : C); };
  if (bos < eos) issue(bos, len(bos), smem);
  kernels::dev::cp_async_commit();
  int ci = 0;
  for (std::int64_t t0 = bos; t0 < eos; t0 += C, ++ci) {
    const int L = len(t0);
    kernels::dev::cp_async_wait<0>();
    // This chunk's buffer is complete for every thread, and every warp is done with the other one.
    __syncthreads();
    if (t0 + C < eos) issue(t0 + C, len(t0 + C), smem + ((ci + 1) & 1) * BUF);
    kernels::dev::cp_async_commit();
    const float* bf = smem + (ci & 1) * BUF;
    const float *bW = bf + oW, *bQ = bf + oQ, *bD = bf + oD, *bA = bf + oA, *bU = bf + oU, *bDec = bf + oDec;

    // --- doc 3.9-3.10: the warp's partial v_new^T and o^T over its channel slice ---
    float X[2][4], O[2][4];
    const int vr = 16 * vg;  // the warp's first column in the tile
    if (active) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = 8 * nt + 2 * t4 + (e & 1), col = vr + g8 + 8 * (e >> 1);
          X[nt][e] = ks == 0 ? bU[tok * PU + col] : 0.f;
          O[nt][e] = 0.f;
        }
#pragma unroll
      for (int s = 0; s < NT; ++s) {
        std::uint32_t a[4];
        acc_as_a(S[s], a);
        const int ch = c0 + 8 * s + 2 * t4;
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          const int tok = 8 * nt + g8;
          // -w and Qg are stored tf32-rounded: their bits are the operands.
          const float2 w2 = *reinterpret_cast<const float2*>(bW + tok * PW + ch);
          const std::uint32_t bw[2] = {__float_as_uint(w2.x), __float_as_uint(w2.y)};
          mma(X[nt], a, bw, p.simt);
          const float2 q2 = *reinterpret_cast<const float2*>(bQ + tok * PW + ch);
          const std::uint32_t bq[2] = {__float_as_uint(q2.x), __float_as_uint(q2.y)};
          mma(O[nt], a, bq, p.simt);
        }
      }
    }
    if constexpr (KS > 1) {
      // Partials through shared memory, summed in slice order by every warp of the column group.
      // [16 columns][16 tokens] of a warp's fragment pair, element e of token block nt.
      const auto at = [&](int nt, int e) { return (g8 + 8 * (e >> 1)) * 16 + 8 * nt + 2 * t4 + (e & 1); };
      if (active) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            s_red[warp * 256 + at(nt, e)] = X[nt][e];
            s_red[(kChunkWarps + warp) * 256 + at(nt, e)] = O[nt][e];
          }
      }
      __syncthreads();
      if (active) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int idx = at(nt, e);
            float sx = s_red[vg * 256 + idx], so = s_red[(kChunkWarps + vg) * 256 + idx];
#pragma unroll
            for (int kk = 1; kk < KS; ++kk) {
              sx = __fadd_rn(sx, s_red[(vg + kk * NVG) * 256 + idx]);
              so = __fadd_rn(so, s_red[(kChunkWarps + vg + kk * NVG) * 256 + idx]);
            }
            X[nt][e] = sx;
            O[nt][e] = so;
          }
      }
    }
    if (active) {
      std::uint32_t av[2][4];  // v_new^T as A operands, token blocks 0-7 and 8-15
      acc_as_a(X[0], av[0]);
      acc_as_a(X[1], av[1]);
      // doc 3.10: o^T += v_new^T A_qk^T (block (0, 1) is above the diagonal: zero, skipped); the
      // warp stages its 16 x 16 outputs and stores the chunk's real tokens, rounded once into out's
      // dtype (rows of 16 columns).
      if (ks == 0) {
        float* so = s_o + warp * C * PO;
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
          for (int jb = 0; jb <= nt; ++jb) {
            const int row = 8 * nt + g8, tk = 8 * jb + 2 * t4;
            const float2 a2 = *reinterpret_cast<const float2*>(bA + row * PA + tk);
            const std::uint32_t ba[2] = {__float_as_uint(a2.x), __float_as_uint(a2.y)};
            mma(O[nt], av[jb], ba, p.simt);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) so[(8 * nt + 2 * t4 + (e & 1)) * PO + g8 + 8 * (e >> 1)] = O[nt][e];
        }
        __syncwarp();
#pragma unroll
        for (int u = 0; u < C * 16 / 32; ++u) {
          const int idx = lane + 32 * u, i = idx / 16, j = idx % 16;
          if (i < L)
            st_any(p.out, p.out_dt, b * p.out_sb + (t0 + i) * p.out_st + hv * p.out_sh + (vc0 + j) * p.out_sv,
                   so[i * PO + j]);
        }
        __syncwarp();
      }
      // doc 3.11: S^T <- S^T * decay + v_new^T Kd.
#pragma unroll
      for (int s = 0; s < NT; ++s) {
        const int cb = c0 + 8 * s;
        const float2 d2 = *reinterpret_cast<const float2*>(bDec + cb + 2 * t4);
        S[s][0] = __fmul_rn(S[s][0], d2.x);
        S[s][1] = __fmul_rn(S[s][1], d2.y);
        S[s][2] = __fmul_rn(S[s][2], d2.x);
        S[s][3] = __fmul_rn(S[s][3], d2.y);
#pragma unroll
        for (int jb = 0; jb < 2; ++jb) {
          const int tk = 8 * jb + 2 * t4;
          const std::uint32_t bk[2] = {__float_as_uint(bD[tk * PD + cb + g8]), __float_as_uint(bD[(tk + 1) * PD + cb + g8])};
          mma(S[s], av[jb], bk, p.simt);
        }
      }
    }
  }
  if (!p.has_final || !active) return;
#pragma unroll
  for (int s = 0; s < NT; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const std::int64_t ch = c0 + 8 * s + 2 * t4 + (e & 1), col = vc0 + g8 + 8 * (e >> 1);
      st_any(p.fin, p.fin_dt, n * p.fin_sn + hv * p.fin_sh + ch * p.fin_sk + col * p.fin_sv, S[s][e]);
    }
}

}  // namespace kparity::kernels::kda
