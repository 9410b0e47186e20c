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
// A chunk's operand block (-w, Qg, Kd, A_qk, decay, and this CTA's tile of u), laid out by the prep
// kernel as this kernel's buffer, arrives by two bulk copies (one instruction each, issued by one
// thread) on the buffer's mbarrier; kChunkBuffers buffers keep the next chunks' copies in flight while
// one chunk's products run: one barrier a chunk (two with KS > 1). The first form of this kernel
// loaded rows with 16-byte cp.async and their address arithmetic (13 copies a thread a chunk): on the
// H200 that arithmetic, not memory, set its pace (ncu 2026-12-05: 1,440 instructions a warp a chunk,
// IPC 1.2, 5 us a chunk at 1x8192, H = 32).
//
// Two forms, one template flag (SPREAD), chosen per launch by ChunkParams::form (KPARITY_CHUNK_FORM,
// read in chunk.cpp); docs/kda_chunk_kernel.md section 5:
// - verified (SPREAD = false, the default; the form the GPU tests, memcheck and racecheck passed):
//   4 warps; thread 0 issues the copies; with KS > 1 the ks = 0 warp of a column group alone does
//   the A_qk products, the output staging and the out stores.
// - spread (SPREAD = true, not yet run on a GPU): a fifth, producer warp whose lane 0 issues every
//   copy and which does nothing else (no products, no global loads or stores, no shared memory but
//   the barriers), so its fence.proxy.async (SASS MEMBAR.ALL.CTA, which waits for the issuing warp's
//   own outstanding memory operations) has no out stores to wait for; and with KS > 1 the output
//   work of a column group is spread over its warps: warp ks takes token block nt (tokens 8 nt ..
//   8 nt + 7) where nt % KS == ks, and stages and stores those tokens itself. The SASS profile of
//   2026-12-05 (H100) put 22% of the chain's stall samples at the per-chunk CTA barrier, the other
//   warps waiting for the ks = 0 warps and thread 0's fence. Bits: every output element is the same
//   mma on the same operands in the same order as in the verified form (after the split-K sum every
//   warp of a group holds the same X and O, summed in the same slice order), so out and final_state
//   are bit-identical between the forms and the precision model (tests/gpu_kda/chunk_model.cpp, the
//   reference's profile) is the same.
#include "common/bulk_copy.cuh"
#include "kda/chunk_mma.cuh"
#include "kda/chunk_plan.hpp"

