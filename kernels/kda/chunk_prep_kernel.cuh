#pragma once
// The first of the two chunked-KDA kernels (kda/chunk): everything of a chunk that does not depend
// on the state (docs/kda_chunk_kernel.md sections 3.1-3.8: loads, gate, beta, l2norm, cumulative
// gates, the per-token factors, A_kk and A_qk, w and u by forward substitution), for every chunk of
// every sequence and value head at once, written to the chunk's operand block (chunk_block: laid out
// as the chain kernel's shared buffer, so that the chain moves it with one bulk copy). All 16 rows
// of a block are written: the rows of slots past a sequence's end are zeros, as the chain needs
// them (a computed missing row could carry a NaN from an infinite input of a real row).
// The second kernel (chunk_kernel.cuh) walks each sequence's chunks in order and only multiplies
// with the state. The values are those the one-kernel form computed in the same order; the
// tensor-core operands are stored already rounded to tf32 (rounding is idempotent, so the second
// kernel's operands are unchanged).
//
// One CTA of 4 warps per (16-token window of the packed token axis, value head). Without cu_seqlens
// a window is a chunk of batch row b. With it, a CTA takes every chunk whose first token lies in its
// window (chunk starts of one sequence are 16 apart, so at most one a sequence; several short
// sequences can start in one window), found by a binary search of cu_seqlens.
#include "kda/chunk_mma.cuh"
#include "kda/chunk_plan.hpp"

