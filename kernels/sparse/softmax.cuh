#pragma once
// The online softmax and the epilogue shared by both sparse attention kernels (attn_kernel.cuh,
// wg_addr_kernel.cuh), on the m16n8 accumulator layout both use: a thread holds two rows (heads) r
// and r + 8, r = lane / 4, and for n8 tile j the two columns 8j + 2 (lane % 4) + {0, 1}; element e of
// a tile's four is row r for e < 2 and row r + 8 for e >= 2. The kernels keep their fragments in
// different arrays (mma.sync tiles, wgmma accumulators), so the helpers take them as accessors
// `s(j, e)` / `o(n, e)` returning float&. Everything is force-inlined: the abstraction costs no call
// and no register (ptxas counts equal to or below the hand-written form).
//
// Semantics (spec sparse_attention.md C.1-C.4, mirroring sglang unified_kv_kernels/paged_prefill.py):
// a -FLT_MAX running-max seed, masked keys at -inf so their weights are exactly 0, exp2 with log2(e)
// folded at the subtraction, the denominator summed from unrounded weights, the sink folded in once
// at the end as a zero-value logit.
#include <cfloat>

#include "common/float_bits.cuh"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse {

inline constexpr float kLog2e = 1.4426950408889634f;

namespace dev {

using kernels::dev::pos_inf;

// Running max and sum of the thread's two rows. The finite seed keeps a fully masked tile or an
// empty key set NaN-free: the max stays at the seed and the factor is exp2(0) = 1, where a -inf seed
// would give exp2(-inf - -inf) = NaN. l sums only this thread's keys until quad_sum() after the last
// tile.
struct RowPairStats {
  float m0 = -FLT_MAX, m1 = -FLT_MAX, l0 = 0.f, l1 = 0.f;
};

// Max and sum over the four lanes (lane % 4) that hold one row.
__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// What the softmax needs of one key of the tile: whether it is selected at all, and whether it is an
// extend-source row (which gets replicated_logit_shift, C.1 item 5).
struct KeyFlags {
  bool live, extend;
};

// One key tile of NJ n8 tiles: raw scores s(j, e) become the unrounded weights exp(s * scale (+ shift
// for extend keys) - m_new), `st` moves to the tile's running max and sum, and the returned factors (x: row r, y:
// row r + 8) rescale the rows' accumulators (rescale_rows). key(i) gives the flags of the tile's key i.
template <int NJ, class S, class Key>
__device__ __forceinline__ float2 softmax_tile(S&& s, Key&& key, int lane, float scale, float shift, RowPairStats& st) {
  float mx0 = -pos_inf(), mx1 = mx0;
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const KeyFlags f = key(j * 8 + 2 * (lane & 3) + e);
      const float add = f.extend ? shift : 0.f;
      s(j, e) = f.live ? s(j, e) * scale + add : -pos_inf();
      s(j, e + 2) = f.live ? s(j, e + 2) * scale + add : -pos_inf();
      mx0 = fmaxf(mx0, s(j, e));
      mx1 = fmaxf(mx1, s(j, e + 2));
    }
  mx0 = quad_max(mx0);
  mx1 = quad_max(mx1);
  const float mn0 = fmaxf(st.m0, mx0), mn1 = fmaxf(st.m1, mx1);
  const float a0 = exp2f((st.m0 - mn0) * kLog2e), a1 = exp2f((st.m1 - mn1) * kLog2e);
  st.m0 = mn0;
  st.m1 = mn1;
  float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
  for (int j = 0; j < NJ; ++j)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      s(j, e) = exp2f((s(j, e) - mn0) * kLog2e);
      s(j, e + 2) = exp2f((s(j, e + 2) - mn1) * kLog2e);
      rs0 += s(j, e);
      rs1 += s(j, e + 2);
    }
  st.l0 = st.l0 * a0 + rs0;  // unrounded weights in the denominator (C.4 item 4)
  st.l1 = st.l1 * a1 + rs1;
  return make_float2(a0, a1);
}

// O *= the factors softmax_tile returned, over NO n8 tiles of the accumulator.
template <int NO, class O>
__device__ __forceinline__ void rescale_rows(O&& o, float2 a) {
#pragma unroll
  for (int n = 0; n < NO; ++n) {
    o(n, 0) *= a.x;
    o(n, 1) *= a.x;
    o(n, 2) *= a.y;
    o(n, 3) *= a.y;
  }
}

