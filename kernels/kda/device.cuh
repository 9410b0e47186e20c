#pragma once
// Device helpers shared by the KDA kernels: dtype conversion with the spec's rt(), 16-byte
// vector loads/stores of state rows, run-time-dtype loads of the small inputs, reductions.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "common/align.hpp"
#include "common/async_copy.cuh"
#include "kda/params.hpp"

namespace kparity::kernels::kda::dev {

using kernels::dev::cp_async16;
using kernels::dev::cp_async_wait_all;

template <class T> __device__ __forceinline__ float to_f(T x);
template <> __device__ __forceinline__ float to_f<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_f<__half>(__half x) { return __half2float(x); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }

// Round-to-nearest-even narrowing, as the reference's round_through.
template <class T> __device__ __forceinline__ T from_f(float x);
template <> __device__ __forceinline__ float from_f<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_f<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }

// rt(x, T) of kda.md section 0.
template <class T> __device__ __forceinline__ float rt(float x) { return to_f<T>(from_f<T>(x)); }

__device__ __forceinline__ float rt_code(float x, int dt) {
  if (dt == kBF16) return rt<__nv_bfloat16>(x);
  if (dt == kF16) return rt<__half>(x);
  return x;
}

__device__ __forceinline__ float ld_any(const void* p, int dt, std::int64_t i) {
  switch (dt) {
    case kF16: return __half2float(static_cast<const __half*>(p)[i]);
    case kBF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    default: return static_cast<const float*>(p)[i];
  }
}
__device__ __forceinline__ void st_any(void* p, int dt, std::int64_t i, float v) {
  switch (dt) {
    case kF16: static_cast<__half*>(p)[i] = __float2half_rn(v); break;
    case kBF16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(p)[i] = v;
  }
}
__device__ __forceinline__ std::int64_t ld_index(const void* p, int dt, std::int64_t i) {
  return dt == kI64 ? static_cast<const std::int64_t*>(p)[i] : std::int64_t(static_cast<const std::int32_t*>(p)[i]);
}

// Elements of T per 16-byte vector.
template <class T> inline constexpr int kVec = 16 / sizeof(T);

template <class T>
__device__ __forceinline__ uint4 load_raw16(const T* p, bool vec) {
  if (vec) return __ldcs(reinterpret_cast<const uint4*>(p));
  uint4 raw;
  T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec<T>; ++i) e[i] = p[i];
  return raw;
}
template <class T>
__device__ __forceinline__ float raw_elem(const uint4& raw, int e) {
  return to_f<T>(reinterpret_cast<const T*>(&raw)[e]);
}

// Run-time-typed loads that leave the bits unconverted until the value is used. With ld_any the
// conversion is compiled right behind each load (a branch per dtype), so the thread stalls there
// and N token loads cost N memory round trips in a row (seen in the SASS of the streaming kernel:
// LDG, conversion, LDG, conversion ...). One predicated load per value instead, converted by
// raw_f() where it is first needed, so all of a preamble's loads share one round trip.
__device__ __forceinline__ std::uint32_t ld_raw(const void* p, int dt, std::int64_t i) {
  const int wide = dt != kF16 && dt != kBF16;
  const char* a = static_cast<const char*>(p) + i * (wide ? 4 : 2);
  std::uint32_t r;
  asm volatile(
      "{\n\t.reg .pred w;\n\tsetp.ne.s32 w, %2, 0;\n\t"
      "@w ld.global.u32 %0, [%1];\n\t@!w ld.global.u16 %0, [%1];\n\t}"
      : "=r"(r)
      : "l"(a), "r"(wide));
  return r;
}
__device__ __forceinline__ float raw_f(std::uint32_t raw, int dt) {
  if (dt == kF16) return __half2float(__ushort_as_half(static_cast<unsigned short>(raw)));
  if (dt == kBF16) return __uint_as_float(raw << 16);
  return __uint_as_float(raw);
}
// Slot index (int32 or int64) and int32 control values, sign-extended by the load itself.
__device__ __forceinline__ std::int64_t ld_index_raw(const void* p, int dt, std::int64_t i) {
  const int wide = dt == kI64;
  const char* a = static_cast<const char*>(p) + i * (wide ? 8 : 4);
  std::int64_t r;
  asm volatile(
      "{\n\t.reg .pred w;\n\tsetp.ne.s32 w, %2, 0;\n\t"
      "@w ld.global.s64 %0, [%1];\n\t@!w ld.global.s32 %0, [%1];\n\t}"
      : "=l"(r)
      : "l"(a), "r"(wide));
  return r;
}
__device__ __forceinline__ std::int64_t ld_s32(const std::int32_t* p) {
  std::int64_t r;
  asm volatile("ld.global.s32 %0, [%1];" : "=l"(r) : "l"(p));
  return r;
}

// Loads kVec<T> consecutive elements as fp32. `vec` selects the 16-byte path (the caller proved
// alignment); the scalar path serves strided states whose rows are not 16-byte aligned. The
// state is streamed once per call, so it is read with the evict-first hint.
template <class T>
__device__ __forceinline__ void load_row_chunk(const T* p, bool vec, float (&o)[kVec<T>]) {
  if (vec) {
    uint4 raw = __ldcs(reinterpret_cast<const uint4*>(p));
    const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
    for (int i = 0; i < kVec<T>; ++i) o[i] = to_f<T>(e[i]);
  } else {
#pragma unroll
    for (int i = 0; i < kVec<T>; ++i) o[i] = to_f<T>(p[i]);
  }
}
template <class T>
__device__ __forceinline__ void store_row_chunk(T* p, bool vec, const float (&v)[kVec<T>]) {
  if (vec) {
    uint4 raw;
    T* e = reinterpret_cast<T*>(&raw);
#pragma unroll
    for (int i = 0; i < kVec<T>; ++i) e[i] = from_f<T>(v[i]);
    __stcs(reinterpret_cast<uint4*>(p), raw);
  } else {
#pragma unroll
    for (int i = 0; i < kVec<T>; ++i) p[i] = from_f<T>(v[i]);
  }
}

