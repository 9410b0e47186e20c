#include "common/gpu_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace kparity::bench {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

namespace {
double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median over `reps` runs of run() (which enqueues `calls` calls on s) of the microseconds per call,
// timed with events on s.
double per_call_us(cudaStream_t s, int calls, int reps, const std::function<void()>& run) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(a, s), "record");
    run();
    check(cudaEventRecord(b, s), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms * 1000.f / calls);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}
}  // namespace

double median_us_per_call(const std::function<void(int, cudaStream_t)>& enqueue, int calls, int warmup, int reps) {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  cudaGraph_t g;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "capture");
  for (int i = 0; i < calls; ++i) enqueue(i, s);
  check(cudaStreamEndCapture(s, &g), "end capture");
  cudaGraphExec_t x;
  check(cudaGraphInstantiate(&x, g, 0), "instantiate");
  for (int i = 0; i < warmup; ++i) check(cudaGraphLaunch(x, s), "warm-up");
  const double us = per_call_us(s, calls, reps, [&] { check(cudaGraphLaunch(x, s), "replay"); });
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaStreamDestroy(s);
  return us;
}

double median_us_per_call_eager(const std::function<void(int, cudaStream_t)>& enqueue, int calls, int reps) {
  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  for (int i = 0; i < calls; ++i) enqueue(i, s);  // warm-up pass
  const double us = per_call_us(s, calls, reps, [&] {
    for (int i = 0; i < calls; ++i) enqueue(i, s);
  });
  cudaStreamDestroy(s);
  return us;
}

double median_ms(int reps, const std::function<void()>& op, cudaStream_t stream) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  std::vector<float> t;
  for (int r = 0; r < reps + 2; ++r) {  // two warm-up runs
    check(cudaEventRecord(a, stream), "record");
    op();
    check(cudaEventRecord(b, stream), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    if (r >= 2) t.push_back(ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(t);
}

double copy_gbps(std::size_t bytes, int reps) {
  void *src, *dst;
  check(cudaMalloc(&src, bytes), "malloc");
  check(cudaMalloc(&dst, bytes), "malloc");
  check(cudaMemset(src, 1, bytes), "memset");
  const double ms = median_ms(reps, [&] { check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice), "copy"); });
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * bytes / (ms * 1e-3) / 1e9;
}

}  // namespace kparity::bench
