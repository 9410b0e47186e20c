// KDA prefill benchmark (issue 30): kparity's chunked kernel (kda/chunk, when the build has it) and
// its recurrent kernel (kda/recurrent) on the same inputs: bf16 q/k/v/beta, fp32 log-decay g in
// [-0.1, 0), l2norm in kernel, fp32 V-first initial and final states, varlen (B = 1 with cu_seqlens,
// as bench/peers' fla script calls chunk_kda). Shapes: 1x8192, 8x1024, 64x256, 1x32768 and a varlen
// mix of 16 sequences of 64-4096 tokens, H = HV = 32 and 64, K = V = 128. Times are medians of
// eager launches on the default stream after warm-up (bench/common/gpu_bench.hpp median_ms; fla's
// side, bench/peers/run_peers.py --only fla_prefill, is also eager: triton do_bench medians).
// Prints a markdown table.  Usage: kda_prefill_bench [--quick]
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/device_buf.hpp"
#include "common/gpu_bench.hpp"
#include "kparity/kernels/kda.hpp"

namespace {
using namespace kparity;
using bench::check;

constexpr std::int64_t K = 128, V = 128;

using Buf = bench::DeviceBuf;

// Useful FLOPs of the chunked algorithm per token and value head (chunks of C = 16): the three state
// products 6KV, A_kk and A_qk 4CK, the two substitutions C(K + V), A_qk v_new 2CV... written as one
// formula so the table says what TFLOP/s means.
constexpr double kFlopPerTokenHead = 6.0 * K * V + 5.0 * 16 * K + 3.0 * 16 * V;

struct Result {
  double chunk_ms = -1, rec_ms = -1;
  std::string chunk_note;
};

Result run(const std::vector<std::int64_t>& lens, std::int64_t H, int reps) {
  const std::int64_t N = static_cast<std::int64_t>(lens.size());
  std::int64_t T = 0;
  std::vector<std::int32_t> cu{0};
  for (auto l : lens) cu.push_back(static_cast<std::int32_t>(T += l));
  const std::int64_t HV = H;
  Buf q(T * H * K, DType::bf16, -1.f, 1.f, 1), k(T * H * K, DType::bf16, -1.f, 1.f, 2),
      v(T * HV * V, DType::bf16, -1.f, 1.f, 3), g(T * HV * K, DType::f32, -0.1f, 0.f, 4),
      beta(T * HV, DType::bf16, 0.f, 1.f, 5), out(T * HV * V, DType::bf16, 0.f, 0.f, 6),
      init(N * HV * V * K, DType::f32, -0.02f, 0.02f, 7), fin(N * HV * V * K, DType::f32, 0.f, 0.f, 8),
      cus(N + 1, DType::i32, 0.f, 0.f, 0);
  check(cudaMemcpy(cus.p, cu.data(), cu.size() * 4, cudaMemcpyHostToDevice), "cu_seqlens");
  check(cudaDeviceSynchronize(), "fill");
  Result r;
  const kernels::LaunchOptions fast{ValidateOptions::upstream(), false};

  kda::ChunkArgs c;
  c.q = q.view(DType::bf16, {1, T, H, K});
  c.k = k.view(DType::bf16, {1, T, H, K});
  c.v = v.view(DType::bf16, {1, T, HV, V});
  c.g = g.view(DType::f32, {1, T, HV, K});
  c.beta = beta.view(DType::bf16, {1, T, HV});
  c.scale = 1.0 / std::sqrt(double(K));
  c.initial_state = init.view(DType::f32, {N, HV, V, K});
  c.final_state = fin.view(DType::f32, {N, HV, V, K});
  c.output_final_state = true;
  c.use_qk_l2norm_in_kernel = true;
  c.state_v_first = true;
  c.cu_seqlens = cus.view(DType::i32, {N + 1});
  c.out = out.view(DType::bf16, {1, T, HV, V});
  if (const Status s = kernels::kda::chunk(c, nullptr, fast); !s.ok()) {
    r.chunk_note = s.first_error()->message;
  } else {
    r.chunk_ms = bench::median_ms(reps, [&] { (void)kernels::kda::chunk(c, nullptr, fast); });
  }

  kda::RecurrentArgs a;
  a.q = q.view(DType::bf16, {T, H, K});
  a.k = k.view(DType::bf16, {T, H, K});
  a.v = v.view(DType::bf16, {T, HV, V});
  a.g = g.view(DType::f32, {T, HV, K});
  a.beta = beta.view(DType::bf16, {T, HV});
  a.scale = c.scale;
  a.use_qk_l2norm_in_kernel = true;
  a.initial_state = c.initial_state;
  a.final_state = c.final_state;
  a.cu_seqlens = c.cu_seqlens;
  a.out = out.view(DType::bf16, {T, HV, V});
  if (const Status s = kernels::kda::recurrent(a, nullptr, fast); s.ok())
    r.rec_ms = bench::median_ms(reps, [&] { (void)kernels::kda::recurrent(a, nullptr, fast); });
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "device");
  int driver = 0;
  cudaDriverGetVersion(&driver);
  std::printf("# kda prefill, %s, driver %d, K = V = %lld, bf16 inputs, fp32 states, l2norm in kernel\n\n", prop.name,
              driver, static_cast<long long>(K));
  std::printf("FLOP per token and value head = 6*K*V + 5*16*K + 3*16*V = %.0f (the chunked algorithm's useful "
              "work; the same count for both kernels)\n\n",
              kFlopPerTokenHead);
  std::printf("| shape | H | tokens | chunk ms | chunk Mtok/s | chunk TFLOP/s | recurrent ms | recurrent Mtok/s | "
              "recurrent / chunk |\n|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes = {
      {"1x8192", std::vector<std::int64_t>(1, 8192)},
      {"8x1024", std::vector<std::int64_t>(8, 1024)},
      {"64x256", std::vector<std::int64_t>(64, 256)},
      {"1x32768", std::vector<std::int64_t>(1, 32768)}};
  // 16 sequences of 64..4096 tokens, a fixed spread (geometric-ish, not sorted).
  shapes.push_back({"varlen16", {64, 4096, 512, 128, 2048, 96, 1024, 3000, 256, 700, 64, 1536, 4096, 200, 900, 2500}});
  std::string note;
  for (const std::int64_t H : {32, 64}) {
    for (const auto& [name, lens] : shapes) {
      if (quick && name == "1x32768") continue;
      const Result r = run(lens, H, quick ? 3 : 10);
      std::int64_t T = 0;
      for (auto l : lens) T += l;
      const double flop = kFlopPerTokenHead * double(T) * double(H);
      char chunk[160];
      if (r.chunk_ms >= 0)
        std::snprintf(chunk, sizeof chunk, "%.3f | %.1f | %.1f", r.chunk_ms, T / r.chunk_ms / 1e3,
                      flop / r.chunk_ms / 1e9);
      else
        std::snprintf(chunk, sizeof chunk, "not built | - | -");
      std::printf("| %s | %lld | %lld | %s | %.3f | %.1f | %s |\n", name.c_str(), static_cast<long long>(H),
                  static_cast<long long>(T), chunk, r.rec_ms, T / r.rec_ms / 1e3,
                  r.chunk_ms > 0 ? (std::to_string(r.rec_ms / r.chunk_ms).substr(0, 5) + "x").c_str() : "-");
      if (!r.chunk_note.empty()) note = r.chunk_note;
    }
  }
  if (!note.empty()) std::printf("\nchunk kernel: %s\n", note.c_str());
  return 0;
}
