#pragma once
// ReplaySSM KDA decode (kda.md B.2). One CTA per (row, value head, V tile); the tile is streamed in
// passes of replay_rows_per_pass(K) rows (two rows per lane group, ReplayLayout), two passes in flight.
//
// Work decomposition (per (row, value head), everything below the state is tiny):
//   1. every independent load is issued up front: the slot index, cursor and token inputs as raw
//      bits (ld_raw: a run-time-dtype load converted at its use would cost a round trip each), then
//      the first two passes of state rows (16-byte loads into registers) and the valid ring entries
//      (cp.async into shared memory), so the preamble costs two memory round trips and overlaps
//      the state stream;
//   2. per key channel (one thread each): the inclusive gate prefix P_i, Dtot = exp(Gtot) and the
//      reconstruction operand kw_i = rt(k_i * exp(Gtot - P_i), out dtype) (B.2.4), computed once
//      per CTA, not per V row;
//   3. append step (no state write): S_prev is never materialised. By linearity
//        sq_j = sum_k (S0[j][k] * Dtot[k]) * qa[k] + sum_i rt(d_i[j]) * (kw_i . qa)
//      (same for sk_j with ka), with qa = q_s * alpha, ka = k_hat * alpha; the c dot products
//      kw_i . qa and kw_i . ka are done once per CTA (one warp per entry). Each state element
//      costs one multiply and two FMAs. This is a regrouping of the sums of B.2.4/B.2.5, whose
//      order the spec leaves open; every rounding point of the reference (rt of d and of k * W,
//      the fp32 product S0 * Dtot) is kept;
//   4. flush step: S_prev rows are materialised in registers (S0 * Dtot + sum_i d_i kw_i, fp32
//      FMAs), read out, and written back as rt(S_prev * alpha + d * k_hat) (B.2.7).
// Mirrors the math of sglang's python/sglang/kernels/ops/attention/helion/kda_replayssm.py (U1);
// the tiling is ours: no tensor cores, fp32 arithmetic for the ring product (tighter than TF32,
// within the spec's budget).
#include "common/pdl.cuh"
#include "kda/device.cuh"
#include "kda/launch_geometry.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

static_assert(kReplayThreads % 32 == 0 && kReplayThreads >= 64, "replay geometry: a 64-chunk ring row per copy step");
// Each thread loads at most kReplayVPerThread entries of the v tile (VT <= V <= kMaxHeadDim).
inline constexpr int kReplayVPerThread = 2;
static_assert(kReplayVPerThread * kReplayThreads >= kMaxHeadDim, "the v tile loads cover the largest V");

namespace dev {

// A lane holds kEpl state elements per pass (kNVec 16-byte vectors; K / kEpl = kLanes lanes' worth
// per row). A group of kGL = 2 kLanes lanes holds two consecutive rows and each lane the same
// kEpl / 2 channels of both: its vector mm of either row covers channels (mm * kGL + r) * kV ...
// + kV - 1, so for each mm the group reads kGL consecutive vectors, K bytes of one row (whole
// 128-byte lines for K >= 128; one row per kLanes lanes read half lines, 4.5-6.6% less bandwidth in
// bench/memory_probe, 200 vs 180 us at the benchmark's B = 256), and each shared-memory operand a
// lane loads serves two rows.
template <class S, int K>
struct ReplayLayout {
  static constexpr int kV = kVec<S>;
  static constexpr int kEpl = K < 32 ? K : 32;
  static constexpr int kLanes = K / kEpl;
  static constexpr int kNVec = kEpl / kV;
  static constexpr int kRowsPerWarp = 32 / kLanes;
  static constexpr int kRPL = 2, kGL = kLanes * kRPL, kNV1 = kNVec / kRPL;  // rows, lanes, vectors per row
  static_assert(kNVec >= 2 && kNVec * kV == kEpl && kGL <= 32, "K must be a power of two >= 16");
};

#ifdef KPARITY_REPLAY_TRACE
// KPARITY_REPLAY_TRACE builds only (debug): per-CTA times of the last launch, dumped by kda_decode_bench.
// [bid] = {globaltimer at entry, globaltimer at exit, clock64 entry->preamble end, entry->exit, smid | flush << 8}
inline constexpr int kTraceCtas = 16384;
static __device__ unsigned long long g_replay_trace[kTraceCtas][5];
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
#endif

}  // namespace dev

