// Read-stream probe: what a pure read stream reaches on this GPU as a function of the request shape
// (whole vs half 128-byte lines per warp instruction) and the bytes in flight per SM. It calibrates
// the decode kernels' state streams (the ReplaySSM decode once read half lines; see
// replayssm_decode_kernel.cuh ReplayLayout) and the bench's read ceiling. Prints one markdown table.
#include <cuda_runtime.h>

#include <cstdio>

#include "common/gpu_bench.hpp"
#include "common/read_stream.cuh"

int main() {
  using namespace kparity::bench;
  const std::size_t bytes = std::size_t(1) << 30;
  void* src;
  unsigned* sink;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&sink, 4), "malloc");
  fill_uniform(src, bytes / 4, 0, -1.f, 1.f, 3);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  // The table reads the probe's own buffer; its rates depend on where the driver placed it (see
  // read_gbps), so compare columns within one run.
  std::printf("copy %.0f GB/s, read ceiling %.0f GB/s (1 GiB, median of 10, better of two placements)\n\n",
              copy_gbps(bytes, 10), read_gbps(bytes, 10));
  std::printf("| CTAs/SM (128 thr) | loads/thread | KiB in flight/SM | whole lines GB/s | half lines GB/s |\n"
              "|---|---|---|---|---|\n");
  for (int ctas : {2, 4, 6, 8, 16}) {
    const int g = sms * ctas;
    std::printf("| %d | 8 | %d | %.0f | %.0f |\n", ctas, ctas * 16, read_stream_gbps<8, false>(src, bytes, sink, g, 10),
                read_stream_gbps<8, true>(src, bytes, sink, g, 10));
    std::printf("| %d | 16 | %d | %.0f | %.0f |\n", ctas, ctas * 32, read_stream_gbps<16, false>(src, bytes, sink, g, 10),
                read_stream_gbps<16, true>(src, bytes, sink, g, 10));
  }
  cudaFree(src);
  cudaFree(sink);
  return 0;
}
