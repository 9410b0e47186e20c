#pragma once
// The composed chain of kda/chunk (KPARITY_CHUNK_FORM=composed; docs/kda_chunk_composed.md sections
// 3 and 5): one chain step per group of m = 4 chunks (64 tokens), on the tables the compose kernel
// (chunk_compose_kernel.cuh) wrote. The verified chain (chunk_kernel.cuh) waits, every 16 tokens, for
// its K-deep products with the state and then for the state update before the next chunk can start;
// here the only products with the state are one round for the whole group, so the serial path per 64
// tokens is one K-deep round, the 16-token mixes and one update. With S0 the state before the step:
//   1. v_b = u_b + (-w_b D) S0 and o_b = (Qg_b D) S0 for every chunk b of the group (independent
//      mma chains; with KS > 1 the split-K partials summed in slice order, as the verified chain);
//   2. chunk by chunk in order: v_b += (-M_ba) v_a and o_b += N_ba v_a for a < b (a in order), then
//      o_b += A_qk,b v_b; o_b stored;
//   3. S <- fl32(S0 * D(-1, m_eff)) + sum_a (Kd_a D)^T v_a (a in order, token blocks 0-7, 8-15).
// That is chunk_model's chain_many (tests/gpu_kda/chunk_model.cpp) with its sums as mma chains.
//
// Fragments, the state's layout and the output staging are the verified chain's (chunk_kernel.cuh's
// file comment: the state slice S^T as accumulator fragments used directly as A operands, channels in
// the permuted order). The mixing tables are [16][PA] like A_qk and load the same way.
//
// Shared memory (chunk_composed_smem): two regions, each one mbarrier, one phase a group. R1 (-w D,
// Qg D, u of the group's chunks) is read only by step 1: the CTA barrier after step 1 hands it back
// and thread 0 refills it with the next group's at once, so that copy overlaps steps 2 and 3. R2
// (Kd D, A_qk, decay, the mixing tables) is refilled after step 3's barrier and overlaps the next
// group's step 1. Only one group fits at K = 128 (148-172 KiB), so there is no deeper pipeline; a
// chunk past the sequence's end in a short last group is neither copied nor read.
#include "common/bulk_copy.cuh"
#include "kda/chunk_composed_plan.hpp"
#include "kda/chunk_mma.cuh"

