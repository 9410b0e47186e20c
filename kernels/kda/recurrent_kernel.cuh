#pragma once
// Varlen recurrent KDA prefill: kda.md A.7 token by token over each sequence, in the sglang V-first
// state orientation (A.2: S[n][hv] is V x K, row j = value channel, column c = key channel). Mirrors
// flash-linear-attention fla/ops/kda/fused_recurrent.py (U12); the reference is
// reference/kda/recurrent.cpp (fla/ops/kda/naive.py's recurrent form).
//
// One CTA per (sequence n, value head hv, V tile). A.7 couples the channels of one row j only
// through the two dot products of steps 2 and 5, so rows are independent and a V tile is a complete
// piece of work: its state rows stay in registers for the whole sequence and the state is read once
// (initial_state) and written once (final_state) per sequence, whatever the sequence length.
//
// Per token, the block first stages what every row shares in shared memory (q_s, k_hat and alpha
// over K, v over the tile: A.3-A.6), then each lane group updates its rows (steps 1-5) and writes its
// outputs to a shared tile that the block stores to `out` coalesced.
//
// Rounding points are those of the faithful reference: the state stays fp32 between tokens (rounded
// only into final_state's dtype), the decay and the rank-1 update are separately rounded fp32
// multiplies and adds (A.7 steps 1 and 4, as recurrent_step writes them), and only the order inside
// the two dot products is ours (A.10: the summation order is not specified).
#include "kda/device.cuh"
#include "kda/launch_geometry.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

static_assert(kRecurrentThreads % 32 == 0, "whole warps: the row dot products are warp shuffles");

