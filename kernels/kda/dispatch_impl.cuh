#pragma once
// Turns the run-time (dtype code, head dim) into template arguments (style habit 8); a value without
// a case comes back as a DispatchResult naming it.
#include <string>
#include <type_traits>

#include "common/limits.hpp"
#include "common/pdl.cuh"
#include "kda/dispatch.hpp"
#include "kda/packed_decode_kernel.cuh"
#include "kda/recurrent_kernel.cuh"
#include "kda/replayssm_decode_kernel.cuh"
#include "kda/support.hpp"

namespace kparity::kernels::kda::dispatch {

// `name`: the argument whose dtype `code` is, as the miss will name it.
template <class F>
DispatchResult on_dtype(int code, std::string_view name, F&& f) {
  switch (code) {
    case kF32: return f(float{});
    case kF16: return f(__half{});
    case kBF16: return f(__nv_bfloat16{});
    default: return dtype_miss(name, code, kFloatDtypesText);
  }
}

// One case per supported_head_dim() value (kda/support.hpp).
static_assert(kMinHeadDim == 16 && kMaxHeadDim == 256, "on_head_dim has a case for each power of two in between");
template <class F>
DispatchResult on_head_dim(std::int64_t K, F&& f) {
  switch (K) {
    case 16: return f(std::integral_constant<int, 16>{});
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    case 256: return f(std::integral_constant<int, 256>{});
    default: return dispatch_miss("K", std::to_string(K), std::string(kHeadDimsText));
  }
}

template <class Kernel, class P>
DispatchResult go(Kernel kernel, int threads, const P& p, const Launch& l) {
  if (l.smem_bytes > kSmemDefaultPerBlock) {
    if (auto e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      static_cast<int>(l.smem_bytes));
        e != cudaSuccess)
      return dispatched(e);
  }
  return dispatched(launch_kernel(kernel, l.grid, threads, l.smem_bytes, l.stream, l.pdl, p));
}

template <class S>
DispatchResult replay(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l) {
  return on_dtype(out_dt, "out.dtype", [&](auto o) {
    return on_dtype(ring_dt, "d_cache.dtype", [&](auto r) {
      return on_head_dim(p.in.K, [&](auto k) {
        using O = decltype(o);
        using R = decltype(r);
        return go(replayssm_decode_kernel<S, O, R, decltype(k)::value>, kReplayThreads, p, l);
      });
    });
  });
}

}  // namespace kparity::kernels::kda::dispatch