namespace kparity::kernels::kda {

template <int K, int KS, bool SIMT>
__device__ __forceinline__ void chunk_composed_chain(const ChunkParams& p) {
  using namespace chunk_dev;
  namespace kd = kernels::dev;
  constexpr int C = kChunkTokens, M = kComposeChunks, NVG = kChunkWarps / KS, VT = 16 * NVG, KW = K / KS, NT = KW / 8;
  static_assert(KW % 8 == 0 && KW >= 8, "a warp's channel slice is whole 8-channel mma steps");
  constexpr int PW = chunk_pw(K), PD = chunk_pd(K), PA = chunk_pa(), PU = chunk_pu(VT), PO = chunk_out_pitch();
  constexpr int TAB = chunk_mn_table();
  constexpr ChunkBlock kB = chunk_block(K, VT);
  constexpr ComposedSmem kS = chunk_composed_smem(K, VT);
  constexpr int R1C = kS.r1c, R2C = kS.r2c;
  constexpr int oQ1 = C * PW, oU1 = 2 * C * PW;              // Qg D and u in a chunk's R1 part
  constexpr int oA2 = C * PD, oDec2 = C * PD + C * PA;       // A_qk and decay in a chunk's R2 part
  static_assert(kB.oA == kB.oD + C * PD && kB.oDec == kB.oA + C * PA && kB.shared == kB.oDec + K,
                "Kd, A_qk, decay contiguous in the block: one copy");
  static_assert(R1C % 4 == 0 && R2C % 4 == 0 && kS.r2 % 4 == 0 && kS.mn % 4 == 0, "16-byte aligned copies");
  extern __shared__ __align__(16) float smem[];
  float* r1 = smem;
  float* r2 = smem + kS.r2;
  float* s_mn = smem + kS.mn;   // position b's tables from chunk_mn_first(b)
  float* s_o = smem + kS.o;     // [warps][16 tokens][PO]
  float* s_red = smem + kS.red; // KS > 1: [2][warps][M][256] split-K partials
  std::uint64_t* s_bar = reinterpret_cast<std::uint64_t*>(smem + kS.bars);  // R1, R2

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vti = bid % p.n_vtiles, nh = bid / p.n_vtiles;
  const std::int64_t hv = nh % p.HV, n = nh / p.HV, v0 = vti * VT;
  const std::int64_t b_row = p.has_cu ? 0 : n;
  const std::int64_t bos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0) : 0;
  const std::int64_t eos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0) : p.T;
  const int vg = warp % NVG, ks = warp / NVG;
  const std::int64_t vc0 = v0 + 16 * vg;
  const bool active = vc0 < p.V;  // V is a multiple of 16: a column group is whole or absent
  const int c0 = ks * KW;
  const std::int64_t out_lane = b_row * p.out_sb + (lane / 16) * p.out_st + hv * p.out_sh + (vc0 + lane % 16) * p.out_sv;
  const std::int64_t out_2st = 2 * p.out_st;

  const float* blk0 = p.ws + (chunk_first_block(p.has_cu, n, bos, p.n_windows) * p.HV + hv) * p.ws_blk;
  const std::int64_t blk_stride = p.HV * p.ws_blk, mn_src = p.ws_blk - chunk_mn_reserve();
  const int n_chunks = static_cast<int>((eos - bos + C - 1) / C);
  const int n_groups = (n_chunks + M - 1) / M;
  const auto group_len = [&](int gi) { return n_chunks - gi * M < M ? n_chunks - gi * M : M; };
  // Thread 0 refills a region with group gi's parts (after a CTA barrier that ended every read of it;
  // the fence orders those reads before the async proxy's writes).
  const auto issue_r1 = [&](int gi) {
    const int me = group_len(gi);
    const std::uint32_t bar = kd::smem_u32(s_bar + 0);
    kd::fence_proxy_async_smem();
    kd::mbar_arrive_expect_tx(bar, 4u * static_cast<std::uint32_t>(me * R1C));
    for (int b = 0; b < me; ++b) {
      const float* src = blk0 + (gi * M + b) * blk_stride;
      float* dst = r1 + b * R1C;
      kd::bulk_g2s(kd::smem_u32(dst), reinterpret_cast<std::uint64_t>(src + kB.oW), 4u * oU1, bar);
      kd::bulk_g2s(kd::smem_u32(dst + oU1), reinterpret_cast<std::uint64_t>(src + kB.shared + vti * (C * PU)),
                   4u * (C * PU), bar);
    }
  };
  const auto issue_r2 = [&](int gi) {
    const int me = group_len(gi);
    const std::uint32_t bar = kd::smem_u32(s_bar + 1);
    kd::fence_proxy_async_smem();
    kd::mbar_arrive_expect_tx(bar, 4u * static_cast<std::uint32_t>(me * R2C + chunk_mn_first(me) * TAB));
    for (int b = 0; b < me; ++b) {
      const float* src = blk0 + (gi * M + b) * blk_stride;
      kd::bulk_g2s(kd::smem_u32(r2 + b * R2C), reinterpret_cast<std::uint64_t>(src + kB.oD), 4u * R2C, bar);
      if (b > 0)
        kd::bulk_g2s(kd::smem_u32(s_mn + chunk_mn_first(b) * TAB), reinterpret_cast<std::uint64_t>(src + mn_src),
                     4u * (2 * b * TAB), bar);
    }
  };

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
  if (tid == 0) {
    kd::mbar_init(kd::smem_u32(s_bar + 0), 1);
    kd::mbar_init(kd::smem_u32(s_bar + 1), 1);
    kd::mbar_init_fence();
  }
  __syncthreads();
  if (tid == 0 && n_groups > 0) {
    issue_r1(0);
    issue_r2(0);
  }
  const int vr = 16 * vg;  // the warp's first column in the tile
  for (int gi = 0; gi < n_groups; ++gi) {
    const int me = group_len(gi);
    const std::int64_t g0 = bos + static_cast<std::int64_t>(gi) * M * C;
    const std::uint32_t par = static_cast<std::uint32_t>(gi & 1);
    kd::mbar_wait(kd::smem_u32(s_bar + 0), par);

    // --- step 1: v_b = u_b + (-w_b D) S0, o_b = (Qg_b D) S0 over the warp's channel slice ---
    float X[M][2][4], O[M][2][4];
#pragma unroll
    for (int b = 0; b < M; ++b)
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = 8 * nt + 2 * t4 + (e & 1), col = vr + g8 + 8 * (e >> 1);
          X[b][nt][e] = (active && ks == 0 && b < me) ? r1[b * R1C + oU1 + tok * PU + col] : 0.f;
          O[b][nt][e] = 0.f;
        }
    if (active) {
#pragma unroll
      for (int s = 0; s < NT; ++s) {
        std::uint32_t a[4];
        acc_as_a(S[s], a);
        const int ch = c0 + 8 * s + 2 * t4;
#pragma unroll
        for (int b = 0; b < M; ++b) {
          if (b >= me) continue;
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
            const float* row = r1 + b * R1C + (8 * nt + g8) * PW + ch;
            // The compose kernel stored them tf32-rounded: their bits are the operands.
            const float2 w2 = *reinterpret_cast<const float2*>(row);
            const std::uint32_t bw[2] = {__float_as_uint(w2.x), __float_as_uint(w2.y)};
            mma_t<SIMT>(X[b][nt], a, bw);
            const float2 q2 = *reinterpret_cast<const float2*>(row + oQ1);
            const std::uint32_t bq[2] = {__float_as_uint(q2.x), __float_as_uint(q2.y)};
            mma_t<SIMT>(O[b][nt], a, bq);
          }
        }
      }
    }
    // [16 columns][16 tokens] of a warp's fragment pair, element e of token block nt.
    const auto at = [&](int nt, int e) { return (g8 + 8 * (e >> 1)) * 16 + 8 * nt + 2 * t4 + (e & 1); };
    if constexpr (KS > 1) {
      if (active) {
#pragma unroll
        for (int b = 0; b < M; ++b)
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              s_red[(warp * M + b) * 256 + at(nt, e)] = X[b][nt][e];
              s_red[((kChunkWarps + warp) * M + b) * 256 + at(nt, e)] = O[b][nt][e];
            }
      }
    }
    // Every warp is done with R1 (and, KS > 1, has written its partials): R1 takes the next group.
    __syncthreads();
    if (tid == 0 && gi + 1 < n_groups) issue_r1(gi + 1);
    if constexpr (KS > 1) {
      if (active) {
#pragma unroll
        for (int b = 0; b < M; ++b)
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
              const int idx = at(nt, e);
              float sx = s_red[(vg * M + b) * 256 + idx], so = s_red[((kChunkWarps + vg) * M + b) * 256 + idx];
#pragma unroll
              for (int kk = 1; kk < KS; ++kk) {
                sx = __fadd_rn(sx, s_red[((vg + kk * NVG) * M + b) * 256 + idx]);
                so = __fadd_rn(so, s_red[((kChunkWarps + vg + kk * NVG) * M + b) * 256 + idx]);
              }
              X[b][nt][e] = sx;
              O[b][nt][e] = so;
            }
      }
    }
    kd::mbar_wait(kd::smem_u32(s_bar + 1), par);

    if (active) {
      // --- step 2: the mixes, chunk by chunk. Every warp of a column group forms every v_b (all of
      // them need all of v for the update); the ks = 0 warp alone forms o and stores it, as in the
      // verified chain. ---
      std::uint32_t av[M][2][4];  // v_b^T as A operands, token blocks 0-7 and 8-15
      float* so = s_o + warp * C * PO;
#pragma unroll
      for (int b = 0; b < M; ++b) {
        if (b >= me) continue;
        const float* mn = s_mn + chunk_mn_first(b) * TAB;
#pragma unroll
        for (int a = 0; a < b; ++a)
#pragma unroll
          for (int nt = 0; nt < 2; ++nt)
#pragma unroll
            for (int jb = 0; jb < 2; ++jb) {
              const int off = (8 * nt + g8) * PA + 8 * jb + 2 * t4;
              const float2 m2 = *reinterpret_cast<const float2*>(mn + a * TAB + off);
              const std::uint32_t bm[2] = {__float_as_uint(m2.x), __float_as_uint(m2.y)};
              mma_t<SIMT>(X[b][nt], av[a][jb], bm);
              if (ks == 0) {
                const float2 n2 = *reinterpret_cast<const float2*>(mn + (b + a) * TAB + off);
                const std::uint32_t bn[2] = {__float_as_uint(n2.x), __float_as_uint(n2.y)};
                mma_t<SIMT>(O[b][nt], av[a][jb], bn);
              }
            }
        acc_as_a(X[b][0], av[b][0]);
        acc_as_a(X[b][1], av[b][1]);
        if (ks == 0) {
          // o_b^T += v_b^T A_qk^T (block (0, 1) above the diagonal: zero, skipped); staged and stored
          // rounded once into out's dtype, the chunk's real tokens only.
          const float* bA = r2 + b * R2C + oA2;
#pragma unroll
          for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
            for (int jb = 0; jb <= nt; ++jb) {
              const float2 a2 = *reinterpret_cast<const float2*>(bA + (8 * nt + g8) * PA + 8 * jb + 2 * t4);
              const std::uint32_t ba[2] = {__float_as_uint(a2.x), __float_as_uint(a2.y)};
              mma_t<SIMT>(O[b][nt], av[b][jb], ba);
            }
#pragma unroll
            for (int e = 0; e < 4; ++e) so[(8 * nt + 2 * t4 + (e & 1)) * PO + g8 + 8 * (e >> 1)] = O[b][nt][e];
          }
          __syncwarp();
          const std::int64_t t0 = g0 + b * C;
          const int L = static_cast<int>(eos - t0 < C ? eos - t0 : C);
          const std::int64_t o0 = out_lane + t0 * p.out_st;
#pragma unroll
          for (int u = 0; u < C * 16 / 32; ++u) {
            const int i = 2 * u + lane / 16;
            if (i < L) st_any(p.out, p.out_dt, o0 + u * out_2st, so[i * PO + lane % 16]);
          }
          __syncwarp();
        }
      }
      // --- step 3: S^T <- S0^T * D(-1, m_eff) + sum_a v_a^T (Kd_a D) ---
      const float* dec = r2 + oDec2;  // the compose kernel put D(-1, m_eff) in the first chunk's decay
