#pragma once
// Split-K combine of sparse/paged_decode (mirrors the reduce of sglang unified_kv_kernels/paged_decode.py):
// merge the (max, sum, acc) partials of the splits of one (token, head), fold the sink in once, divide
// directly. One CTA per (token, head). Both kernels compute the same values in the same order, so
// their results are equal bit for bit:
//   M = max_s m_s (exact in any order); w_s = exp2f((m_s - M) * log2 e); l = sum_s l_s w_s over a
//   fixed shuffle tree of four warps; per channel d, acc = fma(acc_{S-1,d}, w_{S-1}, ... fma(acc_{0,d},
//   w_0, 0)), the splits in index order; out_d = RowFinal(acc) (softmax.cuh).
// The error bound of reference/sparse/error_bound.cpp counts the combine as one more fp32 factor per
// weight and the splits' sums among the n + 1 terms of Z, so neither kernel changes what it models.
//  - sparse_combine_kernel<T, false>: one thread per channel, the splits' partials loaded one after another
//    (8 in flight per thread). Latency-bound when splits are many: 2026-12-01, T = 1, 128 splits:
//    61 us of which most is this loop (4 KiB in flight per SM).
//  - sparse_combine_kernel<T, true> (LaunchOptions::decode_variant 2, and the small-T decode kernel):
//    one thread per 4 channels, the float4 partials of kCombineBatch splits in flight before the first
//    is used, the first batch issued before the weights (one memory round trip for both).
#include <cfloat>

#include "common/pdl.cuh"
#include "sparse/mma.cuh"
#include "sparse/params.hpp"
#include "sparse/softmax.cuh"
#include "sparse/token_rows.cuh"

namespace kparity::kernels::sparse {

// One thread per split in the weight phase, so the (max, sum) pairs load in parallel.
inline constexpr int kCombineThreads = kMaxSplits;
static_assert(kCombineThreads == 4 * 32, "the block reductions below combine exactly four warps");
inline constexpr int kCombineBatch = 16;  // splits' float4 partials in flight per thread (wide kernel)

namespace dev {

// The split weights of row (t, h) into w[0, S) and the row's finalisation (the sink folded in);
// thread 0 stores the lse. Ends with a barrier, after which w is visible to every thread.
__device__ __forceinline__ RowFinal combine_weights(const AttnParams& p, long long t, long long h, float* w,
                                                    float* red, float* stat) {
  const int S = static_cast<int>(p.splits), i = threadIdx.x, lane = i & 31, wp = i >> 5;
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
    const RowFinal f = finalize(sink_of(p, h), M, (red[0] + red[1]) + (red[2] + red[3]));
    stat[0] = static_cast<float>(f.kind), stat[1] = f.a, stat[2] = f.den;
    if (p.has_lse) p.lse[t * p.lse_st + h * p.lse_sh] = f.lse;
  }
  __syncthreads();
  return RowFinal{static_cast<int>(stat[0]), stat[1], stat[2], 0.f};
}

}  // namespace dev

// kWide: the wide kernel's channel loop, else the established one (the header says how they differ).
template <class T, bool kWide>
__global__ void __launch_bounds__(kCombineThreads) sparse_combine_kernel(const AttnParams p) {
  kernels::dev::pdl_entry();  // the attention kernel's partials are complete and visible past this
  __shared__ float w[kMaxSplits];
  __shared__ float red[kCombineThreads / 32];
  __shared__ float stat[3];
  const long long th = blockIdx.x, t = th / p.H, h = th % p.H;
  const int S = static_cast<int>(p.splits);
  const long long D = p.D;
  T* out = static_cast<T*>(p.out) + t * p.out_st + h * p.out_sh;
  if constexpr (!kWide) {
    const dev::RowFinal f = dev::combine_weights(p, t, h, w, red, stat);
    for (long long d = threadIdx.x; d < D; d += blockDim.x) {
      float acc = 0.f;
#pragma unroll 8
      for (int s = 0; s < S; ++s) acc = fmaf(p.ws_acc[((s * p.T + t) * p.H + h) * D + d], w[s], acc);
      out[d * p.out_sd] = dev::MmaOp<T>::from_f(f(acc));
    }
  } else {
    const long long split_step = p.T * p.H * D;
    const float* row = p.ws_acc + (t * p.H + h) * D;  // split 0's partial of (t, h)
    // 16-byte loads: the workspace is 16-byte aligned (the launcher checks) and D % 4 == 0 keeps
    // every row and channel quadruple on a 16-byte boundary.
    const bool vec4 = (D & 3) == 0;
    const auto load = [&](long long d0, int s) {
      const float* src = row + s * split_step + d0;
      if (s >= S) return make_float4(0.f, 0.f, 0.f, 0.f);
      if (vec4) return *reinterpret_cast<const float4*>(src);
      // d0 < D; channels past D are read as 0 and never stored
      return make_float4(src[0], d0 + 1 < D ? src[1] : 0.f, d0 + 2 < D ? src[2] : 0.f, d0 + 3 < D ? src[3] : 0.f);
    };
    // The first batch of the thread's first quadruple is loaded before the weights, so those loads
    // and the (max, sum) loads share one memory round trip (D <= 512: one quadruple per thread).
    float4 v[kCombineBatch];
    const long long first = 4LL * threadIdx.x;
    if (first < D) {
#pragma unroll
      for (int k = 0; k < kCombineBatch; ++k) v[k] = load(first, k);
    }
    const dev::RowFinal f = dev::combine_weights(p, t, h, w, red, stat);
    for (long long d0 = first; d0 < D; d0 += 4LL * kCombineThreads) {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
      for (int s0 = 0; s0 < S; s0 += kCombineBatch) {
        if (s0 > 0 || d0 != first) {
#pragma unroll
          for (int k = 0; k < kCombineBatch; ++k) v[k] = load(d0, s0 + k);
        }
#pragma unroll
        for (int k = 0; k < kCombineBatch; ++k) {
          if (s0 + k < S) {
            const float ws = w[s0 + k];
            acc[0] = fmaf(v[k].x, ws, acc[0]);
            acc[1] = fmaf(v[k].y, ws, acc[1]);
            acc[2] = fmaf(v[k].z, ws, acc[2]);
            acc[3] = fmaf(v[k].w, ws, acc[3]);
          }
        }
      }
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (d0 + e < D) out[(d0 + e) * p.out_sd] = dev::MmaOp<T>::from_f(f(acc[e]));
    }
  }
}

}  // namespace kparity::kernels::sparse
