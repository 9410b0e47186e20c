#pragma once
// A device buffer for the benchmarks: n elements of a kparity dtype, filled with uniform values in
// [lo, hi) (bench::fill_uniform) for the float dtypes, freed on destruction; view() wraps it as a
// kparity TensorView of any shape.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/gpu_bench.hpp"
#include "kparity/core/dtype.hpp"
#include "kparity/core/tensor_view.hpp"

namespace kparity::bench {

struct DeviceBuf {
  void* p = nullptr;
  DeviceBuf(std::size_t n, DType t, float lo, float hi, unsigned seed) {
    check(cudaMalloc(&p, n * dtype_size(t)), "malloc");
    const int code = t == DType::f32 ? 0 : t == DType::f16 ? 1 : t == DType::bf16 ? 2 : -1;
    if (code >= 0) fill_uniform(p, n, code, lo, hi, seed);
  }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
  ~DeviceBuf() { cudaFree(p); }
  TensorView view(DType t, Shape s) const { return TensorView(p, t, s, Device::cuda(0)); }
};

}  // namespace kparity::bench