namespace kparity::kernels::kda {

template <int K>
__global__ void __launch_bounds__(kChunkThreads) chunk_prep_kernel(const ChunkParams p) {
  using namespace chunk_dev;
  constexpr int C = kChunkTokens, PK = chunk_pitch(K), PA = chunk_pitch(C);
  const int V = static_cast<int>(p.V), PV = static_cast<int>(chunk_pitch(p.V));
  extern __shared__ float smem[];
  // Carved as chunk_prep_smem_floats (chunk_plan.hpp) sizes them.
  float* s_q = smem;          // [C][PK] q_s (doc 3.4)
  float* s_k = s_q + C * PK;  // k_hat
  float* s_g = s_k + C * PK;  // g (doc 3.2)
  float* s_G = s_g + C * PK;  // Gc, then exp(Gc - ref)
  float* s_R = s_G + C * PK;  // Rs, then exp(ref - Gc)
  float* s_W = s_R + C * PK;  // x (doc 3.6)
  float* s_v = s_W + C * PK;  // [C][PV] v, then u
  float* s_Akk = s_v + C * PV;
  float* s_Aqk = s_Akk + C * PA;
  float* s_beta = s_Aqk + C * PA;  // [C]

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t hv = blockIdx.y, h = hv / p.G;
  constexpr ChunkBlock kB = chunk_block(K, 16);  // the shared part's offsets do not depend on VT
  constexpr int PWs = chunk_pw(K), PDs = chunk_pd(K), PAs = chunk_pa();
  const int VT = static_cast<int>(p.vtile), PU = static_cast<int>(chunk_pu(p.vtile));
  const std::int64_t UB = kChunkTokens * chunk_pu(p.vtile);  // floats of one V tile's u
  const float A_log = (p.gate_in_kernel && p.has_A_log) ? ld_any(p.A_log, p.A_dt, hv * p.A_s0) : 0.f;

  // One chunk: tokens t0 .. t0 + L - 1 of batch row b (L <= 16; the missing slots are zeros), its
  // operand block `id`.
  const auto prep = [&](std::int64_t b, std::int64_t t0, int L, std::int64_t id) {
    float* blk = p.ws + (id * p.HV + hv) * p.ws_blk;
    // --- doc 3.1-3.3: loads (batches of kLoadBatch a thread, all issued before any is used) ---
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
#pragma unroll 1
    for (int u0 = 0; u0 < C * V; u0 += 8 * kChunkThreads) {
      std::uint32_t rv[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int idx = u0 + tid + u * kChunkThreads, i = idx / V, j = idx % V;
        rv[u] = (idx < C * V && i < L) ? ld_raw(p.v, p.v_dt, b * p.v_sb + (t0 + i) * p.v_st + hv * p.v_sh + j * p.v_sv)
                                       : 0u;
      }
#pragma unroll
      for (int u = 0; u < 8; ++u) {
        const int idx = u0 + tid + u * kChunkThreads;
        if (idx < C * V) s_v[(idx / V) * PV + idx % V] = raw_f(rv[u], p.v_dt);
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
    // --- doc 3.5-3.7: cumulative gates and per-token factors, a thread per channel; Qg, Kd and
    // decay go straight to the workspace (coalesced: consecutive threads, consecutive channels) ---
    int unsafe = 0;
    for (int c = tid; c < K; c += kChunkThreads) {
      float acc = s_g[c];
      s_G[c] = acc;
      for (int i = 1; i < C; ++i) {
        acc = __fadd_rn(acc, s_g[i * PK + c]);
        s_G[i * PK + c] = acc;
      }
      blk[kB.oDec + c] = expf(acc);  // decay
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
        blk[kB.oQ + i * PWs + c] = i < L ? __uint_as_float(tf32(__fmul_rn(s_q[i * PK + c], eG))) : 0.f;
        blk[kB.oD + i * PDs + c] = i < L ? __uint_as_float(tf32(__fmul_rn(kh, expf(s_R[i * PK + c])))) : 0.f;
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
      // Warp w: matrix w / 2 (A_kk, A_qk), columns j of block w % 2. Kp = k_hat exp(Gc - ref),
      // Qp = q_s exp(Gc - ref) and Km = k_hat exp(ref - Gc) are formed as the fragments load.
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
    // A_qk's rows to the block (tf32, the second kernel's operand).
    for (int pi = tid; pi < C * C; pi += kChunkThreads) {
      const int i = pi / C, j = pi % C;
      blk[kB.oA + i * PAs + j] = i < L ? __uint_as_float(tf32(s_Aqk[i * PA + j])) : 0.f;
    }
    // --- doc 3.8: w and u by forward substitution, a thread per column; -w (tf32) and u (fp32) to
    // the workspace ---
    for (int col = tid; col < K + V; col += kChunkThreads) {
      const bool is_w = col < K;
      const int cc = is_w ? col : col - K;
      float xs[C];
#pragma unroll
      for (int i = 0; i < C; ++i) {
        float acc = is_w ? s_W[i * PK + cc] : __fmul_rn(s_beta[i], s_v[i * PV + cc]);
#pragma unroll
        for (int j = 0; j < i; ++j) acc = fmaf(-s_Akk[i * PA + j], xs[j], acc);
        xs[i] = acc;
        if (is_w) blk[kB.oW + i * PWs + cc] = i < L ? __uint_as_float(tf32(-acc)) : 0.f;
        else blk[kB.shared + (cc / VT) * UB + i * PU + cc % VT] = i < L ? acc : 0.f;
      }
    }
    // The next chunk of this CTA (several short sequences in one window) rewrites the tables.
    __syncthreads();
  };

  if (!p.has_cu) {
    const std::int64_t b = blockIdx.x / p.n_windows, t0 = (blockIdx.x % p.n_windows) * C;
    prep(b, t0, static_cast<int>(p.T - t0 < C ? p.T - t0 : C), chunk_first_block(false, b, 0, p.n_windows) + t0 / C);
    return;
  }
  // The first sequence that ends after the window's start, then every sequence that starts before
  // its end (the launcher's contract checks cu_seqlens; the bounds below keep a bad one in memory).
  const std::int64_t w0 = static_cast<std::int64_t>(blockIdx.x) * C, w1 = w0 + C;
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
    const std::int64_t t0 = bos >= w0 ? bos : bos + (w0 - bos + C - 1) / C * C;
    if (t0 < w1 && t0 < eos)
      prep(0, t0, static_cast<int>(eos - t0 < C ? eos - t0 : C), chunk_first_block(true, n, bos, p.n_windows) + (t0 - bos) / C);
  }
}

}  // namespace kparity::kernels::kda