template <class S, class O, class R, int K>
__global__ void __launch_bounds__(kReplayThreads, kReplayCtasPerSm)
replayssm_decode_kernel(const ReplayParams p) {
  using namespace dev;
  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  using Lay = ReplayLayout<S, K>;
  constexpr int kT = kReplayThreads, kW = kT / 32, kCh = (K + kT - 1) / kT;
  constexpr int kV = Lay::kV, kNVec = Lay::kNVec, kRPW = Lay::kRowsPerWarp;
  constexpr int kRPL = Lay::kRPL, kGL = Lay::kGL, kNV1 = Lay::kNV1;
  constexpr int kVR = kVec<R>;
  const DecodeInputs& in = p.in;
  const int L = static_cast<int>(p.L), VT = static_cast<int>(in.vtile);
  extern __shared__ __align__(16) float smem[];
  float* s_gk = smem;          // [L][K]: g ring, then its inclusive prefix, then rt(k_i * W_i)
  float* s_qa = s_gk + L * K;  // q_s * alpha
  float* s_ka = s_qa + K;      // k_hat * alpha
  float* s_kh = s_ka + K;      // k_hat
  float* s_al = s_kh + K;      // alpha
  float* s_dt = s_al + K;      // exp(Gtot)
  float* s_qs = s_dt + K;      // q_s
  float* s_kwq = s_qs + K;     // [L]: kw_i . qa
  float* s_kwk = s_kwq + L;    // [L]: kw_i . ka
  float* s_red = s_kwk + L;    // 2 * kW
  float* s_v = smem + replay_smem_floats(L, K, VT) - VT;                 // [VT] v tile
  R* s_k = reinterpret_cast<R*>(smem + replay_smem_floats(L, K, VT));  // [L][K] raw k ring
  R* s_d = s_k + L * K;                                             // [L][VT] raw d ring tile

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
#ifdef KPARITY_REPLAY_TRACE
  const unsigned long long tr_g0 = gtimer();
  const long long tr_c0 = clock64();
  long long tr_c1 = 0;
#endif
  const int grp = lane / kGL, r = lane % kGL;
  const unsigned bid = blockIdx.x, nvt = static_cast<unsigned>(in.n_vtiles), nhv = static_cast<unsigned>(in.HV);
  const unsigned bh = bid / nvt, vt = bid - bh * nvt;
  const unsigned b32 = bh / nhv, hv32 = bh - b32 * nhv, h32 = hv32 / static_cast<unsigned>(in.G);
  const std::int64_t b = b32, hv = hv32, h = h32;
  const int v0 = static_cast<int>(vt) * VT;
  O* out = static_cast<O*>(in.out) + b * in.out_s0 + hv * in.out_s2;

  // --- round 1: everything that depends on the row only. write_pos and force_flush are read
  // before the padding test (they are [B] tensors, so the read is in bounds); their values are
  // used only for non-padding rows, as B.2.3 requires.
  const std::int64_t s = ld_index_raw(in.idx, in.idx_dt, b * in.idx_s0);
  const std::int64_t c = ld_s32(p.write_pos + b * p.wp_s0);
  const std::int64_t ff = p.has_force_flush ? ld_s32(p.force_flush + b * p.ff_s0) : 0;
  const char* qkv = static_cast<const char*>(in.qkv);
  const std::int64_t qrow = b * in.qkv_s0;
  // Token inputs as raw bits: converted after the state and ring loads are issued (ld_raw).
  TokenBits<K, kT> tok;
  tok.load(in, b, hv, h, tid);
  std::uint32_t v_raw[kReplayVPerThread];
  const std::int64_t v_base = qrow + (2 * in.H * K + hv * in.V + v0) * in.qkv_s1;
#pragma unroll
  for (int u = 0; u < kReplayVPerThread; ++u) {
    const int j = tid + u * kT;
    v_raw[u] = j < VT ? ld_raw(qkv, in.qkv_dt, v_base + j * in.qkv_s1) : 0u;
  }
  constexpr int kRowsPass = kW * kRPW;
  const int npass = (VT + kRowsPass - 1) / kRowsPass;
  const int jlane = warp * kRPW + grp * kRPL;  // first row of this lane's group within a pass
  const auto chan = [&](int mm) { return (mm * kGL + r) * kV; };  // channel of the lane's vector mm

  if (s < 0) {  // B.2.3 item 1: padding row, nothing else read or written
    for (int j = tid; j < VT; j += kT) out[(v0 + j) * in.out_s3] = from_f<O>(0.f);
    return;
  }
  const bool flush = c == L - 1 || ff != 0;
  // Positions >= c are never read (B.2.3 item 3); an out-of-contract cursor is clamped to the
  // ring instead of reading neighbouring memory as upstream would (B.2.8 item 4).
  const int cr = static_cast<int>(c < 0 ? 0 : (c > L ? L : c));
  const bool append = !flush && c >= 0 && c < L;

  // --- round 2: the state rows of this thread (registers) and the valid ring entries (smem) ---
  S* st = static_cast<S*>(in.state) + s * in.st_s0 + hv * in.st_s1 + std::int64_t(v0) * in.st_s2;
  const bool vec = aligned16(st) && ((in.st_s2 * std::int64_t(sizeof(S))) % 16 == 0);
  // Two passes of state rows in flight per thread; the row phase consumes one while the next loads.
  // One address and one branch per pass. Buffer vector m = sel * kNV1 + mm holds row jlane + sel,
  // channels chan(mm) ... + kV - 1; VT is a power of two >= 16 and jlane is even, so both rows of a
  // group are in or out of the tile together.
  const S* row0 = st + std::int64_t(jlane) * in.st_s2 + chan(0);
  const std::int64_t pass_step = std::int64_t(kRowsPass) * in.st_s2;
  const auto load_pass = [&](uint4 (&buf)[kNVec], int pass) {
    const S* row = row0 + pass * pass_step;
    if (pass * kRowsPass + jlane >= VT) {
#pragma unroll
      for (int m = 0; m < kNVec; ++m) buf[m] = make_uint4(0, 0, 0, 0);
    } else if (vec) {
#pragma unroll
      for (int m = 0; m < kNVec; ++m)
        buf[m] = __ldcs(reinterpret_cast<const uint4*>(row + (m / kNV1) * in.st_s2) + (m % kNV1) * kGL);
    } else {
#pragma unroll
      for (int m = 0; m < kNVec; ++m) buf[m] = load_raw16<S>(row + (m / kNV1) * in.st_s2 + (m % kNV1) * kGL * kV, false);
    }
  };
  uint4 buf0[kNVec], buf1[kNVec];
  load_pass(buf0, 0);
  if (npass > 1 && !flush) load_pass(buf1, 1);  // a flush CTA streams one pass at a time (registers)

  const float* gring = p.g_cache + s * p.g_s0 + hv * p.g_s1;
  const R* kring = static_cast<const R*>(p.k_cache) + s * p.k_s0 + h * p.k_s1;
  const R* dring = static_cast<const R*>(p.d_cache) + s * p.d_s0 + hv * p.d_s1 + std::int64_t(v0) * p.d_s3;
  const bool g_fast = p.g_s3 == 1 && aligned16(gring) && (p.g_s2 * 4) % 16 == 0;
  const bool k_fast = p.k_s3 == 1 && aligned16(kring) && (p.k_s2 * std::int64_t(sizeof(R))) % 16 == 0;
  const bool d_fast = p.d_s3 == 1 && aligned16(dring) && (p.d_s2 * std::int64_t(sizeof(R))) % 16 == 0;
  constexpr int kLogGc = __builtin_ctz(K / 4), kLogKc = __builtin_ctz(K / kVR);
  const int log_vt = __ffs(VT) - 1, log_dc = log_vt - (__ffs(kVR) - 1);
  // The fast rings go to shared memory as asynchronous 16-byte copies (no registers held, so all
  // three rings are one round trip); cp_async_wait_all() before the barrier that publishes them.
  if (g_fast) cp_async_rows<kT>(s_gk, gring, p.g_s2 * 4, cr, kLogGc);
  if (k_fast) cp_async_rows<kT>(s_k, kring, p.k_s2 * std::int64_t(sizeof(R)), cr, kLogKc);
  if (d_fast) cp_async_rows<kT>(s_d, dring, p.d_s2 * std::int64_t(sizeof(R)), cr, log_dc);
  // Strided or unaligned rings (tests' padded layouts): element by element, off the fast path.
  if (!g_fast)
    for (int e = tid; e < cr * K; e += kT) s_gk[e] = gring[(e / K) * p.g_s2 + (e % K) * p.g_s3];
  if (!k_fast)
    for (int e = tid; e < cr * K; e += kT) s_k[e] = kring[(e / K) * p.k_s2 + (e % K) * p.k_s3];
  if (!d_fast)
    for (int e = tid; e < cr * VT; e += kT) s_d[e] = dring[(e >> log_vt) * p.d_s2 + (e & (VT - 1)) * p.d_s3];

  // Token values (their loads were issued with the slot index, one round trip ago).
  float rq_[kCh], rk_[kCh], rx_[kCh];
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    rq_[u] = raw_f(tok.q[u], in.qkv_dt);
    rk_[u] = raw_f(tok.k[u], in.qkv_dt);
    rx_[u] = tok.gate_x(in, u);
  }
  const float A_log = raw_f(tok.A_log, in.A_dt);
  const float b_raw = raw_f(tok.b_logit, in.b_dt);
