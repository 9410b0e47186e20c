#pragma once
// ReplaySSM KDA decode (kda.md B.2). One CTA per (row, value head, V tile). The checkpoint state
// rows are streamed once with 16-byte loads; the valid ring entries are folded in on the fly
// (B.2.4) and the state is written back only on a flush (B.2.7), so an append step reads the
// state and writes only ring position c. Mirrors the math of sglang's
// python/sglang/kernels/ops/attention/helion/kda_replayssm.py (U1); the tiling is ours: no tensor
// cores, fp32 FMAs for the ring product (tighter than TF32, within the spec's budget).
#include "kda/device.cuh"
#include "kda/launch_geometry.hpp"

namespace kparity::kernels::kda {

inline constexpr int kReplayThreads = 128;
inline constexpr int kReplayRowsUnroll = 4;  // rows per warp in flight: 4 x 16 B loads per lane

static_assert(kReplayThreads == kDecodeThreads, "replay_smem_bytes assumes this block size");

template <class S, class O, class R, int K>
__global__ void __launch_bounds__(kReplayThreads)
replayssm_decode_kernel(const ReplayParams p) {
  using namespace dev;
  using Lay = RowLayout<S, K>;
  constexpr int kT = kReplayThreads, kWarps = kT / 32, kU = kReplayRowsUnroll;
  const DecodeInputs& in = p.in;
  extern __shared__ float smem[];
  const std::int64_t L = p.L, VT = in.vtile;
  float* s_kw = smem;             // [L][K]: k ring as read, then rt(k_i * W_i, out dtype)
  float* s_g = s_kw + L * K;      // [L][K]: g ring
  float* s_d = s_g + L * K;       // [L][VT]: rt(d_i, out dtype)
  float* s_qa = s_d + L * VT;     // q_s * alpha
  float* s_ka = s_qa + K;         // k_hat * alpha
  float* s_kh = s_ka + K;         // k_hat
  float* s_al = s_kh + K;         // alpha
  float* s_dt = s_al + K;         // exp(Gtot)
  float* s_o = s_dt + K;          // [VT] outputs
  float* s_dn = s_o + VT;         // [VT] new deltas
  float* s_v = s_dn + VT;         // [VT] v tile: staged so no global load sits behind a state store
  float* s_red = s_v + VT;

  const int tid = threadIdx.x;
  const std::int64_t bid = blockIdx.x;
  const std::int64_t vt = bid % in.n_vtiles, bh = bid / in.n_vtiles;
  const std::int64_t hv = bh % in.HV, b = bh / in.HV, h = hv / in.G, v0 = vt * VT;
  O* out = static_cast<O*>(in.out) + b * in.out_s0 + hv * in.out_s2;

  const std::int64_t s = ld_index(in.idx, in.idx_dt, b * in.idx_s0);
  if (s < 0) {  // B.2.3 item 1: padding row, nothing else read or written
    for (std::int64_t j = tid; j < VT; j += kT) out[(v0 + j) * in.out_s3] = from_f<O>(0.f);
    return;
  }
  const std::int64_t c = p.write_pos[b * p.wp_s0];
  const bool forced = p.force_flush != nullptr && p.force_flush[b * p.ff_s0] != 0;
  const bool flush = c == L - 1 || forced;
  // Positions >= c are never read (B.2.3 item 3); an out-of-contract cursor is clamped to the
  // ring instead of reading neighbouring memory as upstream would (B.2.8 item 4).
  const int cr = static_cast<int>(c < 0 ? 0 : (c > L ? L : c));
  const bool append = !flush && c >= 0 && c < L;

  // --- every independent load of the step is issued before any result is used: this thread's
  // channels of q, k and the gate inputs, then the valid ring tiles, in batches of 8 per thread,
  // so the preamble costs one memory round trip instead of one per ring entry.
  constexpr int kCh = (K + kT - 1) / kT;
  const char* qkv = static_cast<const char*>(in.qkv);
  const std::int64_t qrow = b * in.qkv_s0;
  float rq_[kCh], rk_[kCh], rx_[kCh];
  const float A_log = ld_any(in.A_log, in.A_dt, hv * in.A_s0);
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    const int k = tid + u * kT;
    if (k >= K) continue;
    rq_[u] = ld_any(qkv, in.qkv_dt, qrow + (h * K + k) * in.qkv_s1);
    rk_[u] = ld_any(qkv, in.qkv_dt, qrow + (in.H * K + h * K + k) * in.qkv_s1);
    rx_[u] = ld_any(in.a, in.a_dt, b * in.a_s0 + hv * in.a_sh + k * in.a_sk) +
             ld_any(in.dt_bias, in.dtb_dt, hv * in.dtb_sh + k * in.dtb_sk);
  }
  const float* gring = p.g_cache + s * p.g_s0 + hv * p.g_s1;
  const R* kring = static_cast<const R*>(p.k_cache) + s * p.k_s0 + h * p.k_s1;
  const R* dring = static_cast<const R*>(p.d_cache) + s * p.d_s0 + hv * p.d_s1;
  batched_fill<kT>(cr * K, [&](std::int64_t e) { return gring[(e / K) * p.g_s2 + (e % K) * p.g_s3]; }, s_g);
  batched_fill<kT>(cr * K, [&](std::int64_t e) { return to_f<R>(kring[(e / K) * p.k_s2 + (e % K) * p.k_s3]); }, s_kw);
  batched_fill<kT>(cr * VT, [&](std::int64_t e) {
    return rt<O>(to_f<R>(dring[(e / VT) * p.d_s2 + (v0 + e % VT) * p.d_s3]));
  }, s_d);
  const std::int64_t v_base = qrow + (2 * in.H * K + hv * in.V + v0) * in.qkv_s1;
  batched_fill<kT>(VT, [&](std::int64_t e) { return ld_any(qkv, in.qkv_dt, v_base + e * in.qkv_s1); }, s_v);
  float ssq = 0.f, ssk = 0.f;
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    if (tid + u * kT >= K) continue;
    ssq += rq_[u] * rq_[u];
    ssk += rk_[u] * rk_[u];
  }
  float rq = 1.f, rk = 1.f;
  if (in.l2norm) {  // A.5, ReplaySSM form: r = 1/sqrt(sum + 1e-6), then x * r
    const float2 n = block_sum2<kT>(ssq, ssk, s_red);
    rq = 1.f / sqrtf(n.x + 1e-6f);
    rk = 1.f / sqrtf(n.y + 1e-6f);
  } else {
    __syncthreads();  // publishes the ring tiles
  }
  float kq = 0.f;
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    const int k = tid + u * kT;
    if (k >= K) continue;
    const float q_s = (rq_[u] * rq) * in.scale;
    const float kh = rk_[u] * rk;
    const float g = gate(rx_[u], A_log, in.has_lower_bound, in.lower_bound);
    const float alpha = expf(g);
    kq += kh * q_s;
    s_qa[k] = q_s * alpha;
    s_ka[k] = kh * alpha;
    s_kh[k] = kh;
    s_al[k] = alpha;
    // B.2.4: inclusive fp32 prefix P_i, then W_i = exp(Gtot - P_i) excludes entry i's own gate.
    float P = 0.f;
    for (int i = 0; i < cr; ++i) {
      P += s_g[i * K + k];
      s_g[i * K + k] = P;
    }
    s_dt[k] = expf(P);
    for (int i = 0; i < cr; ++i) s_kw[i * K + k] = rt<O>(s_kw[i * K + k] * expf(P - s_g[i * K + k]));
    if (append && vt == 0) {  // B.2.6: g by every head, k once per q/k group
      p.g_cache[s * p.g_s0 + hv * p.g_s1 + c * p.g_s2 + k * p.g_s3] = g;
      if (hv % in.G == 0)
        static_cast<R*>(p.k_cache)[s * p.k_s0 + h * p.k_s1 + c * p.k_s2 + k * p.k_s3] = from_f<R>(kh);
    }
  }
  kq = block_sum2<kT>(kq, 0.f, s_red).x;  // its barrier also publishes the smem above
  float beta = sigmoid(ld_any(in.b, in.b_dt, b * in.b_s0 + hv * in.b_s1));
  if (p.beta_round_dt >= 0) beta = rt_code(beta, p.beta_round_dt);  // A.4 item 3

  // --- row phase: S_prev rows, readout, delta, optional fold ---
  const int warp = tid / 32, lane = tid % 32;
  const int rig = lane / Lay::kLanes, lir = lane % Lay::kLanes;
  float fqa[Lay::kEpl], fka[Lay::kEpl], fdt[Lay::kEpl];