// Split-K: the raw partials of split `split` for rows hr0 and hr0 + 8 (fp32 acc over the columns
// cbase + 8n + {0, 1}, and the running max and sum when `writes_stats`, one thread per row); the
// combine kernel merges the splits and folds the sink in.
template <int NO, class O>
__device__ __forceinline__ void store_partials(const AttnParams& p, O&& o, const RowPairStats& st, long long split,
                                               long long t, long long hr0, int cbase, long long D, bool writes_stats) {
  const long long hr1 = hr0 + 8;
  const long long w0 = (split * p.T + t) * p.H + hr0, w1 = w0 + 8;
  if (p.ws_vec2) {
    // Columns c and c + 1 of a row as one 8-byte store: c is even and D is even (the launcher sets
    // ws_vec2 only then), so c < D covers both, and w * D + c is even on a 16-byte-aligned workspace.
#pragma unroll
    for (int n = 0; n < NO; ++n) {
      const long long c = cbase + n * 8;
      if (c < D && hr0 < p.H) *reinterpret_cast<float2*>(p.ws_acc + w0 * D + c) = make_float2(o(n, 0), o(n, 1));
      if (c < D && hr1 < p.H) *reinterpret_cast<float2*>(p.ws_acc + w1 * D + c) = make_float2(o(n, 2), o(n, 3));
    }
  } else {
#pragma unroll
    for (int n = 0; n < NO; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long c = cbase + n * 8 + e;
        if (c < D && hr0 < p.H) p.ws_acc[w0 * D + c] = o(n, e);
        if (c < D && hr1 < p.H) p.ws_acc[w1 * D + c] = o(n, e + 2);
      }
  }
  if (writes_stats) {
    if (hr0 < p.H) p.ws_ml[2 * w0] = st.m0, p.ws_ml[2 * w0 + 1] = st.l0;
    if (hr1 < p.H) p.ws_ml[2 * w1] = st.m1, p.ws_ml[2 * w1 + 1] = st.l1;
  }
}

// How a row's accumulator becomes its output once the sink is folded in (C.3, C.4 item 5).
struct RowFinal {
  int kind;  // 0: acc * a / den; 1: zeros (Z is 0 or NaN: upstream's `where(l > 0, ...)`)
  float a, den, lse;
  __device__ __forceinline__ float operator()(float acc) const { return kind == 0 ? (acc * a) / den : 0.f; }
  // Two accumulators of the row under one test of `kind` (the per-element form leaves the compiler
  // a branch per element in the unrolled epilogue).
  __device__ __forceinline__ float2 operator()(float x, float y) const {
    if (kind == 0) return make_float2((x * a) / den, (y * a) / den);
    return make_float2(0.f, 0.f);
  }
};

// The sink logit `sig` folded into a row with running max m and sum l: returns RowFinal::kind and
// sets its factors. Upstream's convention (docs/upstream_conventions.md, measured on the H200): the
// running max drops NaN (fmaxf, like tl.max), so a NaN logit (NaN in q or a selected row), a NaN sink
// or a +inf logit or sink (exp(inf - inf)) makes only Z NaN, and `Z > 0` fails: zeros, lse -inf,
// whatever the accumulator holds.
__device__ __forceinline__ int finalize(float sig, float m, float l, float& a, float& den, float& lse) {
  a = 0.f;
  den = 1.f;
  const float M = sig > m ? sig : m;  // a NaN sink leaves m; Z below is NaN then
  const float am = exp2f((m - M) * kLog2e);
  const float Z = l * am + exp2f((sig - M) * kLog2e);
  if (Z > 0.f) {
    a = am;
    den = fmaxf(Z, 1e-30f);
    lse = M + logf(Z);
    return 0;
  }
  lse = -pos_inf();
  return 1;
}
__device__ __forceinline__ RowFinal finalize(float sig, float m, float l) {
  RowFinal f;
  f.kind = finalize(sig, m, l, f.a, f.den, f.lse);
  return f;
}

// The log-sum-exp of rows hr0 and hr0 + 8 (the caller picks one thread per row).
__device__ __forceinline__ void store_lse(const AttnParams& p, long long t, long long hr0, float lse0, float lse1) {
  if (hr0 < p.H) p.lse[t * p.lse_st + hr0 * p.lse_sh] = lse0;
  if (hr0 + 8 < p.H) p.lse[t * p.lse_st + (hr0 + 8) * p.lse_sh] = lse1;
}

// The staged output tile (kRows heads from h0, kChunks 16-byte chunks per head, kLd elements apart)
// to out, the block's threads striding over (head, chunk); 16-byte stores where out allows them.
template <class T, int kRows, int kChunks, int kLd, int kThreads>
__device__ __forceinline__ void store_out_tile(const AttnParams& p, const T* tile, int tid, long long t, long long h0,
                                               long long D) {
  static_assert((kChunks & (kChunks - 1)) == 0, "a power of two: (head, chunk) by shift and mask");
  constexpr int kShift = __builtin_ctz(kChunks);
  const long long hn = min(static_cast<long long>(kRows), p.H - h0);
  for (int c = tid; c < kRows * kChunks; c += kThreads) {
    const int r = c >> kShift, cc = c & (kChunks - 1);
    if (r >= hn || cc * 8 >= D) continue;
    T* dst = static_cast<T*>(p.out) + t * p.out_st + (h0 + r) * p.out_sh + cc * 8 * p.out_sd;
    const T* src = tile + r * kLd + cc * 8;
    if (p.vec_out) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int e = 0; e < 8 && cc * 8 + e < D; ++e) dst[e * p.out_sd] = src[e];
    }
  }
}

}  // namespace dev
}  // namespace kparity::kernels::sparse
