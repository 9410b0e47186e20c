#pragma once
// Sparse MQA attention with a zero-value sink (spec sparse_attention.md C.1-C.4). One CTA = one token
// x HT heads (x one key range under split-K). All heads of a token share its selected rows, so the
// CTA gathers kBK rows at a time into shared memory (cp.async, kStages deep) and runs S = Q.K^T and
// O += P.V on tensor cores (mma.sync m16n8k16, fp32 accumulation). Warps form RB row blocks of 16
// heads x DS slices of D: each warp computes its D-slice's partial of S (summed through shared
// memory) and owns the O columns of that slice, so a 64 x 512 fp32 O fits in registers.
// The loop mirrors sglang unified_kv_kernels/paged_prefill.py: -FLT_MAX running-max seed, masked
// weights forced to 0, weights rounded to the storage dtype for P.V only, sink folded in at the end.
#include <cfloat>
#include <cstdint>

#include "sparse/mma.cuh"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse {

inline constexpr int kThreads = 256, kWarps = 8, kBK = 32, kStages = 3;
inline constexpr int kSlots = kStages + 1;  // decoded row codes: written one iteration before use
inline constexpr float kLog2e = 1.4426950408889634f;

template <int DP, int HT, int ELEM>
struct Geo {
  static constexpr int RB = HT / 16;        // row blocks of 16 heads
  static constexpr int DS = kWarps / RB;    // D slices
  static constexpr int SL = DP / DS;        // D columns per warp
  static constexpr int LD = DP + 8;         // +16 bytes per row: ldmatrix rows hit distinct banks
  static constexpr int CPR = DP / 8;        // 16-byte chunks per row
  static constexpr int KCH = kBK * CPR / kThreads;  // KV chunks per thread per tile
  static constexpr int RSTEP = kThreads / CPR;       // rows between one thread's chunks
  static constexpr int NTO = SL / 8;        // n8 tiles of O per warp
  static_assert(SL >= 16 && SL % 16 == 0 && KCH >= 1, "unsupported (DP, HT)");
  static constexpr std::size_t q_bytes = std::size_t(HT) * LD * ELEM;
  static constexpr std::size_t kv_bytes = std::size_t(kStages) * kBK * LD * ELEM;
  static constexpr std::size_t x_bytes = DS > 1 ? std::size_t(kWarps) * 16 * 32 * 4 : 0;
  static constexpr std::size_t smem = q_bytes + kv_bytes + x_bytes + std::size_t(kStages + kSlots) * kBK * 4;
};

