#pragma once
// Packed KDA decode (kda.md B.1): one recurrent step (A.7) per row, state read and written every
// step. One CTA per (row, value head, V tile); rows streamed with 16-byte loads. Mirrors the math
// of sglang's python/sglang/kernels/ops/attention/helion/kda_decode.py (U2).
#include "common/pdl.cuh"
#include "kda/device.cuh"
#include "kda/launch_geometry.hpp"

namespace kparity::kernels::kda {

inline constexpr int kPackedRowsUnroll = 4;

// kEarly (LaunchOptions::decode_variant 2, grids of at most one wave; packed_decode.cpp decides):
// the state loads of the first two passes leave with the slot index's answer, before the token
// preamble, and each later pass loads while the pass before it computes (two register buffers,
// capped at kPackedEarlyCtasPerSm CTAs' worth of registers). The established instance keeps its
// registers (one buffer, loaded after the preamble): its residency serves the large batches.
template <class S, class O, int K, bool kEarly>
__device__ __forceinline__ void packed_decode_body(const PackedParams& p) {
  using namespace dev;
  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  using Lay = RowLayout<S, K>;
  constexpr int kT = kPackedThreads, kWarps = kT / 32, kU = kPackedRowsUnroll;
  const DecodeInputs& in = p.in;
  extern __shared__ float smem[];
  const std::int64_t VT = in.vtile;
  float* s_q = smem;       // q_s
  float* s_kh = s_q + K;   // k_hat
  float* s_al = s_kh + K;  // alpha
  float* s_g = s_al + K;   // spare
  float* s_o = s_g + K;    // [VT]
  float* s_red = s_o + VT;

  const int tid = threadIdx.x;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vt = bid % in.n_vtiles, bh = bid / in.n_vtiles;
  const std::int64_t hv = bh % in.HV, b = bh / in.HV, h = hv / in.G, v0 = vt * VT;
  O* out = static_cast<O*>(in.out) + b * in.out_s0 + hv * in.out_s2;
  const std::int64_t s = ld_index_raw(in.idx, in.idx_dt, b * in.idx_s0);
  // Token inputs as raw bits, all in flight together with the slot index (one round trip).
  constexpr int kCh = TokenBits<K, kT>::kCh;
  TokenBits<K, kT> tok;
  tok.load(in, b, hv, h, tid);
  const char* qkv = static_cast<const char*>(in.qkv);
  const std::int64_t qrow = b * in.qkv_s0;
  if (s < 0) {  // B.1 item 1
    for (std::int64_t j = tid; j < VT; j += kT) out[(v0 + j) * in.out_s3] = from_f<O>(0.f);
    return;
  }
  S* st = static_cast<S*>(in.state) + s * in.st_s0 + hv * in.st_s1;
  constexpr int kRowsPerPass = kWarps * Lay::kRowsPerWarp * kU;
  const int warp = tid / 32, lane = tid % 32;
  const int rig = lane / Lay::kLanes, lir = lane % Lay::kLanes;
  const bool vec = aligned16(st + v0 * in.st_s2) && ((in.st_s2 * sizeof(S)) % kVecBytes == 0);
  const std::int64_t v_base = qrow + (2 * in.H * K + hv * in.V + v0) * in.qkv_s1;
  // A pass: kU rows per lane group, their state into registers and their v entries as raw bits.
  using Acc = float[kU][Lay::kEpl];
  const auto load_pass = [&](Acc& acc, std::int64_t (&j)[kU], std::uint32_t (&v_raw)[kU], std::int64_t rb) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      j[u] = rb + (u * kWarps + warp) * Lay::kRowsPerWarp + rig;
      if (j[u] < VT) {
#pragma unroll
        for (int ch = 0; ch < Lay::kChunks; ++ch) {
          float t[Lay::kV];
          load_row_chunk<S>(st + (v0 + j[u]) * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
#pragma unroll
          for (int e = 0; e < Lay::kV; ++e) acc[u][ch * Lay::kV + e] = t[e];
        }
      } else {
#pragma unroll
        for (int e = 0; e < Lay::kEpl; ++e) acc[u][e] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) v_raw[u] = j[u] < VT ? ld_raw(qkv, in.qkv_dt, v_base + j[u] * in.qkv_s1) : 0u;
  };
  Acc acc_a, acc_b;
  std::int64_t j_a[kU], j_b[kU];
  std::uint32_t v_a[kU], v_b[kU];
  if constexpr (kEarly) {
    load_pass(acc_a, j_a, v_a, 0);
    if (kRowsPerPass < VT) load_pass(acc_b, j_b, v_b, kRowsPerPass);
  }
  float ssq = 0.f, ssk = 0.f;
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    const int k = tid + u * kT;
    if (k >= K) continue;
    const float q = raw_f(tok.q[u], in.qkv_dt);
    const float kk = raw_f(tok.k[u], in.qkv_dt);
    const float x = tok.gate_x(in, u);
    s_q[k] = q;
    s_kh[k] = kk;
    s_al[k] = expf(gate(x, raw_f(tok.A_log, in.A_dt), in.has_lower_bound, in.lower_bound));
    ssq += q * q;
    ssk += kk * kk;
  }
  if (in.l2norm) {  // A.5 table: divide by sqrt(n), or multiply by 1/sqrt(n) for a bf16 state
    const float2 n = block_sum2<kT>(ssq, ssk, s_red);
    const float nq = sqrtf(n.x + 1e-6f), nk = sqrtf(n.y + 1e-6f);
    const float rq = 1.f / nq, rk = 1.f / nk;
    for (int k = tid; k < K; k += kT) {
      s_q[k] = p.norm_multiply ? s_q[k] * rq : s_q[k] / nq;
      s_kh[k] = p.norm_multiply ? s_kh[k] * rk : s_kh[k] / nk;
    }
  }
  for (int k = tid; k < K; k += kT) s_q[k] = s_q[k] * in.scale;  // A.6
  __syncthreads();
  const float beta = sigmoid(raw_f(tok.b_logit, in.b_dt));  // B.1 item 3: fp32

