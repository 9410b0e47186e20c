#pragma once
// Timing helpers for memory-bound kernels (device README METHOD): CUDA events around CUDA-graph
// replays, warm-up first, the median of many repetitions, and the device-to-device copy rate
// measured in the same process as the ceiling.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

namespace kparity::bench {

// Captures `calls` invocations of enqueue(i, stream) into one graph, replays it `warmup` times,
// then times `reps` replays; returns the median microseconds per call.
double median_us_per_call(const std::function<void(int, cudaStream_t)>& enqueue, int calls, int warmup, int reps);

// The same `calls` invocations launched eagerly (no graph) on one stream, after one warm-up pass;
// returns the median over `reps` passes of the microseconds per call.
double median_us_per_call_eager(const std::function<void(int, cudaStream_t)>& enqueue, int calls, int reps);

// Median GB/s (read + write bytes) of cudaMemcpyAsync device-to-device over `bytes`.
double copy_gbps(std::size_t bytes, int reps);
// Median GB/s of a kernel that only reads `bytes` (whole-line 16-byte streaming loads; the better
// of two buffer placements): the ceiling of a read-dominated kernel such as the ReplaySSM decode.
double read_gbps(std::size_t bytes, int reps);

// Median milliseconds of op() over `reps` runs after two warm-up runs, timed by events on `stream`
// (the default stream unless given; op must leave all its work ordered before that stream's next event).
double median_ms(int reps, const std::function<void()>& op, cudaStream_t stream = nullptr);

// Fills a device buffer with uniform values in [lo, hi) of the given dtype code (kparity DtCode).
void fill_uniform(void* p, std::size_t n, int dt_code, float lo, float hi, unsigned seed);

void check(cudaError_t e, const char* what);

}  // namespace kparity::bench