namespace dev {

__device__ __forceinline__ long long ld_int(const void* p, int dt, long long i) {
  return dt == kSpI64 ? __ldg(static_cast<const long long*>(p) + i) : static_cast<long long>(__ldg(static_cast<const int*>(p) + i));
}
__device__ __forceinline__ float ld_float(const void* p, int dt, long long i) {
  if (dt == kSpF32) return static_cast<const float*>(p)[i];
  if (dt == kSpBF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  return __half2float(static_cast<const __half*>(p)[i]);
}

// Sink finalisation (C.3, C.4 item 5). Returns 0: out = acc * a / den; 1: zeros; 2: NaN (the
// reference makes NaN in a selected row, q or the sink explicit, C.3). `m`, `l`: running max and sum.
__device__ __forceinline__ int finalize(float sig, float m, float l, float& a, float& den, float& lse) {
  a = 0.f;
  den = 1.f;
  if (sig == __int_as_float(0x7f800000)) {  // +inf: Z = exp(inf - inf) is NaN, upstream's Z > 0 fails
    lse = -__int_as_float(0x7f800000);
    return 1;
  }
  const float M = sig > m ? sig : m;
  a = exp2f((m - M) * kLog2e);
  const float Z = l * a + exp2f((sig - M) * kLog2e);
  if (isnan(sig) || isnan(Z)) {
    lse = __int_as_float(0x7fc00000);
    return 2;
  }
  if (Z > 0.f) {
    den = fmaxf(Z, 1e-30f);
    lse = M + logf(Z);
    return 0;
  }
  lse = -__int_as_float(0x7f800000);
  return 1;
}

// The selected rows of query token t and this CTA's share of them: the prefix span [pb, pb + np)
// and the extend span [eb, eb + ne) of the two CSR sources (a decreasing pair is an empty span,
// C.1 item 1), concatenated, and split `split` of p.splits takes [j0, j1) in whole tiles of kTile.
struct TokenSpans {
  long long pb, np, eb = 0, ne = 0, j0, j1;
  int ntiles;
};
template <int kTile>
__device__ __forceinline__ TokenSpans token_spans(const AttnParams& p, long long t, long long split) {
  TokenSpans sp;
  sp.pb = ld_int(p.ptr[0], p.ptr_dt[0], t * p.ptr_s[0]);
  sp.np = max(0LL, ld_int(p.ptr[0], p.ptr_dt[0], (t + 1) * p.ptr_s[0]) - sp.pb);
  if (p.ptr[1] != nullptr) {
    sp.eb = ld_int(p.ptr[1], p.ptr_dt[1], t * p.ptr_s[1]);
    sp.ne = max(0LL, ld_int(p.ptr[1], p.ptr_dt[1], (t + 1) * p.ptr_s[1]) - sp.eb);
  }
  const long long n_all = sp.np + sp.ne;
  const long long per = ((n_all + kTile - 1) / kTile + p.splits - 1) / p.splits * kTile;
  sp.j0 = split * per;
  sp.j1 = min(n_all, sp.j0 + per);
  sp.ntiles = sp.j1 > sp.j0 ? static_cast<int>((sp.j1 - sp.j0 + kTile - 1) / kTile) : 0;
  return sp;
}

// Entry j of the concatenated list as raw words, loaded without waiting for them (the index
// threads load a tile ahead and decode an iteration later): int64 entries as two words, int32 ones
// the same word twice; kind 0 past the share, 1 prefix, 2 extend.
struct RawIndex {
  int lo = 0, hi = 0, kind = 0;
};
__device__ __forceinline__ RawIndex load_raw_index(const AttnParams& p, const TokenSpans& sp, long long j) {
  RawIndex r;
  if (j < sp.j1) {
    const bool pre = j < sp.np;
    const int s = pre ? 0 : 1;
    const bool wide = p.idx_dt[s] == kSpI64;
    const char* a = static_cast<const char*>(p.idx[s]) + (pre ? sp.pb + j : sp.eb + j - sp.np) * p.idx_s[s] * (wide ? 8 : 4);
    r.lo = __ldg(reinterpret_cast<const int*>(a));
    r.hi = __ldg(reinterpret_cast<const int*>(a + (wide ? 4 : 0)));
    r.kind = pre ? 1 : 2;
  }
  return r;
}
// The entry's row in its source, or -1 when masked: past the share, negative (C.1 item 3), or too
// large for the int32 row codes.
__device__ __forceinline__ long long raw_index_row(const AttnParams& p, const RawIndex& r) {
  if (r.kind == 0) return -1;
  const bool wide = p.idx_dt[r.kind - 1] == kSpI64;
  const long long v = wide ? static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(r.hi)) << 32) |
                                                    static_cast<unsigned>(r.lo))
                           : static_cast<long long>(r.lo);
  return v >= 0 && v <= 0x7ffffffdLL ? v : -1;
}

__device__ __forceinline__ float sink_of(const AttnParams& p, long long h) {
  return h < p.H ? ld_float(p.sink, p.sink_dt, h * p.sink_s) + p.shift : -__int_as_float(0x7f800000);
}

}  // namespace dev