  float fq[Lay::kEpl], fk[Lay::kEpl], fa[Lay::kEpl];
#pragma unroll
  for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
    for (int e = 0; e < Lay::kV; ++e) {
      const int k = Lay::channel(lir, ch, e);
      fq[ch * Lay::kV + e] = s_q[k];
      fk[ch * Lay::kV + e] = s_kh[k];
      fa[ch * Lay::kV + e] = s_al[k];
    }

  const auto process = [&](Acc& acc, const std::int64_t (&j)[kU], const std::uint32_t (&v_raw)[kU]) {
    float vj[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) vj[u] = raw_f(v_raw[u], in.qkv_dt);
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      float pk = 0.f;
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) {
        acc[u][e] = __fmul_rn(acc[u][e], fa[e]);  // A.7 step 1: decay
        pk = fmaf(acc[u][e], fk[e], pk);           // step 2: predict from the decayed state
      }
      pk = group_sum<Lay::kLanes>(pk);
      const float d = beta * (vj[u] - pk);  // step 3
      float pq = 0.f;
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) {
        acc[u][e] = __fadd_rn(acc[u][e], __fmul_rn(d, fk[e]));  // step 4: rank-1 update
        pq = fmaf(acc[u][e], fq[e], pq);                         // step 5: readout
      }
      pq = group_sum<Lay::kLanes>(pq);
      if (j[u] >= VT) continue;
      if (lir == 0) s_o[j[u]] = pq;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch) {
        float t[Lay::kV];
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) t[e] = acc[u][ch * Lay::kV + e];
        store_row_chunk<S>(st + (v0 + j[u]) * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
      }
    }
  };
  if constexpr (kEarly) {
    for (std::int64_t rb = 0; rb < VT; rb += 2 * kRowsPerPass) {
      process(acc_a, j_a, v_a);
      if (rb + 2 * kRowsPerPass < VT) load_pass(acc_a, j_a, v_a, rb + 2 * kRowsPerPass);
      if (rb + kRowsPerPass < VT) {
        process(acc_b, j_b, v_b);
        if (rb + 3 * kRowsPerPass < VT) load_pass(acc_b, j_b, v_b, rb + 3 * kRowsPerPass);
      }
    }
  } else {
    for (std::int64_t rb = 0; rb < VT; rb += kRowsPerPass) {
      load_pass(acc_a, j_a, v_a, rb);
      process(acc_a, j_a, v_a);
    }
  }
  __syncthreads();
  for (std::int64_t jj = tid; jj < VT; jj += kT) out[(v0 + jj) * in.out_s3] = from_f<O>(s_o[jj]);
}

// Two entry points, so each instance has its own register budget: the established one as before
// (no residency asked of ptxas: an explicit minimum of 1 let it take 91 registers where it takes 69,
// fp32 state, K = 128), the small-batch one capped for kPackedEarlyCtasPerSm CTAs per SM.
template <class S, class O, int K>
__global__ void __launch_bounds__(kPackedThreads) packed_decode_kernel(const PackedParams p) {
  packed_decode_body<S, O, K, false>(p);
}
template <class S, class O, int K>
__global__ void __launch_bounds__(kPackedThreads, kPackedEarlyCtasPerSm) packed_decode_early_kernel(const PackedParams p) {
  packed_decode_body<S, O, K, true>(p);
}

}  // namespace kparity::kernels::kda