#pragma unroll
  for (int u = 0; u < kReplayVPerThread; ++u)
    if (tid + u * kT < VT) s_v[tid + u * kT] = raw_f(v_raw[u], in.qkv_dt);  // published by the barriers below

  // --- per key channel: normalisation, gate, prefix, k * W ---
  float ssq = 0.f, ssk = 0.f;
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    ssq += rq_[u] * rq_[u];
    ssk += rk_[u] * rk_[u];
  }
  float rq = 1.f, rk = 1.f;
  cp_async_wait_all();
  if (in.l2norm) {  // A.5, ReplaySSM form: r = 1/sqrt(sum + 1e-6), then x * r
    const float2 nn = block_sum2<kT>(ssq, ssk, s_red);  // its barriers also publish the ring tables
    rq = 1.f / sqrtf(nn.x + 1e-6f);
    rk = 1.f / sqrtf(nn.y + 1e-6f);
  } else {
    __syncthreads();  // publishes the ring tables
  }
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    const int k = tid + u * kT;
    if (k >= K) continue;
    const float q_s = (rq_[u] * rq) * in.scale;
    const float kh = rk_[u] * rk;
    const float g = gate(rx_[u], A_log, in.has_lower_bound, in.lower_bound);
    const float alpha = expf(g);
    s_qs[k] = q_s;
    s_qa[k] = q_s * alpha;
    s_ka[k] = kh * alpha;
    s_kh[k] = kh;
    s_al[k] = alpha;
    // B.2.4: inclusive fp32 prefix P_i, then W_i = exp(Gtot - P_i) excludes entry i's own gate.
    // The column belongs to this thread alone, so no barrier between the passes.
    float P = 0.f;