template <class T, int DP, int HT>
__global__ void __launch_bounds__(kThreads, 1) sparse_attn_kernel(const AttnParams p) {
  using G = Geo<DP, HT, sizeof(T)>;
  using Op = dev::MmaOp<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sKV = reinterpret_cast<T*>(smem + G::q_bytes);
  float* sX = reinterpret_cast<float*>(smem + G::q_bytes + G::kv_bytes);
  int* sF = reinterpret_cast<int*>(smem + G::q_bytes + G::kv_bytes + G::x_bytes);
  int* sCode = sF + kStages * kBK;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rb = warp % G::RB, ds = warp / G::RB;
  long long bid = blockIdx.x;
  const long long split = bid % p.splits;
  bid /= p.splits;
  const long long h0 = (bid % p.n_head_tiles) * HT, t = bid / p.n_head_tiles;
  const long long D = p.D;

  const dev::TokenSpans sp = dev::token_spans<kBK>(p, t, split);
  const int ntiles = sp.ntiles;

  // Warp 0 loads one entry per lane a tile ahead and decodes it into shared memory an iteration
  // later, so no thread ever waits on an index load (a per-thread fetch serialised 8 round trips).
  // Row code: >= 0 prefix row, <= -2 extend row (-code - 2), -1 masked (past the range, or any
  // negative entry: C.1 item 3).
  auto load_raw = [&](int k) { return dev::load_raw_index(p, sp, sp.j0 + static_cast<long long>(k) * kBK + lane); };
  auto decode = [&](const dev::RawIndex& r, int k) {
    const long long v = dev::raw_index_row(p, r);
    const int code = v < 0 ? -1 : r.kind == 1 ? static_cast<int>(v) : static_cast<int>(-v - 2);
    sCode[(k % kSlots) * kBK + lane] = code;
  };

  const int col8 = tid % G::CPR, row0 = tid / G::CPR;
  auto issue = [&](int k) {
    const int stage = k % kStages;
    const int* codes = sCode + (k % kSlots) * kBK;
    T* base = sKV + stage * kBK * G::LD;
#pragma unroll
    for (int i = 0; i < G::KCH; ++i) {
      const int r = row0 + i * G::RSTEP, code = codes[r];
      if (col8 == 0) sF[stage * kBK + r] = code == -1 ? 0 : (code >= 0 ? 1 : 2);
      T* dst = base + r * G::LD + col8 * 8;
      const bool valid = code != -1 && col8 * 8 < D;
      const T* src = static_cast<const T*>(p.q);
      long long sd = 0;
      if (valid) {
        const int s = code >= 0 ? 0 : 1;
        const long long row = code >= 0 ? code : -static_cast<long long>(code) - 2;
        sd = p.src_sd[s];
        src = static_cast<const T*>(p.src[s]) + row * p.src_sr[s] + col8 * 8 * sd;
      }
      if (p.vec_kv) {
        dev::cp_async16(dst, src, valid ? 16 : 0);  // masked rows become zeros: 0 * garbage could be NaN
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = (valid && col8 * 8 + e < D) ? src[e * sd] : Op::from_f(0.f);
      }
    }
  };

  // Q tile (heads past H and channels past D are zeros, so they add nothing to S).
  for (int c = tid; c < HT * G::CPR; c += kThreads) {
    const int r = c / G::CPR, cc = c % G::CPR;
    T* dst = sQ + r * G::LD + cc * 8;
    const bool valid = h0 + r < p.H && cc * 8 < D;
    const T* src = valid ? static_cast<const T*>(p.q) + t * p.q_st + (h0 + r) * p.q_sh + cc * 8 * p.q_sd
                         : static_cast<const T*>(p.q);
    if (p.vec_q) {
      dev::cp_async16(dst, src, valid ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = (valid && cc * 8 + e < D) ? src[e * p.q_sd] : Op::from_f(0.f);
    }
  }
  dev::RawIndex raw;
  if (warp == 0) {
    const dev::RawIndex r0 = load_raw(0), r1 = load_raw(1), r2 = load_raw(2);
    decode(r0, 0);
    decode(r1, 1);
    decode(r2, 2);
    raw = load_raw(3);
  }
  static_assert(kStages == 3, "the prologue decodes kStages tiles");
  __syncthreads();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) issue(s);
    dev::cp_async_commit();
  }

  float o[G::NTO][4];
