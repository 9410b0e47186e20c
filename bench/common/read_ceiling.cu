// Read-only streaming rate, the ceiling of a kernel that mostly reads (the ReplaySSM decode reads
// its state and writes almost nothing). Configuration from bench/memory_probe on an H200: whole
// lines, 8 loads in flight per thread and 16 CTAs of 128 threads per SM is the fastest pattern
// measured (4.4-4.5 TB/s with a good buffer placement, see read_gbps).
#include <algorithm>

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

// The better of two placements: the same kernel reads a process's first 1 GiB buffer at about
// 3.9 TB/s and one allocated while that buffer is held at about 4.4 (H200, bench/memory_probe), so
// a single buffer could understate the ceiling by 12%.
double read_gbps(std::size_t bytes, int reps) {
  void* src[2];
  unsigned* sink;
  check(cudaMalloc(&sink, sizeof(unsigned)), "malloc");
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  double best = 0;
  for (void*& p : src) {
    check(cudaMalloc(&p, bytes), "malloc");
    fill_uniform(p, bytes / 4, 0, -1.f, 1.f, 7);
    best = std::max(best, read_stream_gbps<8, false>(p, bytes, sink, sms * 16, reps));
  }
  for (void* p : src) cudaFree(p);
  cudaFree(sink);
  return best;
}

}  // namespace kparity::bench
