#pragma once
// The chunked KDA prefill kernel (kda/chunk): docs/kda_chunk_kernel.md is its algorithm and precision
// model, section by section (the "doc 3.n" tags below are its numbered rounding points).
//
// One CTA of 4 warps per (sequence, value head, V tile), chunks of 16 tokens in order. Warp w holds
// the state slice S^T[16 value columns][K / KS channels] as m16n8k8 accumulator fragments (rows =
// value columns, columns = channels), kept in registers for the whole sequence. The three products
// with the state use that fragment directly as the A operand: a thread's accumulator holds channels
// 2t and 2t+1 of each 8-channel block where an A fragment wants t and t+4, so those products run
// over the channel index in the permuted order (2t, 2t+1) <-> (t, t+4) inside each block and load
// their B operands in the same order. Summing over a permuted index changes nothing but the order
// the hardware adds the 8 products of one step.
#include "kda/chunk_plan.hpp"
#include "kda/device.cuh"

namespace kparity::kernels::kda::chunk_dev {

using namespace kparity::kernels::kda::dev;

__device__ __forceinline__ std::uint32_t tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}

// d += a b, m16n8k8, tf32 operands, fp32 accumulators. Fragments (g = lane / 4, t = lane % 4):
// a = A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]; b = B[t][g], B[t+4][g];
// d = D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1].
__device__ __forceinline__ void mma_hw(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// The same product from the fragment layout written above, by shuffles and fmaf in k order
// (KPARITY_CHUNK_SIMT): if the layout above were wrong, this would still be right and mma_hw not.
__device__ __forceinline__ void mma_emul(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    const int src = g * 4 + (kk & 3);
    const float alo = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? a[0] : a[2], src));
    const float ahi = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? a[1] : a[3], src));
    const float b0 = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? b[0] : b[1], (2 * t) * 4 + (kk & 3)));
    const float b1 = __uint_as_float(__shfl_sync(0xffffffffu, kk < 4 ? b[0] : b[1], (2 * t + 1) * 4 + (kk & 3)));
    d[0] = fmaf(alo, b0, d[0]);
    d[1] = fmaf(alo, b1, d[1]);
    d[2] = fmaf(ahi, b0, d[2]);
    d[3] = fmaf(ahi, b1, d[3]);
  }
}
__device__ __forceinline__ void mma(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2],
                                    int simt) {
  if (simt) mma_emul(d, a, b);
  else mma_hw(d, a, b);
}

// An accumulator fragment used as the A operand of a product over its columns (permuted order, see
// the file comment): A[g][t] = D[g][2t], A[g+8][t] = D[g+8][2t], A[g][t+4] = D[g][2t+1], ...
__device__ __forceinline__ void acc_as_a(const float (&d)[4], std::uint32_t (&a)[4]) {
  a[0] = tf32(d[0]);
  a[1] = tf32(d[2]);
  a[2] = tf32(d[1]);
  a[3] = tf32(d[3]);
}

}  // namespace kparity::kernels::kda::chunk_dev