#pragma unroll
  for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
    for (int e = 0; e < Lay::kV; ++e) {
      const int k = Lay::channel(lir, ch, e);
      fqa[ch * Lay::kV + e] = s_qa[k];
      fka[ch * Lay::kV + e] = s_ka[k];
      fdt[ch * Lay::kV + e] = s_dt[k];
    }
  S* st = static_cast<S*>(in.state) + s * in.st_s0 + hv * in.st_s1;
  const bool vec = (reinterpret_cast<std::uintptr_t>(st + v0 * in.st_s2) % 16 == 0) &&
                   ((in.st_s2 * sizeof(S)) % 16 == 0);
  constexpr int kRowsPerPass = kWarps * Lay::kRowsPerWarp * kU;

  // Loads the state rows of one pass (kU row groups per warp) as fp32.
  const auto load_pass = [&](std::int64_t rb, float (&dst)[kU][Lay::kEpl]) {
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      const std::int64_t jr = rb + (u * kWarps + warp) * Lay::kRowsPerWarp + rig;
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch) {
        float t[Lay::kV];
        if (jr < VT) {
          load_row_chunk<S>(st + (v0 + jr) * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
        } else {
#pragma unroll
          for (int e = 0; e < Lay::kV; ++e) t[e] = 0.f;
        }
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) dst[u][ch * Lay::kV + e] = t[e];
      }
    }
  };
  // Double-buffered: the next pass's rows are in flight while this pass folds the ring.
  float acc[kU][Lay::kEpl];
  load_pass(0, acc);
  for (std::int64_t rb = 0; rb < VT; rb += kRowsPerPass) {
    float nxt[kU][Lay::kEpl];
    const bool more = rb + kRowsPerPass < VT;
    if (more) load_pass(rb + kRowsPerPass, nxt);
    std::int64_t j[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) j[u] = rb + (u * kWarps + warp) * Lay::kRowsPerWarp + rig;
#pragma unroll
    for (int u = 0; u < kU; ++u)
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) acc[u][e] *= fdt[e];
    for (int i = 0; i < cr; ++i) {
      float kw[Lay::kEpl];
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) kw[ch * Lay::kV + e] = s_kw[i * K + Lay::channel(lir, ch, e)];
#pragma unroll
      for (int u = 0; u < kU; ++u) {
        const float d = j[u] < VT ? s_d[i * VT + j[u]] : 0.f;
#pragma unroll
        for (int e = 0; e < Lay::kEpl; ++e) acc[u][e] = fmaf(d, kw[e], acc[u][e]);
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      float pq = 0.f, pk = 0.f;
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) {
        pq = fmaf(acc[u][e], fqa[e], pq);
        pk = fmaf(acc[u][e], fka[e], pk);
      }
      pq = group_sum<Lay::kLanes>(pq);
      pk = group_sum<Lay::kLanes>(pk);
      if (j[u] >= VT) continue;
      const float vj = s_v[j[u]];
      const float d = beta * (vj - pk);  // B.2.5
      if (lir == 0) {
        s_o[j[u]] = pq + d * kq;
        s_dn[j[u]] = d;
      }
      if (flush) {  // B.2.7 item 3: rt(S_prev * alpha + d * k_hat), multiply first, then add
#pragma unroll
        for (int ch = 0; ch < Lay::kChunks; ++ch) {
          float t[Lay::kV];
#pragma unroll
          for (int e = 0; e < Lay::kV; ++e) {
            const int k = Lay::channel(lir, ch, e);
            t[e] = __fadd_rn(__fmul_rn(acc[u][ch * Lay::kV + e], s_al[k]), __fmul_rn(d, s_kh[k]));
          }
          store_row_chunk<S>(st + (v0 + j[u]) * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
        }
      }
    }
    if (more) {
#pragma unroll
      for (int u = 0; u < kU; ++u)
#pragma unroll
        for (int e = 0; e < Lay::kEpl; ++e) acc[u][e] = nxt[u][e];
    }
  }
  __syncthreads();
  R* dw = static_cast<R*>(p.d_cache) + s * p.d_s0 + hv * p.d_s1 + c * p.d_s2;
  for (std::int64_t jj = tid; jj < VT; jj += kT) {
    out[(v0 + jj) * in.out_s3] = from_f<O>(s_o[jj]);
    if (append) dw[(v0 + jj) * p.d_s3] = from_f<R>(s_dn[jj]);
  }
}

}  // namespace kparity::kernels::kda
