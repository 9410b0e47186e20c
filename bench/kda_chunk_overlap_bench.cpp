// How much of the chunked KDA kernel's time could overlap (issue 30). On 2026-12-06 (H100, ncu,
// bench/results/kda_prefill_2026-12-06b.md) a single long sequence spent ~0.6 ms in the prep kernel
// (25% occupancy, IPC 2.1) and ~0.7 ms in the chain kernel (one CTA an SM, IPC 0.9), one after the
// other on one stream. A phased launch (the prep of the next token range on a second stream beside the
// chain of this one) can only gain what the two kernels can share an SM for. This probe measures that
// bound without the phased launcher: two independent kda/chunk calls of the same shape (own buffers),
// once one after the other on one stream and once on two streams at the same time. If the pair on two
// streams takes about as long as one call, the chain's idle issue slots and the prep's work fit side by
// side and the phased launcher is worth building; if it takes twice as long, it is not.
//
// Inputs as kda_prefill_bench (bf16 q/k/v/beta, fp32 gate in [-0.1, 0), l2norm in kernel, fp32
// V-first states, cu_seqlens); eager launches, CUDA events, the median of `reps` after two warm-ups.
// Prints a markdown table.  Usage: kda_chunk_overlap_bench [reps]
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "common/device_buf.hpp"
#include "common/gpu_bench.hpp"
#include "kparity/kernels/kda.hpp"

namespace {
using namespace kparity;
using bench::check;

constexpr std::int64_t K = 128, V = 128;

using Buf = bench::DeviceBuf;

// One call's buffers and arguments (a sequence of T tokens, H = HV heads).
struct Call {
  std::unique_ptr<Buf> q, k, v, g, beta, out, init, fin, cus;
  kda::ChunkArgs a;
  Call(std::int64_t T, std::int64_t H, unsigned seed) {
    q = std::make_unique<Buf>(T * H * K, DType::bf16, -1.f, 1.f, seed + 1);
    k = std::make_unique<Buf>(T * H * K, DType::bf16, -1.f, 1.f, seed + 2);
    v = std::make_unique<Buf>(T * H * V, DType::bf16, -1.f, 1.f, seed + 3);
    g = std::make_unique<Buf>(T * H * K, DType::f32, -0.1f, 0.f, seed + 4);
    beta = std::make_unique<Buf>(T * H, DType::bf16, 0.f, 1.f, seed + 5);
    out = std::make_unique<Buf>(T * H * V, DType::bf16, 0.f, 0.f, seed + 6);
    init = std::make_unique<Buf>(H * V * K, DType::f32, -0.02f, 0.02f, seed + 7);
    fin = std::make_unique<Buf>(H * V * K, DType::f32, 0.f, 0.f, seed + 8);
    cus = std::make_unique<Buf>(2, DType::i32, 0.f, 0.f, 0);
    const std::int32_t cu[2] = {0, static_cast<std::int32_t>(T)};
    check(cudaMemcpy(cus->p, cu, sizeof cu, cudaMemcpyHostToDevice), "cu_seqlens");
    a.q = q->view(DType::bf16, {1, T, H, K});
    a.k = k->view(DType::bf16, {1, T, H, K});
    a.v = v->view(DType::bf16, {1, T, H, V});
    a.g = g->view(DType::f32, {1, T, H, K});
    a.beta = beta->view(DType::bf16, {1, T, H});
    a.scale = 1.0 / std::sqrt(double(K));
    a.initial_state = init->view(DType::f32, {1, H, V, K});
    a.final_state = fin->view(DType::f32, {1, H, V, K});
    a.output_final_state = true;
    a.use_qk_l2norm_in_kernel = true;
    a.state_v_first = true;
    a.cu_seqlens = cus->view(DType::i32, {2});
    a.out = out->view(DType::bf16, {1, T, H, V});
  }
};

void launch(const Call& c, cudaStream_t s) {
  const kernels::LaunchOptions fast{ValidateOptions::upstream(), false};
  if (const Status st = kernels::kda::chunk(c.a, s, fast); !st.ok()) {
    std::fprintf(stderr, "kda/chunk refused the call: %s\n", st.first_error()->message.c_str());
    std::exit(2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 10;
  if (!kernels::kda::chunk_kernel_built()) {
    std::printf("kda/chunk kernel not built (-DKPARITY_CHUNK_KERNEL=ON)\n");
    return 0;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device");
  std::printf("# kda/chunk, two independent calls: one stream vs two streams, %s, K = V = %lld, bf16, "
              "median of %d\n\n",
              prop.name, static_cast<long long>(K), reps);
  std::printf("| shape | H | one call ms | two calls, one stream ms | two calls, two streams ms | "
              "two streams / one call |\n|---|---|---|---|---|---|\n");
  cudaStream_t s1, s2;
  check(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), "stream");
  check(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), "stream");
  cudaEvent_t fork, join;
  check(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), "event");
  check(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), "event");
  const struct {
    std::int64_t T, H;
  } shapes[] = {{8192, 32}, {32768, 32}, {8192, 64}};
  for (const auto& sh : shapes) {
    const Call a(sh.T, sh.H, 10), b(sh.T, sh.H, 20);
    check(cudaDeviceSynchronize(), "fill");
    const double one = bench::median_ms(reps, [&] { launch(a, s1); }, s1);
    const double serial = bench::median_ms(
        reps,
        [&] {
          launch(a, s1);
          launch(b, s1);
        },
        s1);
    // Forked from s1 and joined back to it, so that s1's events time both.
    const double paired = bench::median_ms(
        reps,
        [&] {
          check(cudaEventRecord(fork, s1), "fork");
          check(cudaStreamWaitEvent(s2, fork), "fork");
          launch(a, s1);
          launch(b, s2);
          check(cudaEventRecord(join, s2), "join");
          check(cudaStreamWaitEvent(s1, join), "join");
        },
        s1);
    std::printf("| 1x%lld | %lld | %.3f | %.3f | %.3f | %.2fx |\n", static_cast<long long>(sh.T),
                static_cast<long long>(sh.H), one, serial, paired, paired / one);
  }
  check(cudaDeviceSynchronize(), "end");
  cudaEventDestroy(fork);
  cudaEventDestroy(join);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
  return 0;
}