namespace kparity::kernels::kda {

template <int K, int KS>
__global__ void __launch_bounds__(kChunkThreads) chunk_kernel(const ChunkParams p) {
  using namespace chunk_dev;
  constexpr int C = kChunkTokens, NVG = kChunkWarps / KS, VT = 16 * NVG, KW = K / KS, NT = KW / 8;
  static_assert(KW % 8 == 0 && KW >= 8, "a warp's channel slice is whole 8-channel mma steps");
  constexpr int PK = chunk_pitch(K), PV = chunk_pitch(VT), PA = chunk_pitch(C);
  extern __shared__ float smem[];
  // Carved as chunk_smem_floats (chunk_plan.hpp) sizes them.
  float* s_q = smem;            // [C][PK] q_s (doc 3.4)
  float* s_k = s_q + C * PK;    // k_hat
  float* s_g = s_k + C * PK;    // g (doc 3.2)
  float* s_G = s_g + C * PK;    // Gc, then exp(Gc - ref)
  float* s_R = s_G + C * PK;    // Rs, then exp(ref - Gc)
  float* s_W = s_R + C * PK;    // x, then -w (doc 3.6, 3.8)
  float* s_Qg = s_W + C * PK;   // doc 3.6
  float* s_Kd = s_Qg + C * PK;
  float* s_v = s_Kd + C * PK;   // [C][PV] v of the tile
  float* s_u = s_v + C * PV;    // u
  float* s_o = s_u + C * PV;    // outputs, stored coalesced
  float* s_Akk = s_o + C * PV;  // [C][PA]
  float* s_Aqk = s_Akk + C * PA;
  float* s_beta = s_Aqk + C * PA;  // [C]
  float* s_decay = s_beta + C;     // [K]
  float* s_red = s_decay + 2 * K;  // [2][warps][16][16] split-K partials (after decay and a spare [K])

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vti = bid % p.n_vtiles, nh = bid / p.n_vtiles;
  const std::int64_t hv = nh % p.HV, n = nh / p.HV, h = hv / p.G, v0 = vti * VT;
  // Without cu_seqlens batch row n is sequence n; with it the one row holds the N sequences.
  const std::int64_t b = p.has_cu ? 0 : n;
  const std::int64_t bos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0) : 0;
  const std::int64_t eos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0) : p.T;
  const int vg = warp % NVG, ks = warp / NVG;
  const std::int64_t vc0 = v0 + 16 * vg;  // the warp's first value column
  const bool active = vc0 < p.V;          // V is a multiple of 16: a group is whole or absent
  const int c0 = ks * KW;                 // the warp's first channel

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
  const float A_log = (p.gate_in_kernel && p.has_A_log) ? ld_any(p.A_log, p.A_dt, hv * p.A_s0) : 0.f;

  for (std::int64_t t0 = bos; t0 < eos; t0 += C) {
    const int L = static_cast<int>(eos - t0 < C ? eos - t0 : C);
    // --- doc 3.1-3.3: loads, gate, beta; missing slots are zeros ---
    // Batches of kLoadBatch elements a thread, every load of a batch issued before any is used
    // (ld_raw, as the decode kernels): a load-convert-store loop waits a memory round trip per element.
    constexpr int kPer = C * K / kChunkThreads, kLoadBatch = kPer < 8 ? kPer : 8;
    static_assert(kPer % kLoadBatch == 0, "whole batches");
#pragma unroll 1
    for (int u0 = 0; u0 < kPer; u0 += kLoadBatch) {
      std::uint32_t rq[kLoadBatch], rk[kLoadBatch], rg[kLoadBatch], rb[kLoadBatch];
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        const int idx = tid + (u0 + u) * kChunkThreads, i = idx / K, c = idx % K;
        const std::int64_t tok = t0 + i;
        rq[u] = rk[u] = rg[u] = rb[u] = 0;  // missing slots: +0 in every dtype
        if (i < L) {
          rq[u] = ld_raw(p.q, p.q_dt, b * p.q_sb + tok * p.q_st + h * p.q_sh + c * p.q_sk);
          rk[u] = ld_raw(p.k, p.k_dt, b * p.k_sb + tok * p.k_st + h * p.k_sh + c * p.k_sk);
          rg[u] = ld_raw(p.g, p.g_dt, b * p.g_sb + tok * p.g_st + hv * p.g_sh + c * p.g_sk);
          if (p.gate_in_kernel && p.has_dt_bias) rb[u] = ld_raw(p.dt_bias, p.dtb_dt, hv * p.dtb_sh + c * p.dtb_sk);
        }
      }
#pragma unroll
      for (int u = 0; u < kLoadBatch; ++u) {
        const int idx = tid + (u0 + u) * kChunkThreads, i = idx / K, c = idx % K;
        float g = raw_f(rg[u], p.g_dt);
        if (p.gate_in_kernel && i < L) {
          const float x = g + (p.has_dt_bias ? raw_f(rb[u], p.dtb_dt) : 0.f);
          g = gate(x, A_log, p.has_lower_bound, p.lower_bound);
        }
        s_q[i * PK + c] = raw_f(rq[u], p.q_dt);
        s_k[i * PK + c] = raw_f(rk[u], p.k_dt);
        s_g[i * PK + c] = g;
      }
    }
    {
      constexpr int kPerV = C * VT / kChunkThreads;  // 2, 4 or 8
      std::uint32_t rv[kPerV];
#pragma unroll
      for (int u = 0; u < kPerV; ++u) {
        const int idx = tid + u * kChunkThreads, i = idx / VT, j = idx % VT;
        const std::int64_t col = v0 + j;
        rv[u] = (i < L && col < p.V) ? ld_raw(p.v, p.v_dt, b * p.v_sb + (t0 + i) * p.v_st + hv * p.v_sh + col * p.v_sv)
                                     : 0u;
      }
#pragma unroll
      for (int u = 0; u < kPerV; ++u) {
        const int idx = tid + u * kChunkThreads;
        s_v[(idx / VT) * PV + idx % VT] = raw_f(rv[u], p.v_dt);
      }
    }
    if (tid < C) {
      float be = 0.f;
      if (tid < L) {
        be = ld_any(p.beta, p.beta_dt, b * p.beta_sb + (t0 + tid) * p.beta_st + hv * p.beta_sh);
        if (p.beta_mode == kBetaSigmoid) be = sigmoid(be);
        else if (p.beta_mode == kBetaTwiceSigmoid) be = 2.f * sigmoid(be);
      }
      s_beta[tid] = be;
    }
    __syncthreads();
    // --- doc 3.4: l2norm and scale; warp w owns tokens w, w + 4, ... ---
    for (int i = warp; i < C; i += kChunkWarps) {
      float nq = 1.f, nk = 1.f;
      if (p.l2norm) {
        float sq = 0.f, sk = 0.f;
        for (int c = lane; c < K; c += 32) {
          const float q = s_q[i * PK + c], k = s_k[i * PK + c];
          sq = fmaf(q, q, sq);
          sk = fmaf(k, k, sk);
        }
        sq = group_sum<32>(sq);
        sk = group_sum<32>(sk);
        nq = sqrtf(sq + 1e-6f);
        nk = sqrtf(sk + 1e-6f);
      }
      for (int c = lane; c < K; c += 32) {
        const float q = s_q[i * PK + c];
        s_q[i * PK + c] = __fmul_rn(p.l2norm ? __fdiv_rn(q, nq) : q, p.scale);
        if (p.l2norm) s_k[i * PK + c] = __fdiv_rn(s_k[i * PK + c], nk);
      }
    }
    __syncthreads();
    // --- doc 3.5-3.7: cumulative gates and per-token factors, a thread per channel ---
    int unsafe = 0;
    for (int c = tid; c < K; c += kChunkThreads) {
      float acc = s_g[c];
      s_G[c] = acc;
      for (int i = 1; i < C; ++i) {
        acc = __fadd_rn(acc, s_g[i * PK + c]);
        s_G[i * PK + c] = acc;
      }
      s_decay[c] = expf(acc);
      float r = 0.f;
      s_R[(C - 1) * PK + c] = 0.f;
      for (int j = C - 2; j >= 0; --j) {
        r = __fadd_rn(r, s_g[(j + 1) * PK + c]);
        s_R[j * PK + c] = r;
      }
      const float ref = s_G[7 * PK + c];
      for (int i = 0; i < C; ++i) {
        const float Gc = s_G[i * PK + c], kh = s_k[i * PK + c];
        const float eG = expf(Gc);
        s_Qg[i * PK + c] = __fmul_rn(s_q[i * PK + c], eG);
        s_Kd[i * PK + c] = __fmul_rn(kh, expf(s_R[i * PK + c]));
        s_W[i * PK + c] = __fmul_rn(s_beta[i], __fmul_rn(kh, eG));
        const float d = __fsub_rn(Gc, ref);
        unsafe |= !(fabsf(d) <= kChunkSafeSpan);
        // Gc and Rs are not read after this loop: their slots take the two decay factors of the
        // factorised A (doc 3.7), each expf formed once instead of in every fragment load.
        s_G[i * PK + c] = expf(d);
        s_R[i * PK + c] = expf(__fsub_rn(ref, Gc));
      }
    }
    const bool safe = !__syncthreads_or(unsafe);
    // --- doc 3.7: A_kk and A_qk ---
    if (safe) {
      // Warp w: matrix w / 2 (A_kk, A_qk), columns j of block w % 2. The factors Kp = k_hat
      // exp(Gc - ref), Qp = q_s exp(Gc - ref) (s_G now holds exp(Gc - ref)) and Km = k_hat
      // exp(ref - Gc) (s_R) are formed as the fragments are loaded: three fewer tables.
      const float* Xa = warp < 2 ? s_k : s_q;
      const int jb = 8 * (warp & 1);
      const auto fp = [&](const float* x, int i, int c) { return tf32(__fmul_rn(x[i * PK + c], s_G[i * PK + c])); };
      const auto fm = [&](int j, int c) { return tf32(__fmul_rn(s_k[j * PK + c], s_R[j * PK + c])); };
      float d[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll 4
      for (int kb = 0; kb < K; kb += 8) {
        const std::uint32_t a[4] = {fp(Xa, g8, kb + t4), fp(Xa, g8 + 8, kb + t4), fp(Xa, g8, kb + t4 + 4),
                                    fp(Xa, g8 + 8, kb + t4 + 4)};
        const std::uint32_t bb[2] = {fm(jb + g8, kb + t4), fm(jb + g8, kb + t4 + 4)};
        mma(d, a, bb, p.simt);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = g8 + 8 * (e >> 1), j = jb + 2 * t4 + (e & 1);
        if (warp < 2) s_Akk[i * PA + j] = j < i ? __fmul_rn(s_beta[i], d[e]) : 0.f;
        else s_Aqk[i * PA + j] = j <= i ? d[e] : 0.f;
      }
    } else {
      for (int pi = tid; pi < C * C; pi += kChunkThreads) {
        const int i = pi / C, j = pi % C;
        float ak = 0.f, aq = 0.f;
        if (j <= i) {
          for (int c = 0; c < K; ++c) {
            float P = 0.f;
            for (int m = j + 1; m <= i; ++m) P = __fadd_rn(P, s_g[m * PK + c]);
            const float e = expf(P), kj = s_k[j * PK + c];
            aq = fmaf(__fmul_rn(s_q[i * PK + c], e), kj, aq);
            if (j < i) ak = fmaf(__fmul_rn(s_k[i * PK + c], e), kj, ak);
          }
        }
        s_Akk[i * PA + j] = j < i ? __fmul_rn(s_beta[i], ak) : 0.f;
        s_Aqk[i * PA + j] = aq;
      }
    }
    __syncthreads();
    // --- doc 3.8: w and u by forward substitution, a thread per column ---
    for (int col = tid; col < K + VT; col += kChunkThreads) {
      const bool is_w = col < K;
      const int cc = is_w ? col : col - K;
      float xs[C];
#pragma unroll
      for (int i = 0; i < C; ++i) {
        float acc = is_w ? s_W[i * PK + cc] : __fmul_rn(s_beta[i], s_v[i * PV + cc]);
#pragma unroll
        for (int j = 0; j < i; ++j) acc = fmaf(-s_Akk[i * PA + j], xs[j], acc);
        xs[i] = acc;
        if (is_w) s_W[i * PK + cc] = -acc;
        else s_u[i * PV + cc] = acc;
      }
    }
    __syncthreads();
    // --- doc 3.9-3.10: the warp's partial v_new^T and o^T over its channel slice ---
    float X[2][4], O[2][4];
    const int vr = 16 * vg;  // the warp's first column in the tile
    if (active) {
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int tok = 8 * nt + 2 * t4 + (e & 1), col = vr + g8 + 8 * (e >> 1);
          X[nt][e] = ks == 0 ? s_u[tok * PV + col] : 0.f;
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
          const std::uint32_t bw[2] = {tf32(s_W[tok * PK + ch]), tf32(s_W[tok * PK + ch + 1])};
          mma(X[nt], a, bw, p.simt);
          const std::uint32_t bq[2] = {tf32(s_Qg[tok * PK + ch]), tf32(s_Qg[tok * PK + ch + 1])};
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
      // doc 3.10: o^T += v_new^T A_qk^T (block (0, 1) is above the diagonal: zero, skipped).
      if (ks == 0) {
#pragma unroll
        for (int nt = 0; nt < 2; ++nt) {
#pragma unroll
          for (int jb = 0; jb <= nt; ++jb) {
            const int row = 8 * nt + g8, tk = 8 * jb + 2 * t4;
            const std::uint32_t ba[2] = {tf32(s_Aqk[row * PA + tk]), tf32(s_Aqk[row * PA + tk + 1])};
            mma(O[nt], av[jb], ba, p.simt);
          }
#pragma unroll
          for (int e = 0; e < 4; ++e)
            s_o[(8 * nt + 2 * t4 + (e & 1)) * PV + vr + g8 + 8 * (e >> 1)] = O[nt][e];
        }
      }
      // doc 3.11: S^T <- S^T * decay + v_new^T Kd.
#pragma unroll
      for (int s = 0; s < NT; ++s) {
        const int cb = c0 + 8 * s;
#pragma unroll
        for (int e = 0; e < 4; ++e) S[s][e] = __fmul_rn(S[s][e], s_decay[cb + 2 * t4 + (e & 1)]);
#pragma unroll
        for (int jb = 0; jb < 2; ++jb) {
          const int tk = 8 * jb + 2 * t4;
          const std::uint32_t bk[2] = {tf32(s_Kd[tk * PK + cb + g8]), tf32(s_Kd[(tk + 1) * PK + cb + g8])};
          mma(S[s], av[jb], bk, p.simt);
        }
      }
    }
    __syncthreads();
    // --- outputs of the chunk's real tokens, rounded once into out's dtype ---
    for (int idx = tid; idx < L * VT; idx += kChunkThreads) {
      const int i = idx / VT, j = idx % VT;
      const std::int64_t col = v0 + j;
      if (col < p.V)
        st_any(p.out, p.out_dt, b * p.out_sb + (t0 + i) * p.out_st + hv * p.out_sh + col * p.out_sv, s_o[i * PV + j]);
    }
    // The next chunk's loads write only tables this loop does not read (s_o is rewritten after
    // three more barriers).
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