#pragma unroll 4
    for (int i = 0; i < cr; ++i) {
      P += s_gk[i * K + k];
      s_gk[i * K + k] = P;
    }
    s_dt[k] = expf(P);
#pragma unroll 4
    for (int i = 0; i < cr; ++i) s_gk[i * K + k] = rt<O>(to_f<R>(s_k[i * K + k]) * expf(P - s_gk[i * K + k]));
    if (append && vt == 0) {  // B.2.6: g by every head, k once per q/k group
      p.g_cache[s * p.g_s0 + hv * p.g_s1 + c * p.g_s2 + k * p.g_s3] = g;
      if (hv32 % static_cast<unsigned>(in.G) == 0)
        static_cast<R*>(p.k_cache)[s * p.k_s0 + h * p.k_s1 + c * p.k_s2 + k * p.k_s3] = from_f<R>(kh);
    }
  }
  __syncthreads();
  // kw_i . qa and kw_i . ka, one warp per ring entry; kq = k_hat . q_s in every warp (same order).
  float kq = 0.f;
  for (int k = lane; k < K; k += 32) kq = fmaf(s_kh[k], s_qs[k], kq);
  kq = group_sum<32>(kq);
  for (int i = warp; i < cr; i += kW) {
    float a = 0.f, bb = 0.f;
    for (int k = lane; k < K; k += 32) {
      const float kw = s_gk[i * K + k];
      a = fmaf(kw, s_qa[k], a);
      bb = fmaf(kw, s_ka[k], bb);
    }
    a = group_sum<32>(a);
    bb = group_sum<32>(bb);
    if (lane == 0) {
      s_kwq[i] = a;
      s_kwk[i] = bb;
    }
  }
  __syncthreads();
