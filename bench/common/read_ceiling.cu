// Read-only streaming rate, the ceiling of a kernel that mostly reads (ReplaySSM decode reads its
// state and writes almost nothing): 16-byte loads over a buffer larger than L2, every byte used.
#include <cstdint>

#include "common/gpu_bench.hpp"

namespace kparity::bench {
namespace {
// Eight independent 16-byte loads in flight per thread before any is used (one load per iteration
// would leave the stream latency-bound and understate the ceiling).
__global__ void read_kernel(const uint4* p, std::size_t n, unsigned* sink) {
  constexpr int kU = 8;
  unsigned acc = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += kU * stride) {
    uint4 v[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) v[u] = i + u * stride < n ? __ldcs(p + i + u * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < kU; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;  // keeps the loads; practically never stores
}
}  // namespace

double read_gbps(std::size_t bytes, int reps) {
  void* src;
  unsigned* sink;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&sink, sizeof(unsigned)), "malloc");
  fill_uniform(src, bytes / 4, 0, -1.f, 1.f, 7);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const double ms = median_ms(reps, [&] {
    read_kernel<<<sms * 4, 512>>>(static_cast<const uint4*>(src), bytes / 16, sink);
    check(cudaGetLastError(), "read kernel");
  });
  cudaFree(src);
  cudaFree(sink);
  return bytes / (ms * 1e-3) / 1e9;
}

}  // namespace kparity::bench