// The token inputs of one (row b, value head hv, q/k head h) as raw bits (ld_raw), every load in
// flight at once: key channels tid + u * kThreads of q, k, a and dt_bias, then A_log and b. The
// decode kernels convert them (raw_f) only where they are used (ReplaySSM: after its state and ring
// loads are issued), so all of them cost one memory round trip.
template <int K, int kThreads>
struct TokenBits {
  static constexpr int kCh = (K + kThreads - 1) / kThreads;
  std::uint32_t q[kCh], k[kCh], a[kCh], dtb[kCh], A_log, b_logit;
  __device__ __forceinline__ void load(const DecodeInputs& in, std::int64_t b, std::int64_t hv, std::int64_t h,
                                       int tid) {
    const char* qkv = static_cast<const char*>(in.qkv);
    const std::int64_t qrow = b * in.qkv_s0;
#pragma unroll
    for (int u = 0; u < kCh; ++u) {
      const int c = tid + u * kThreads;
      q[u] = k[u] = a[u] = dtb[u] = 0;
      if (c >= K) continue;
      q[u] = ld_raw(qkv, in.qkv_dt, qrow + (h * K + c) * in.qkv_s1);
      k[u] = ld_raw(qkv, in.qkv_dt, qrow + (in.H * K + h * K + c) * in.qkv_s1);
      a[u] = ld_raw(in.a, in.a_dt, b * in.a_s0 + hv * in.a_sh + c * in.a_sk);
      dtb[u] = ld_raw(in.dt_bias, in.dtb_dt, hv * in.dtb_sh + c * in.dtb_sk);
    }
    A_log = ld_raw(in.A_log, in.A_dt, hv * in.A_s0);
    b_logit = ld_raw(in.b, in.b_dt, b * in.b_s0 + hv * in.b_s1);
  }
  // The gate input a + dt_bias of channel slot u, in fp32 (kda.md A.3).
  __device__ __forceinline__ float gate_x(const DecodeInputs& in, int u) const {
    return raw_f(a[u], in.a_dt) + raw_f(dtb[u], in.dtb_dt);
  }
};

// `rows` rows of 2^c_log 16-byte chunks (at most kThreads), `row_bytes` apart in global memory, to a
// dense [rows][chunks] shared table; the block's threads stride over the rows.
template <int kThreads>
__device__ __forceinline__ void cp_async_rows(void* dst, const void* src, std::int64_t row_bytes, int rows, int c_log) {
  const int col = threadIdx.x & ((1 << c_log) - 1), step = kThreads >> c_log;
  const char* s = static_cast<const char*>(src) + col * 16;
  char* d = static_cast<char*>(dst) + col * 16;
  for (int i = threadIdx.x >> c_log; i < rows; i += step) cp_async16(d + (i << c_log) * 16, s + i * row_bytes);
}

// Sum over groups of `width` consecutive lanes (a power of two); every lane gets its group's sum.
template <int width>
__device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int o = width / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// Block-wide sums of two values; `scratch` holds 2 * warps floats. Ends with a barrier.
template <int kThreads>
__device__ __forceinline__ float2 block_sum2(float x, float y, float* scratch) {
  constexpr int kWarps = kThreads / 32;
  x = group_sum<32>(x);
  y = group_sum<32>(y);
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  if (l == 0) { scratch[w] = x; scratch[kWarps + w] = y; }
  __syncthreads();
  float2 r{0.f, 0.f};
#pragma unroll
  for (int i = 0; i < kWarps; ++i) { r.x += scratch[i]; r.y += scratch[kWarps + i]; }
  __syncthreads();
  return r;
}

// kda.md A.3: literal log(1 + exp(x)) with threshold 20, not log1p.
__device__ __forceinline__ float softplus(float x) { return x > 20.f ? x : logf(1.f + expf(x)); }
__device__ __forceinline__ float sigmoid(float x) { return 1.f / (1.f + expf(-x)); }
__device__ __forceinline__ float gate(float x, float A_log, int has_lb, float lb) {
  const float A = expf(A_log);
  return has_lb ? lb * sigmoid(A * x) : -A * softplus(x);
}

// The lane's share of a K-long row: lanes_per_row lanes each hold kEpl consecutive-in-vector
// channels, vectors of a lane kVec apart times lanes_per_row (so a warp's loads are coalesced).
template <class S, int K>
struct RowLayout {
  static constexpr int kV = kVec<S>;
  static constexpr int kLanes = (K / kV) < 32 ? (K / kV) : 32;  // lanes per row
  static constexpr int kChunks = K / (kV * kLanes);             // vectors per lane
  static constexpr int kEpl = kChunks * kV;                     // channels per lane
  static constexpr int kRowsPerWarp = 32 / kLanes;
  __device__ static int channel(int lane_in_row, int chunk, int e) { return (chunk * kLanes + lane_in_row) * kV + e; }
};

}  // namespace kparity::kernels::kda::dev