#pragma unroll
  for (int n = 0; n < G::NTO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  float m0 = -FLT_MAX, m1 = -FLT_MAX, l0 = 0.f, l1 = 0.f;  // finite seed: empty sets stay NaN-free
  const float scale = p.scale, shift = p.shift;
  const int qrow = rb * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, qcol = ((lane >> 4) & 1) * 8;
  const int krow = (lane & 7) + ((lane >> 4) & 1) * 8, kcol = ((lane >> 3) & 1) * 8;
  const int vrow = (lane & 7) + ((lane >> 3) & 1) * 8, vcol = ((lane >> 4) & 1) * 8;

  for (int it = 0; it < ntiles; ++it) {
    dev::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile `it` landed; every warp is done with the stage refilled next
    {
      const int nx = it + kStages - 1;
      if (nx < ntiles) issue(nx);
      dev::cp_async_commit();
      if (warp == 0 && nx + 1 < ntiles) {  // read by the issue of the next iteration, after its barrier
        decode(raw, nx + 1);
        raw = load_raw(nx + 2);
      }
    }
    const int st = it % kStages;
    const T* sK = sKV + st * kBK * G::LD;

    float s[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < G::SL / 16; ++kk) {
      const int k0 = ds * G::SL + kk * 16;
      std::uint32_t a[4];
      dev::ldsm_x4(a, sQ + qrow * G::LD + k0 + qcol);
#pragma unroll
      for (int np2 = 0; np2 < 2; ++np2) {
        std::uint32_t b[4];
        dev::ldsm_x4(b, sK + (np2 * 16 + krow) * G::LD + k0 + kcol);
        Op::run(s[2 * np2], a, b[0], b[1]);
        Op::run(s[2 * np2 + 1], a, b[2], b[3]);
      }
    }
    if constexpr (G::DS > 1) {
      // Sum the D-slice partials in a fixed order so every warp of a row block holds identical S.
      float* mine = sX + warp * 16 * 32 + lane;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) mine[(j * 4 + e) * 32] = s[j][e];
      __syncthreads();
#pragma unroll
      for (int j = 0; j < 4; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
      for (int d = 0; d < G::DS; ++d) {
        const float* src = sX + (d * G::RB + rb) * 16 * 32 + lane;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[j][e] += src[(j * 4 + e) * 32];
      }
    }

    const int* fl = sF + st * kBK;
    float mx0 = -__int_as_float(0x7f800000), mx1 = mx0;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int f = fl[j * 8 + 2 * (lane & 3) + e];
        const float add = f == 2 ? shift : 0.f;  // replicated_logit_shift: extend rows only (C.1 item 5)
        s[j][e] = f ? s[j][e] * scale + add : -__int_as_float(0x7f800000);
        s[j][e + 2] = f ? s[j][e + 2] * scale + add : -__int_as_float(0x7f800000);
        mx0 = fmaxf(mx0, s[j][e]);
        mx1 = fmaxf(mx1, s[j][e + 2]);
      }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
    const float a0 = exp2f((m0 - mn0) * kLog2e), a1 = exp2f((m1 - mn1) * kLog2e);
    m0 = mn0;
    m1 = mn1;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[j][e] = exp2f((s[j][e] - mn0) * kLog2e);
        s[j][e + 2] = exp2f((s[j][e + 2] - mn1) * kLog2e);
        rs0 += s[j][e];
        rs1 += s[j][e + 2];
      }
    l0 = l0 * a0 + rs0;  // unrounded weights in the denominator (C.4 item 4)
    l1 = l1 * a1 + rs1;
#pragma unroll
    for (int n = 0; n < G::NTO; ++n) {
      o[n][0] *= a0;
      o[n][1] *= a0;
      o[n][2] *= a1;
      o[n][3] *= a1;
    }
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      const std::uint32_t a[4] = {Op::pack(s[2 * kk][0], s[2 * kk][1]), Op::pack(s[2 * kk][2], s[2 * kk][3]),
                                  Op::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                  Op::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int n2 = 0; n2 < G::NTO / 2; ++n2) {
        std::uint32_t b[4];
        dev::ldsm_x4_t(b, sK + (kk * 16 + vrow) * G::LD + ds * G::SL + n2 * 16 + vcol);
        Op::run(o[2 * n2], a, b[0], b[1]);
        Op::run(o[2 * n2 + 1], a, b[2], b[3]);
      }
    }
  }
  dev::cp_async_wait<0>();

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const long long hr0 = h0 + rb * 16 + (lane >> 2), hr1 = hr0 + 8;
  const int cbase = ds * G::SL + 2 * (lane & 3);

  if (p.ws_acc != nullptr) {  // split-K: raw partials, the combine kernel folds the sink in
    const long long w0 = (split * p.T + t) * p.H + hr0, w1 = w0 + 8;
#pragma unroll
    for (int n = 0; n < G::NTO; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long c = cbase + n * 8 + e;
        if (c < D && hr0 < p.H) p.ws_acc[w0 * D + c] = o[n][e];
        if (c < D && hr1 < p.H) p.ws_acc[w1 * D + c] = o[n][e + 2];
      }
    if (ds == 0 && (lane & 3) == 0) {
      if (hr0 < p.H) p.ws_ml[2 * w0] = m0, p.ws_ml[2 * w0 + 1] = l0;
      if (hr1 < p.H) p.ws_ml[2 * w1] = m1, p.ws_ml[2 * w1 + 1] = l1;
    }
    return;
  }

  float fa0, den0, lse0, fa1, den1, lse1;
  const int k0 = dev::finalize(dev::sink_of(p, hr0), m0, l0, fa0, den0, lse0);
  const int k1 = dev::finalize(dev::sink_of(p, hr1), m1, l1, fa1, den1, lse1);
  __syncthreads();  // every warp is done reading sQ: it becomes the output staging tile
  const float nan = __int_as_float(0x7fc00000);
  const int orow = rb * 16 + (lane >> 2);