namespace kparity::kernels::kda {

// The CTA barrier: __syncthreads (bar.sync, .aligned: every thread at the same instruction) in the
// verified form; in the spread form, where the producer warp runs its own loop, barrier.sync without
// .aligned, which PTX allows at different instructions (the same barrier 0, all threads of the CTA,
// the same memory ordering).
template <bool SPREAD>
__device__ __forceinline__ void cta_sync() {
  if constexpr (SPREAD) asm volatile("barrier.sync 0;\n" ::: "memory");
  else __syncthreads();
}

// The chain's body; SIMT (KPARITY_CHUNK_SIMT) picks the mma emulation once per launch instead of at
// every product; SPREAD the form (file comment).
template <int K, int KS, bool SIMT, bool SPREAD>
__device__ __forceinline__ void chunk_chain(const ChunkParams& p) {
  using namespace chunk_dev;
  namespace kd = kernels::dev;
  constexpr int C = kChunkTokens, NVG = kChunkWarps / KS, VT = 16 * NVG, KW = K / KS, NT = KW / 8;
  static_assert(KW % 8 == 0 && KW >= 8, "a warp's channel slice is whole 8-channel mma steps");
  constexpr int PW = chunk_pw(K), PD = chunk_pd(K), PA = chunk_pa(), PU = chunk_pu(VT), PO = chunk_out_pitch();
  constexpr int BUF = chunk_buf_floats(K, VT), NB = kChunkBuffers;
  constexpr ChunkBlock kB = chunk_block(K, VT);
  constexpr int oW = kB.oW, oQ = kB.oQ, oD = kB.oD, oA = kB.oA, oDec = kB.oDec, oU = kB.shared;
  static_assert(oU + C * PU == BUF && BUF % 4 == 0 && oU % 4 == 0, "16-byte aligned tables and copies");
  extern __shared__ __align__(16) float smem[];
  float* s_o = smem + NB * BUF;                      // [warps][16 tokens][PO]
  float* s_red = s_o + kChunkWarps * C * PO;         // [2][warps][16][16] split-K partials
  std::uint64_t* s_bar = reinterpret_cast<std::uint64_t*>(s_red + 2 * kChunkWarps * 256);  // [NB]

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
  // V is a multiple of 16: a group is whole or absent. The spread form's producer warp (warp
  // kChunkWarps) holds no columns: inactive, it only meets the barriers and issues the copies.
  const bool active = (!SPREAD || warp < kChunkWarps) && vc0 < p.V;
  // Token block nt's output products, staging and stores: the group's ks = 0 warp in the verified
  // form, warp ks = nt % KS in the spread form (below: a warp with ks >= 2 owns no block).
  const auto mine = [&](int nt) { return !SPREAD || KS == 1 || nt % KS == ks; };
  const int c0 = ks * KW;                 // the warp's first channel
  // out's offset of this lane's first element (token 0 of the sequence's row, see the store below).
  const std::int64_t out_lane = b * p.out_sb + (lane / 16) * p.out_st + hv * p.out_sh + (vc0 + lane % 16) * p.out_sv;
  const std::int64_t out_2st = 2 * p.out_st;

  // The chunk blocks of this sequence: consecutive, from chunk_first_block.
  const float* blk0 = p.ws + (chunk_first_block(p.has_cu, n, bos, p.n_windows) * p.HV + hv) * p.ws_blk;
  const std::int64_t blk_stride = p.HV * p.ws_blk;
  const int n_chunks = static_cast<int>((eos - bos + C - 1) / C);
  // One thread (thread 0 in the verified form, which also stores out; the producer warp's lane 0 in
  // the spread form) issues chunk ci's two copies into buffer ci % NB. The block's earlier reads of that
  // buffer (a barrier ago) are ordered before the async proxy's writes by the fence.
  const auto issue = [&](int ci) {
    const int slot = ci % NB;
    const std::uint32_t bar = kd::smem_u32(s_bar + slot);
    const float* src = blk0 + ci * blk_stride;
    float* dst = smem + slot * BUF;
    kd::fence_proxy_async_smem();
    kd::mbar_arrive_expect_tx(bar, 4u * (oU + C * PU));
    kd::bulk_g2s(kd::smem_u32(dst), reinterpret_cast<std::uint64_t>(src), 4u * oU, bar);
    kd::bulk_g2s(kd::smem_u32(dst + oU), reinterpret_cast<std::uint64_t>(src + oU + vti * (C * PU)), 4u * (C * PU), bar);
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
  if (tid == 0) {
    for (int s = 0; s < NB; ++s) kd::mbar_init(kd::smem_u32(s_bar + s), 1);
    kd::mbar_init_fence();
  }
  __syncthreads();
  if constexpr (SPREAD) {
    // The producer warp: it meets the compute warps' barriers one for one (one a chunk, two with
    // KS > 1; cta_sync: the non-.aligned barrier, since the two kinds of warp reach it at different
    // instructions) and after each chunk's first barrier issues the copy that refills the buffer
    // every warp is now done with. It waits for no copy: that its re-arming of a buffer's mbarrier
    // follows the phase's completion is ordered by that barrier, which the compute warps reach only
    // after waiting on the phase.
    if (warp == kChunkWarps) {
      if (lane == 0)
        for (int ci = 0; ci < NB - 1 && ci < n_chunks; ++ci) issue(ci);
      for (int ci = 0; ci < n_chunks; ++ci) {
        cta_sync<true>();
        if (lane == 0 && ci + NB - 1 < n_chunks) issue(ci + NB - 1);
        if constexpr (KS > 1) cta_sync<true>();
      }
      return;
    }
  } else if (tid == 0) {
    for (int ci = 0; ci < NB - 1 && ci < n_chunks; ++ci) issue(ci);
  }
  int ci = 0;
  for (std::int64_t t0 = bos; t0 < eos; t0 += C, ++ci) {
    const int L = len(t0);
    kd::mbar_wait(kd::smem_u32(s_bar + ci % NB), static_cast<std::uint32_t>((ci / NB) & 1));
    // Every warp is done with the previous chunk's buffer, which the copy issued next refills.
    cta_sync<SPREAD>();
    if (!SPREAD && tid == 0 && ci + NB - 1 < n_chunks) issue(ci + NB - 1);
    const float* bf = smem + (ci % NB) * BUF;
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
          mma_t<SIMT>(X[nt], a, bw);
          const float2 q2 = *reinterpret_cast<const float2*>(bQ + tok * PW + ch);
          const std::uint32_t bq[2] = {__float_as_uint(q2.x), __float_as_uint(q2.y)};
          mma_t<SIMT>(O[nt], a, bq);
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
      cta_sync<SPREAD>();
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
      // warp stages its 16 x 16 outputs (the spread form: its token blocks' rows of them) and stores
      // the chunk's real tokens, rounded once into out's dtype (rows of 16 columns). In either form
      // token block nt gets the same mma steps on the same operands, jb = 0 then 1: the same bits.
      // (The test stays here, not hoisted: hoisted, it changed the verified form's SASS.)
      if (SPREAD ? ks < 2 : ks == 0) {
        float* so = s_o + warp * C * PO;
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
          if (!mine(nt)) continue;
#pragma unroll
          for (int jb = 0; jb <= nt; ++jb) {
            const int row = 8 * nt + g8, tk = 8 * jb + 2 * t4;
            const float2 a2 = *reinterpret_cast<const float2*>(bA + row * PA + tk);
            const std::uint32_t ba[2] = {__float_as_uint(a2.x), __float_as_uint(a2.y)};
            mma_t<SIMT>(O[nt], av[jb], ba);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e) so[(8 * nt + 2 * t4 + (e & 1)) * PO + g8 + 8 * (e >> 1)] = O[nt][e];
        }
        __syncwarp();
        // Lane l stores column l % 16 of tokens 2u + l / 16: one base offset a chunk, one add a store.
        const std::int64_t o0 = out_lane + t0 * p.out_st;
#pragma unroll
        for (int u = 0; u < C * 16 / 32; ++u) {
          const int i = 2 * u + lane / 16;  // token block i / 8 = u / 4
          if (mine(u / 4) && i < L) st_any(p.out, p.out_dt, o0 + u * out_2st, so[i * PO + lane % 16]);
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
          mma_t<SIMT>(S[s], av[jb], bk);
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

// The verified form keeps its launch bounds (128 threads, no minimum: minBlocks 0 is "unset", the
// same PTX); the spread form asks for chunk_chain_min_ctas (chunk_plan.hpp says why).
template <int K, int KS, bool SPREAD>
__global__ void __launch_bounds__(chunk_chain_threads(SPREAD), SPREAD ? chunk_chain_min_ctas(K, 64 / KS) : 0)
    chunk_kernel(const ChunkParams p) {
  if (p.simt) chunk_chain<K, KS, true, SPREAD>(p);
  else chunk_chain<K, KS, false, SPREAD>(p);
}

}  // namespace kparity::kernels::kda