#ifdef KPARITY_REPLAY_TRACE
  tr_c1 = clock64();
#endif
  float beta = sigmoid(b_raw);
  if (p.beta_round_dt >= 0) beta = rt_code(beta, p.beta_round_dt);  // A.4 item 3

  // --- row phase: two rows per lane group per pass ---
  R* dw = static_cast<R*>(p.d_cache) + s * p.d_s0 + hv * p.d_s1 + c * p.d_s2;
  // Output (and the append-step d ring entry) of row j from its lane-partial readouts.
  const auto finish = [&](int j, float pq, float pk, bool writer) {
    const float sq = group_sum<kGL>(pq), sk = group_sum<kGL>(pk);
    const float d = beta * ((j < VT ? s_v[j] : 0.f) - sk);  // B.2.5
    if (writer && j < VT) {
      out[(v0 + j) * in.out_s3] = from_f<O>(sq + d * kq);
      if (append) dw[(v0 + j) * p.d_s3] = from_f<R>(d);  // B.2.6
    }
    return d;
  };
  const auto process = [&](const uint4 (&buf)[kNVec], int pass) {
    const int j = pass * kRowsPass + jlane;
    if (!flush) {
      // The lane's two rows are independent FMA chains sharing each shared-memory operand.
      float pq[kRPL] = {}, pk[kRPL] = {};
#pragma unroll
      for (int mm = 0; mm < kNV1; ++mm) {
        const int k0 = chan(mm);
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const float dt = s_dt[k0 + e], qa = s_qa[k0 + e], ka = s_ka[k0 + e];
#pragma unroll
          for (int sel = 0; sel < kRPL; ++sel) {
            const float x = __fmul_rn(raw_elem<S>(buf[sel * kNV1 + mm], e), dt);  // float(S0) * Dtot
            pq[sel] = fmaf(x, qa, pq[sel]);
            pk[sel] = fmaf(x, ka, pk[sel]);
          }
        }
      }
      // Ring terms through the per-entry dot products; lane r takes entries i = r mod kGL.
      if (j < VT)
        for (int i = r; i < cr; i += kGL) {
          const float kwq = s_kwq[i], kwk = s_kwk[i];
#pragma unroll
          for (int sel = 0; sel < kRPL; ++sel) {
            const float d = rt<O>(to_f<R>(s_d[i * VT + j + sel]));
            pq[sel] = fmaf(d, kwq, pq[sel]);
            pk[sel] = fmaf(d, kwk, pk[sel]);
          }
        }
#pragma unroll
      for (int sel = 0; sel < kRPL; ++sel) finish(j + sel, pq[sel], pk[sel], r == sel);
      return;
    }
    // Flush: S_prev = S0 * Dtot + sum_i d_i kw_i^T, read out, fold the token, store.
    constexpr int kE1 = kNV1 * kV;  // channels per row of a lane
    float acc[kRPL][kE1];