#pragma unroll
  for (int n = 0; n < G::NTO; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int c = cbase + n * 8 + e;
      const float v0 = k0 == 0 ? (o[n][e] * fa0) / den0 : (k0 == 1 ? 0.f : nan);
      const float v1 = k1 == 0 ? (o[n][e + 2] * fa1) / den1 : (k1 == 1 ? 0.f : nan);
      sQ[orow * G::LD + c] = Op::from_f(v0);
      sQ[(orow + 8) * G::LD + c] = Op::from_f(v1);
    }
  if (p.lse != nullptr && ds == 0 && (lane & 3) == 0) {
    if (hr0 < p.H) p.lse[t * p.lse_st + hr0 * p.lse_sh] = lse0;
    if (hr1 < p.H) p.lse[t * p.lse_st + hr1 * p.lse_sh] = lse1;
  }
  __syncthreads();
  const long long hn = min(static_cast<long long>(HT), p.H - h0);
  for (int c = tid; c < HT * G::CPR; c += kThreads) {
    const int r = c / G::CPR, cc = c % G::CPR;
    if (r >= hn || cc * 8 >= D) continue;
    T* dst = static_cast<T*>(p.out) + t * p.out_st + (h0 + r) * p.out_sh + cc * 8 * p.out_sd;
    const T* src = sQ + r * G::LD + cc * 8;
    if (p.vec_out) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int e = 0; e < 8 && cc * 8 + e < D; ++e) dst[e * p.out_sd] = src[e];
    }
  }
}

// Split-K combine (mirrors the reduce of sglang unified_kv_kernels/paged_decode.py): merge the
// (max, sum, acc) partials, fold the sink in once, divide directly.
template <class T>
__global__ void __launch_bounds__(128) sparse_combine_kernel(const AttnParams p) {
  __shared__ float w[128];
  __shared__ float red[4];
  __shared__ float stat[4];
  const long long th = blockIdx.x, t = th / p.H, h = th % p.H;
  const int S = static_cast<int>(p.splits), i = threadIdx.x, lane = i & 31, wp = i >> 5;
  // One split per thread: the partials load in parallel (a serial loop paid an L2 trip per split).
  const long long at = 2 * ((static_cast<long long>(i < S ? i : 0) * p.T + t) * p.H + h);
  const float mi = i < S ? p.ws_ml[at] : -FLT_MAX, li = i < S ? p.ws_ml[at + 1] : 0.f;
  float M = mi;
  for (int o = 16; o > 0; o >>= 1) M = fmaxf(M, __shfl_xor_sync(0xffffffffu, M, o));
  if (lane == 0) red[wp] = M;
  __syncthreads();
  M = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
  const float wi = exp2f((mi - M) * kLog2e);
  if (i < S) w[i] = wi;
  float l = i < S ? li * wi : 0.f;
  for (int o = 16; o > 0; o >>= 1) l += __shfl_xor_sync(0xffffffffu, l, o);
  __syncthreads();
  if (lane == 0) red[wp] = l;
  __syncthreads();
  if (i == 0) {
    float a, den, lse;
    const int k = dev::finalize(dev::sink_of(p, h), M, (red[0] + red[1]) + (red[2] + red[3]), a, den, lse);
    stat[0] = static_cast<float>(k), stat[1] = a, stat[2] = den, stat[3] = lse;
  }
  __syncthreads();
  const int k = static_cast<int>(stat[0]);
  const float a = stat[1], den = stat[2];
  for (long long d = i; d < p.D; d += blockDim.x) {
    float acc = 0.f;
#pragma unroll 8
    for (int s = 0; s < S; ++s) acc += p.ws_acc[((s * p.T + t) * p.H + h) * p.D + d] * w[s];
    const float v = k == 0 ? (acc * a) / den : (k == 1 ? 0.f : __int_as_float(0x7fc00000));
    static_cast<T*>(p.out)[t * p.out_st + h * p.out_sh + d * p.out_sd] = dev::MmaOp<T>::from_f(v);
  }
  if (i == 0 && p.lse != nullptr) p.lse[t * p.lse_st + h * p.lse_sh] = stat[3];
}

}  // namespace kparity::kernels::sparse
