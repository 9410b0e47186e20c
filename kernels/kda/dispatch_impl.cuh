#pragma once
// Turns the run-time (dtype code, head dim) into template arguments (style habit 8).
#include "kda/dispatch.hpp"
#include "kda/packed_decode_kernel.cuh"
#include "kda/recurrent_kernel.cuh"
#include "kda/replayssm_decode_kernel.cuh"

namespace kparity::kernels::kda::dispatch {

template <class F>
cudaError_t on_dtype(int code, F&& f) {
  switch (code) {
    case kF32: return f(float{});
    case kF16: return f(__half{});
    case kBF16: return f(__nv_bfloat16{});
    default: return cudaErrorInvalidValue;
  }
}

template <class F>
cudaError_t on_head_dim(std::int64_t K, F&& f) {
  switch (K) {
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    default: return cudaErrorInvalidValue;
  }
}

template <class Kernel, class P>
cudaError_t go(Kernel kernel, int threads, const P& p, const Launch& l) {
  if (l.smem_bytes > 48 * 1024) {
    if (auto e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(l.smem_bytes));
        e != cudaSuccess)
      return e;
  }
  kernel<<<l.grid, threads, l.smem_bytes, l.stream>>>(p);
  return cudaSuccess;
}

template <class S>
cudaError_t replay(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l) {
  return on_dtype(out_dt, [&](auto o) {
    return on_dtype(ring_dt, [&](auto r) {
      return on_head_dim(p.in.K, [&](auto k) {
        using O = decltype(o);
        using R = decltype(r);
        return go(replayssm_decode_kernel<S, O, R, decltype(k)::value>, kReplayThreads, p, l);
      });
    });
  });
}

}  // namespace kparity::kernels::kda::dispatch
