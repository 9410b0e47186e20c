// Read-only streaming rate, the ceiling of a kernel that mostly reads (the ReplaySSM decode reads
// its state and writes almost nothing). Configuration from bench/memory_probe on an H200: whole
// lines, 8 loads in flight per thread and 16 CTAs of 128 threads per SM is the fastest pattern
// measured (4.5 TB/s). The grid-stride loop it replaces (eight loads per thread a grid apart, 2048
// threads per SM) gave 3.86-3.93 TB/s inside kda_decode_bench and 4.36-4.38 inside memory_probe.
#include "common/gpu_bench.hpp"
#include "common/read_stream.cuh"

namespace kparity::bench {

template <int kLoads, bool kHalf>
double read_stream_gbps(const void* src, std::size_t bytes, unsigned* sink, int ctas, int reps) {
  const std::size_t chunks = bytes / (512 * kLoads);
  const double ms = median_ms(reps, [&] {
    read_stream_kernel<kLoads, kHalf><<<ctas, 128>>>(static_cast<const uint4*>(src), chunks, sink);
    check(cudaGetLastError(), "read stream kernel");
  });
  return double(chunks) * 512 * kLoads / (ms * 1e-3) / 1e9;
}
template double read_stream_gbps<8, false>(const void*, std::size_t, unsigned*, int, int);
template double read_stream_gbps<8, true>(const void*, std::size_t, unsigned*, int, int);
template double read_stream_gbps<16, false>(const void*, std::size_t, unsigned*, int, int);
template double read_stream_gbps<16, true>(const void*, std::size_t, unsigned*, int, int);

double read_gbps(std::size_t bytes, int reps) {
  void* src;
  unsigned* sink;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&sink, sizeof(unsigned)), "malloc");
  fill_uniform(src, bytes / 4, 0, -1.f, 1.f, 7);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const double gbps = read_stream_gbps<8, false>(src, bytes, sink, sms * 16, reps);
  cudaFree(src);
  cudaFree(sink);
  return gbps;
}

}  // namespace kparity::bench
