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
//
// Two instances a head dim (KPARITY_CHUNK_PREP, read in chunk.cpp; docs/kda_chunk_kernel.md section 5):
// FAST = false, the generic one (dtype codes, vector flags and V read at run time; every call the
// FAST one does not fit), and FAST = true (the default where it fits, since 2026-12-06) for the
// common call (chunk_prep_fast_fits: bf16 q, k and v, fp32 g, every row of the four 16-byte
// vectorisable, V == K; the bench's and fla's prefill calls). The FAST instance is this
// same source with those run-time values replaced by the constants the launcher proved equal to
// them, so the compiler drops the dtype branches and divides by constants: the same loads and the
// same arithmetic per element in the same order, the same bits (the check mode compares them).
#include "kda/chunk_mma.cuh"
#include "kda/chunk_plan.hpp"

namespace kparity::kernels::kda {

// One input's rows 0 .. L-1 of a chunk (tokens t0 + i, row i `st` elements after `row0`) of one
// head, [.., n] with channel stride `sc`, widened exactly to fp32 into dst[i * pitch + c]; rows
// L .. 15 are zeros. `fix` marks the gate input, whose real elements go through the gate function.
// `vec`: the launcher proved every row 16-byte aligned with unit channel stride, so a lane loads 16
// bytes a step (8 f16/bf16 or 4 fp32 values); else one element a step.
struct StageSrc {
  float* dst;
  const void* src;
  std::int64_t row0, st, sc;
  int pitch, n, dt, vec, fix;
};
inline constexpr int kStageBatch = 2;  // loads of one input a thread in flight per round
__device__ __forceinline__ int stage_epv(const StageSrc& s) {
  return s.vec ? ((s.dt != kF16 && s.dt != kBF16) ? 4 : 8) : 1;
}
// Every input's loads of a round are issued before the first is converted: one memory round trip a
// round for all of them (K = V = 128 with 16-bit or fp32 inputs: one round).
template <int NS, class Fix>
__device__ __forceinline__ void stage_rows(const StageSrc (&s)[NS], int L, Fix fix) {
  using namespace chunk_dev;
  constexpr int kStep = kStageBatch * kChunkThreads;
  int rounds = 0;
#pragma unroll
  for (int k = 0; k < NS; ++k) {
    const int r = (kChunkTokens * (s[k].n / stage_epv(s[k])) + kStep - 1) / kStep;
    rounds = r > rounds ? r : rounds;
  }
#pragma unroll 1
  for (int r = 0; r < rounds; ++r) {
    uint4 raw[NS][kStageBatch];
#pragma unroll
    for (int k = 0; k < NS; ++k) {
      const int epv = stage_epv(s[k]), vpr = s[k].n / epv, total = kChunkTokens * vpr;
      const int esz = (s[k].dt != kF16 && s[k].dt != kBF16) ? 4 : 2;
#pragma unroll
      for (int u = 0; u < kStageBatch; ++u) {
        const int j = r * kStep + u * kChunkThreads + threadIdx.x, i = j / vpr, c = (j % vpr) * epv;
        raw[k][u] = make_uint4(0u, 0u, 0u, 0u);
        if (j < total && i < L) {
          const std::int64_t e0 = s[k].row0 + i * s[k].st;
          if (s[k].vec) raw[k][u] = *reinterpret_cast<const uint4*>(static_cast<const char*>(s[k].src) + (e0 + c) * esz);
          else raw[k][u].x = ld_raw(s[k].src, s[k].dt, e0 + c * s[k].sc);
        }
      }
    }
#pragma unroll
    for (int k = 0; k < NS; ++k) {
      const int epv = stage_epv(s[k]), vpr = s[k].n / epv, total = kChunkTokens * vpr, dt = s[k].dt;
      const bool wide = dt != kF16 && dt != kBF16;
#pragma unroll
      for (int u = 0; u < kStageBatch; ++u) {
        const int j = r * kStep + u * kChunkThreads + threadIdx.x, i = j / vpr, c = (j % vpr) * epv;
        if (j >= total) continue;
        float* d = s[k].dst + i * s[k].pitch + c;
        const auto put = [&](int e, std::uint32_t bits) {
          const float x = raw_f(bits, dt);
          d[e] = (s[k].fix && i < L) ? fix(c + e, x) : x;
        };
        if (!s[k].vec) {
          put(0, raw[k][u].x);
        } else if (wide) {
          put(0, raw[k][u].x); put(1, raw[k][u].y); put(2, raw[k][u].z); put(3, raw[k][u].w);
        } else {
          const std::uint32_t w4[4] = {raw[k][u].x, raw[k][u].y, raw[k][u].z, raw[k][u].w};
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            put(2 * e, w4[e] & 0xffffu);
            put(2 * e + 1, w4[e] >> 16);
          }
        }
      }
    }
  }
}

