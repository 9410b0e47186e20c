#pragma once
// Varlen recurrent KDA prefill (kda.md A.7 token by token). One CTA per (sequence, value head,
// V tile); the tile's state rows stay in registers for the whole sequence, so the state is read
// and written once per sequence. Mirrors flash-linear-attention fla/ops/kda/fused_recurrent.py
// (U12) in sglang's V-first state orientation.
#include "kda/device.cuh"
#include "kda/launch_geometry.hpp"

namespace kparity::kernels::kda {

inline constexpr int kRecThreads = 128;
inline constexpr int kRecRowsUnroll = 2;

static_assert(kRecThreads == kRecurrentThreads && kRecRowsUnroll == 2, "recurrent_vtile assumes these");

// The state tensors are read and written through their run-time dtype: once per sequence, so
// templating on them would only multiply instantiations.
template <class O, int K>
__global__ void __launch_bounds__(kRecThreads)
recurrent_kernel(const RecurrentParams p) {
  using namespace dev;
  using Lay = RowLayout<float, K>;
  constexpr int kT = kRecThreads, kWarps = kT / 32, kU = kRecRowsUnroll;
  extern __shared__ float smem[];
  const std::int64_t VT = p.vtile;
  float* s_q = smem;
  float* s_kh = s_q + K;
  float* s_al = s_kh + K;
  float* s_v = s_al + K;
  float* s_o = s_v + VT;
  float* s_red = s_o + VT;

  const int tid = threadIdx.x;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vt = bid % p.n_vtiles, nh = bid / p.n_vtiles;
  const std::int64_t hv = nh % p.HV, n = nh / p.HV, h = hv / p.G, v0 = vt * VT;
  const std::int64_t bos = p.cu_seqlens ? ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0) : 0;
  const std::int64_t eos = p.cu_seqlens ? ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0) : p.T;

  const int warp = tid / 32, lane = tid % 32;
  const int rig = lane / Lay::kLanes, lir = lane % Lay::kLanes;
  float st[kU][Lay::kEpl];
  std::int64_t j[kU];
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    j[u] = (u * kWarps + warp) * Lay::kRowsPerWarp + rig;
#pragma unroll
    for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
      for (int e = 0; e < Lay::kV; ++e) {
        const int k = Lay::channel(lir, ch, e);
        st[u][ch * Lay::kV + e] =
            (p.init && j[u] < VT)
                ? ld_any(p.init, p.init_dt, n * p.init_s0 + hv * p.init_s1 + (v0 + j[u]) * p.init_s2 + k * p.init_s3)
                : 0.f;
      }
  }
  const float A_log = p.g ? 0.f : ld_any(p.A_log, p.A_dt, hv * p.A_s0);
  for (std::int64_t t = bos; t < eos; ++t) {
    float ssq = 0.f, ssk = 0.f;
    for (int k = tid; k < K; k += kT) {
      const float q = ld_any(p.q, p.q_dt, t * p.q_s0 + h * p.q_s1 + k * p.q_s2);
      const float kk = ld_any(p.k, p.k_dt, t * p.k_s0 + h * p.k_s1 + k * p.k_s2);
      float g;
      if (p.g) {
        g = ld_any(p.g, p.g_dt, t * p.g_s0 + hv * p.g_s1 + k * p.g_s2);
      } else {
        const float x = ld_any(p.a, p.a_dt, t * p.a_s0 + hv * p.a_s1 + k * p.a_s2) +
                        ld_any(p.dt_bias, p.dtb_dt, hv * p.dtb_s0 + k * p.dtb_s1);
        g = gate(x, A_log, p.has_lower_bound, p.lower_bound);
      }
      s_q[k] = q;
      s_kh[k] = kk;
      s_al[k] = expf(g);
      ssq += q * q;
      ssk += kk * kk;
    }
    for (std::int64_t jj = tid; jj < VT; jj += kT)
      s_v[jj] = ld_any(p.v, p.v_dt, t * p.v_s0 + hv * p.v_s1 + (v0 + jj) * p.v_s2);
    float nq = 1.f, nk = 1.f;
    if (p.l2norm) {  // A.5, FLA form: divide by sqrt(sum + 1e-6)
      const float2 s2 = block_sum2<kT>(ssq, ssk, s_red);
      nq = sqrtf(s2.x + 1e-6f);
      nk = sqrtf(s2.y + 1e-6f);
    }
    for (int k = tid; k < K; k += kT) {
      s_q[k] = (p.l2norm ? s_q[k] / nq : s_q[k]) * p.scale;
      if (p.l2norm) s_kh[k] = s_kh[k] / nk;
    }
    float beta = ld_any(p.beta, p.beta_dt, t * p.beta_s0 + hv * p.beta_s1);
    if (p.beta_is_logits) beta = sigmoid(beta);
    __syncthreads();
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      float pk = 0.f;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) {
          const int k = Lay::channel(lir, ch, e);
          float& x = st[u][ch * Lay::kV + e];
          x = __fmul_rn(x, s_al[k]);
          pk = fmaf(x, s_kh[k], pk);
        }
      pk = group_sum<Lay::kLanes>(pk);
      const float d = beta * ((j[u] < VT ? s_v[j[u]] : 0.f) - pk);
      float pq = 0.f;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) {
          const int k = Lay::channel(lir, ch, e);
          float& x = st[u][ch * Lay::kV + e];
          x = __fadd_rn(x, __fmul_rn(d, s_kh[k]));
          pq = fmaf(x, s_q[k], pq);
        }
      pq = group_sum<Lay::kLanes>(pq);
      if (lir == 0 && j[u] < VT) s_o[j[u]] = pq;
    }
    __syncthreads();
    O* out = static_cast<O*>(p.out) + t * p.out_s0 + hv * p.out_s1;
    for (std::int64_t jj = tid; jj < VT; jj += kT) out[(v0 + jj) * p.out_s2] = from_f<O>(s_o[jj]);
  }
  if (!p.final_state) return;
#pragma unroll
  for (int u = 0; u < kU; ++u) {
    if (j[u] >= VT) continue;
#pragma unroll
    for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
      for (int e = 0; e < Lay::kV; ++e) {
        const int k = Lay::channel(lir, ch, e);
        st_any(p.final_state, p.fin_dt,
               n * p.fin_s0 + hv * p.fin_s1 + (v0 + j[u]) * p.fin_s2 + k * p.fin_s3, st[u][ch * Lay::kV + e]);
      }
  }
}

}  // namespace kparity::kernels::kda
