// Fresh random device data for the benchmarks without a host round trip (a counter hash).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/gpu_bench.hpp"

namespace kparity::bench {
namespace {
__global__ void fill_kernel(void* p, std::size_t n, int dt, float lo, float hi, unsigned seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u ^ (seed * 0x9E3779B9u) ^ static_cast<unsigned>(i >> 32);
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    const float u = lo + (hi - lo) * (x >> 8) * (1.0f / 16777216.0f);
    if (dt == 1) static_cast<__half*>(p)[i] = __float2half_rn(u);
    else if (dt == 2) static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16_rn(u);
    else static_cast<float*>(p)[i] = u;
  }
}
}  // namespace

void fill_uniform(void* p, std::size_t n, int dt_code, float lo, float hi, unsigned seed) {
  fill_kernel<<<1024, 256>>>(p, n, dt_code, lo, hi, seed);
  check(cudaGetLastError(), "fill");
}

}  // namespace kparity::bench