#pragma unroll
      for (int s = 0; s < NT; ++s) {
        const int cb = c0 + 8 * s;
        const float2 d2 = *reinterpret_cast<const float2*>(dec + cb + 2 * t4);
        S[s][0] = __fmul_rn(S[s][0], d2.x);
        S[s][1] = __fmul_rn(S[s][1], d2.y);
        S[s][2] = __fmul_rn(S[s][2], d2.x);
        S[s][3] = __fmul_rn(S[s][3], d2.y);
#pragma unroll
        for (int a = 0; a < M; ++a) {
          if (a >= me) continue;
          const float* bD = r2 + a * R2C;
#pragma unroll
          for (int jb = 0; jb < 2; ++jb) {
            const int tk = 8 * jb + 2 * t4;
            const std::uint32_t bk[2] = {__float_as_uint(bD[tk * PD + cb + g8]), __float_as_uint(bD[(tk + 1) * PD + cb + g8])};
            mma_t<SIMT>(S[s], av[a][jb], bk);
          }
        }
      }
    }
    // Every warp is done with R2 and with the partials: R2 takes the next group.
    __syncthreads();
    if (tid == 0 && gi + 1 < n_groups) issue_r2(gi + 1);
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

// One CTA an SM at K = 128 (the shared memory allows no second), so ptxas may use the registers.
template <int K, int KS>
__global__ void __launch_bounds__(kChunkThreads, 1) chunk_composed_kernel(const ChunkParams p) {
  if (p.simt) chunk_composed_chain<K, KS, true>(p);
  else chunk_composed_chain<K, KS, false>(p);
}

}  // namespace kparity::kernels::kda