template <int K, bool FAST>
__global__ void __launch_bounds__(kChunkThreads, 4) chunk_prep_kernel(const ChunkParams p) {
  using namespace chunk_dev;
  constexpr int C = kChunkTokens, PK = chunk_pitch(K), PA = chunk_pitch(C);
  // The run-time facts FAST fixes (file comment): V here, the dtypes and vector flags where the inputs
  // are staged (written there, not hoisted here: hoisted, they changed the generic instance's SASS).
  const int V = FAST ? K : static_cast<int>(p.V), PV = FAST ? PK : static_cast<int>(chunk_pitch(p.V));
  extern __shared__ __align__(16) float smem[];
  // Carved as chunk_prep_smem_floats (chunk_plan.hpp) sizes them.
  float* s_q = smem;          // [C][PK] q_s (doc 3.4)
  float* s_k = s_q + C * PK;  // k_hat
  float* s_G = s_k + C * PK;  // g (doc 3.2), then exp(Gc - ref)
  float* s_R = s_G + C * PK;  // exp(ref - Gc); g again in the unsafe form
  float* s_W = s_R + C * PK;  // x (doc 3.6)
  float* s_v = s_W + C * PK;  // [C][PV] v, then u
  float* s_Akk = s_v + C * PV;
  float* s_Aqk = s_Akk + C * PA;
  float* s_beta = s_Aqk + C * PA;  // [C]
  float* s_dtb = s_beta + C;       // [K] dt_bias of this value head (use_gate_in_kernel)

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, g8 = lane >> 2, t4 = lane & 3;
  const std::int64_t hv = blockIdx.y, h = hv / p.G;
  constexpr ChunkBlock kB = chunk_block(K, 16);  // the shared part's offsets do not depend on VT
  constexpr int PWs = chunk_pw(K), PDs = chunk_pd(K), PAs = chunk_pa();
  const int VT = static_cast<int>(p.vtile), PU = static_cast<int>(chunk_pu(p.vtile));
  const std::int64_t UB = kChunkTokens * chunk_pu(p.vtile);  // floats of one V tile's u
  // doc 3.2: A = expf(A_log) (A_log absent: 1), formed once; the gate of every element uses it.
  const float A_gate = expf((p.gate_in_kernel && p.has_A_log) ? ld_any(p.A_log, p.A_dt, hv * p.A_s0) : 0.f);
  const bool dtb = p.gate_in_kernel && p.has_dt_bias;
  if (dtb)
    for (int c = tid; c < K; c += kChunkThreads) s_dtb[c] = ld_any(p.dt_bias, p.dtb_dt, hv * p.dtb_sh + c * p.dtb_sk);
  __syncthreads();
  // doc 3.2: the gate of a real token's element.
  const auto gate_fix = [&](int c, float g) {
    if (!p.gate_in_kernel) return g;
    const float x = g + (dtb ? s_dtb[c] : 0.f);
    return p.has_lower_bound ? p.lower_bound * sigmoid(A_gate * x) : -A_gate * softplus(x);
  };
  const std::int64_t g_head = hv * p.g_sh;

  // One chunk: tokens t0 .. t0 + L - 1 of batch row b (L <= 16; the missing slots are zeros), its
  // operand block `id`.
  const auto prep = [&](std::int64_t b, std::int64_t t0, int L, std::int64_t id) {
    float* blk = p.ws + (id * p.HV + hv) * p.ws_blk;
    // --- doc 3.1-3.3: loads ---
    {
      const StageSrc in[4] = {
          {s_q, p.q, b * p.q_sb + t0 * p.q_st + h * p.q_sh, p.q_st, p.q_sk, PK, K, FAST ? kBF16 : p.q_dt,
           FAST ? kVecQ : p.vec & kVecQ, 0},
          {s_k, p.k, b * p.k_sb + t0 * p.k_st + h * p.k_sh, p.k_st, p.k_sk, PK, K, FAST ? kBF16 : p.k_dt,
           FAST ? kVecK : p.vec & kVecK, 0},
          {s_G, p.g, b * p.g_sb + t0 * p.g_st + g_head, p.g_st, p.g_sk, PK, K, FAST ? kF32 : p.g_dt,
           FAST ? kVecG : p.vec & kVecG, 1},
          {s_v, p.v, b * p.v_sb + t0 * p.v_st + hv * p.v_sh, p.v_st, p.v_sv, PV, V, FAST ? kBF16 : p.v_dt,
           FAST ? kVecV : p.vec & kVecV, 0}};
      stage_rows(in, L, gate_fix);
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
    // --- doc 3.5-3.7: cumulative gates (in registers) and per-token factors, a thread per channel;
    // Qg, Kd and decay go straight to the workspace (coalesced: consecutive threads, consecutive
    // channels) ---
    int unsafe = 0;
    for (int c = tid; c < K; c += kChunkThreads) {
      float Gc[C], Rs[C];
#pragma unroll
      for (int i = 0; i < C; ++i) Gc[i] = s_G[i * PK + c];  // g
      Rs[C - 1] = 0.f;
#pragma unroll
      for (int j = C - 2; j >= 0; --j) Rs[j] = __fadd_rn(Rs[j + 1], Gc[j + 1]);
#pragma unroll
      for (int i = 1; i < C; ++i) Gc[i] = __fadd_rn(Gc[i - 1], Gc[i]);
      blk[kB.oDec + c] = expf(Gc[C - 1]);  // decay
      const float ref = Gc[7];
#pragma unroll
      for (int i = 0; i < C; ++i) {
        const float kh = s_k[i * PK + c];
        const float eG = expf(Gc[i]);
        blk[kB.oQ + i * PWs + c] = i < L ? __uint_as_float(tf32(__fmul_rn(s_q[i * PK + c], eG))) : 0.f;
        blk[kB.oD + i * PDs + c] = i < L ? __uint_as_float(tf32(__fmul_rn(kh, expf(Rs[i])))) : 0.f;
        s_W[i * PK + c] = __fmul_rn(s_beta[i], __fmul_rn(kh, eG));
        const float d = __fsub_rn(Gc[i], ref);
        unsafe |= !(fabsf(d) <= kChunkSafeSpan);
        // The two decay factors of the factorised A (doc 3.7), each expf formed once instead of in
        // every fragment load.
        s_G[i * PK + c] = expf(d);
        s_R[i * PK + c] = expf(__fsub_rn(ref, Gc[i]));
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
      // The exact form needs g itself, which the table no longer holds: loaded again (the same
      // values: the same loads and gate) into the slot of exp(ref - Gc), which this form never reads.
      __syncthreads();
      const StageSrc gin[1] = {
          {s_R, p.g, b * p.g_sb + t0 * p.g_st + g_head, p.g_st, p.g_sk, PK, K, FAST ? kF32 : p.g_dt,
           FAST ? kVecG : p.vec & kVecG, 1}};
      stage_rows(gin, L, gate_fix);
      __syncthreads();
      for (int pi = tid; pi < C * C; pi += kChunkThreads) {
        const int i = pi / C, j = pi % C;
        float ak = 0.f, aq = 0.f;
        if (j <= i) {
          for (int c = 0; c < K; ++c) {
            float P = 0.f;
            for (int m = j + 1; m <= i; ++m) P = __fadd_rn(P, s_R[m * PK + c]);
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
    // the workspace. A_kk's rows are read four entries a load (rows 16-byte aligned), in j order. ---
    for (int col = tid; col < K + V; col += kChunkThreads) {
      const bool is_w = col < K;
      const int cc = is_w ? col : col - K;
      float* dst = is_w ? blk + kB.oW + cc : blk + kB.shared + (cc / VT) * UB + cc % VT;
      const int pitch = is_w ? PWs : PU;
      float xs[C];
#pragma unroll
      for (int i = 0; i < C; ++i) {
        float acc = is_w ? s_W[i * PK + cc] : __fmul_rn(s_beta[i], s_v[i * PV + cc]);
#pragma unroll
        for (int jq = 0; jq < (i + 3) / 4; ++jq) {
          const float4 a4 = *reinterpret_cast<const float4*>(s_Akk + i * PA + 4 * jq);
          const float av[4] = {a4.x, a4.y, a4.z, a4.w};
#pragma unroll
          for (int e = 0; e < 4; ++e)
            if (4 * jq + e < i) acc = fmaf(-av[e], xs[4 * jq + e], acc);
        }
        xs[i] = acc;
        dst[i * pitch] = i < L ? (is_w ? __uint_as_float(tf32(-acc)) : acc) : 0.f;
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