// The state tensors (initial_state, final_state) are read and written through their run-time dtype:
// once per sequence, so templating on them would only multiply instantiations. The output is written
// once per token and row, so its dtype O is a template argument.
template <class O, int K>
__global__ void __launch_bounds__(kRecurrentThreads)
recurrent_kernel(const RecurrentParams p) {
  using namespace dev;
  // A row's K channels are spread over Lay::kLanes lanes (float4 vectors, kEpl channels per lane), so
  // a warp holds Lay::kRowsPerWarp rows and each lane kU of them (one per unrolled slot u).
  using Lay = RowLayout<float, K>;
  constexpr int kT = kRecurrentThreads, kWarps = kT / 32, kU = kRecurrentRowsUnroll;
  static_assert(recurrent_vtile(K, std::int64_t{1} << 40) == kWarps * Lay::kRowsPerWarp * kU,
                "the launcher's V tile (launch_geometry.hpp) is the rows this CTA holds in registers");
  extern __shared__ float smem[];
  const std::int64_t VT = p.vtile;
  float* s_q = smem;       // [K] q, then q_s = q_hat * scale (A.5, A.6)
  float* s_kh = s_q + K;   // [K] k, then k_hat (A.5)
  float* s_al = s_kh + K;  // [K] alpha = exp(g) (A.3 item 5)
  float* s_v = s_al + K;   // [VT] v of this tile
  float* s_o = s_v + VT;   // [VT] outputs, stored coalesced after the rows are done
  float* s_red = s_o + VT;  // block_sum2 scratch (recurrent_smem_bytes sizes all of this)

  const int tid = threadIdx.x;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vt = bid % p.n_vtiles, nh = bid / p.n_vtiles;
  // A.1: value head hv reads q/k head h = hv / G.
  const std::int64_t hv = nh % p.HV, n = nh / p.HV, h = hv / p.G, v0 = vt * VT;
  // Sequence n is tokens [cu_seqlens[n], cu_seqlens[n + 1]) (FLA's varlen convention); without
  // cu_seqlens the whole batch is one sequence. An empty sequence passes the state through.
  const std::int64_t bos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, n * p.cu_s0) : 0;
  const std::int64_t eos = p.has_cu ? ld_index(p.cu_seqlens, p.cu_dt, (n + 1) * p.cu_s0) : p.T;

  const int warp = tid / 32, lane = tid % 32;
  const int rig = lane / Lay::kLanes, lir = lane % Lay::kLanes;  // row in the warp, lane in the row
  // The tile's state, fp32 in registers for the whole sequence: st[u] is row j[u] of the tile.
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
            (p.has_init && j[u] < VT)  // absent initial_state: zeros, as the reference
                ? ld_any(p.init, p.init_dt, n * p.init_s0 + hv * p.init_s1 + (v0 + j[u]) * p.init_s2 + k * p.init_s3)
                : 0.f;
      }
  }
  // A.3: A_log is per value head, so it is loaded once, not per token. With a precomputed g (FLA's
  // log-decay input) the gate is not evaluated at all.
  const float A_log = p.has_g ? 0.f : ld_any(p.A_log, p.A_dt, hv * p.A_s0);
  for (std::int64_t t = bos; t < eos; ++t) {
    // --- staging: the token's per-channel values, shared by every row of the tile ---
    float ssq = 0.f, ssk = 0.f;  // this thread's part of the sums of squares (A.5 item 1)
    for (int k = tid; k < K; k += kT) {
      const float q = ld_any(p.q, p.q_dt, t * p.q_s0 + h * p.q_s1 + k * p.q_s2);
      const float kk = ld_any(p.k, p.k_dt, t * p.k_s0 + h * p.k_s1 + k * p.k_s2);
      float g;
      if (p.has_g) {
        g = ld_any(p.g, p.g_dt, t * p.g_s0 + hv * p.g_s1 + k * p.g_s2);
      } else {  // A.3 items 1-4: bias added before the activation, softplus or bounded form
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
    if (p.l2norm) {  // A.5, FLA form: divide by sqrt(sum + 1e-6) (the epsilon inside the root)
      const float2 s2 = block_sum2<kT>(ssq, ssk, s_red);
      nq = sqrtf(s2.x + 1e-6f);
      nk = sqrtf(s2.y + 1e-6f);
    }
    // Each thread rescales the channels it staged itself, so no barrier is needed before this loop
    // (block_sum2's barriers are for the sums only). A.6: the scale after the normalisation, q only.
    for (int k = tid; k < K; k += kT) {
      s_q[k] = (p.l2norm ? s_q[k] / nq : s_q[k]) * p.scale;
      if (p.l2norm) s_kh[k] = s_kh[k] / nk;
    }
    float beta = ld_any(p.beta, p.beta_dt, t * p.beta_s0 + hv * p.beta_s1);
    if (p.beta_is_logits) beta = sigmoid(beta);  // A.4 item 1 from logits; else beta is given as is
    // Publishes the staged token; it also orders the previous token's s_o reads (the store loop
    // below) before this token's s_o writes.
    __syncthreads();
    // --- rows: A.7 steps 1-5 on each of the lane's kU rows ---
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      float pk = 0.f;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) {
          const int k = Lay::channel(lir, ch, e);
          float& x = st[u][ch * Lay::kV + e];
          x = __fmul_rn(x, s_al[k]);  // step 1: decay; _rn keeps the product rounded (no FMA contraction)
          pk = fmaf(x, s_kh[k], pk);  // step 2: predict from the decayed state
        }
      // Rows past the tile (V < the CTA's rows) compute on zeros and store nothing: every lane of
      // the group has to take part in the shuffles.
      pk = group_sum<Lay::kLanes>(pk);
      const float d = beta * ((j[u] < VT ? s_v[j[u]] : 0.f) - pk);  // step 3: delta
      float pq = 0.f;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) {
          const int k = Lay::channel(lir, ch, e);
          float& x = st[u][ch * Lay::kV + e];
          x = __fadd_rn(x, __fmul_rn(d, s_kh[k]));  // step 4: rank-1 update, d * k_hat rounded, then the add
          pq = fmaf(x, s_q[k], pq);                 // step 5: readout from the updated state
        }
      pq = group_sum<Lay::kLanes>(pq);
      if (lir == 0 && j[u] < VT) s_o[j[u]] = pq;
    }
    // Publishes s_o, and keeps the next token's staging from overwriting s_q/s_kh/s_al/s_v while a
    // warp still reads them.
    __syncthreads();
    O* out = static_cast<O*>(p.out) + t * p.out_s0 + hv * p.out_s1;
    for (std::int64_t jj = tid; jj < VT; jj += kT) out[(v0 + jj) * p.out_s2] = from_f<O>(s_o[jj]);
  }
  // The state is rounded only here, into final_state's dtype (the reference keeps it in R between
  // tokens too).
  if (!p.has_final) return;
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