#pragma unroll
    for (int sel = 0; sel < kRPL; ++sel)
#pragma unroll
      for (int mm = 0; mm < kNV1; ++mm)
#pragma unroll
        for (int e = 0; e < kV; ++e)
          acc[sel][mm * kV + e] = __fmul_rn(raw_elem<S>(buf[sel * kNV1 + mm], e), s_dt[chan(mm) + e]);
    for (int i = 0; i < cr; ++i) {
      float d[kRPL];
#pragma unroll
      for (int sel = 0; sel < kRPL; ++sel) d[sel] = j < VT ? rt<O>(to_f<R>(s_d[i * VT + j + sel])) : 0.f;
#pragma unroll
      for (int mm = 0; mm < kNV1; ++mm)
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const float kw = s_gk[i * K + chan(mm) + e];
#pragma unroll
          for (int sel = 0; sel < kRPL; ++sel) acc[sel][mm * kV + e] = fmaf(d[sel], kw, acc[sel][mm * kV + e]);
        }
    }
#pragma unroll
    for (int sel = 0; sel < kRPL; ++sel) {
      float pq = 0.f, pk = 0.f;
#pragma unroll
      for (int mm = 0; mm < kNV1; ++mm)
#pragma unroll
        for (int e = 0; e < kV; ++e) {
          const int k = chan(mm) + e;
          pq = fmaf(acc[sel][mm * kV + e], s_qa[k], pq);
          pk = fmaf(acc[sel][mm * kV + e], s_ka[k], pk);
        }
      const float d = finish(j + sel, pq, pk, r == sel);
      if (j + sel >= VT) continue;
      // B.2.7 item 3: rt(S_prev * alpha + d * k_hat), the fp32 multiply first, then the add.
#pragma unroll
      for (int mm = 0; mm < kNV1; ++mm) {
        const int k0 = chan(mm);
        float t[kV];
#pragma unroll
        for (int e = 0; e < kV; ++e)
          t[e] = __fadd_rn(__fmul_rn(acc[sel][mm * kV + e], s_al[k0 + e]), __fmul_rn(d, s_kh[k0 + e]));
        store_row_chunk<S>(st + (j + sel) * in.st_s2 + k0, vec, t);
      }
    }
  };
  if (!flush) {
    for (int pass = 0; pass < npass; pass += 2) {
      process(buf0, pass);
      if (pass + 2 < npass) load_pass(buf0, pass + 2);
      if (pass + 1 < npass) {
        process(buf1, pass + 1);
        if (pass + 3 < npass) load_pass(buf1, pass + 3);
      }
    }
  } else {
    for (int pass = 0; pass < npass; ++pass) {
      if (pass > 0) load_pass(buf0, pass);
      process(buf0, pass);
    }
  }
#ifdef KPARITY_REPLAY_TRACE
  if (tid == 0 && blockIdx.x < kTraceCtas) {
    unsigned smid;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
    auto& t = g_replay_trace[blockIdx.x];
    t[0] = tr_g0;
    t[1] = gtimer();
    t[2] = tr_c1 - tr_c0;
    t[3] = clock64() - tr_c0;
    t[4] = smid | (flush ? 256u : 0u);
  }
#endif
}

}  // namespace kparity::kernels::kda
