// Host cost of one decode call without the launch (issue 5 target: <= 200 ns for the shape
// checks): the contract alone, and contract + derive + params (what every launch pays).
#include <benchmark/benchmark.h>

#include <cmath>

#include "kda/prepare.hpp"

namespace {
using namespace kparity;

// Views only: fake device pointers, never dereferenced by shape-level checks.
kda::ReplaySsmDecodeArgs replay_args() {
  static char fake[64];
  const std::int64_t B = 256, H = 32, HV = 32, K = 128, V = 128, L = 16, S = 256;
  const auto v = [](DType t, Shape s) { return TensorView(fake, t, s, Device::cuda(0)); };
  kda::ReplaySsmDecodeArgs r;
  r.mixed_qkv = v(DType::bf16, {B, 2 * H * K + HV * V});
  r.a = v(DType::bf16, {B, HV, K});
  r.b = v(DType::bf16, {B, HV});
  r.A_log = v(DType::f32, {HV});
  r.dt_bias = v(DType::f32, {HV, K});
  r.scale = 1.0 / std::sqrt(double(K));
  r.initial_state = v(DType::f32, {S, HV, V, K});
  r.d_cache = v(DType::bf16, {S, HV, L, V});
  r.k_cache = v(DType::bf16, {S, H, L, K});
  r.g_cache = v(DType::f32, {S, HV, L, K});
  r.out = v(DType::bf16, {B, 1, HV, V});
  r.ssm_state_indices = v(DType::i32, {B});
  r.write_pos = v(DType::i32, {B});
  r.use_qk_l2norm_in_kernel = true;
  return r;
}

void BM_ReplayContractShapeChecks(benchmark::State& st) {
  const auto a = replay_args();
  for (auto _ : st) benchmark::DoNotOptimize(kda::try_check_replayssm_decode(a, ValidateOptions::upstream()));
}
BENCHMARK(BM_ReplayContractShapeChecks);

void BM_ReplayPrepareLaunch(benchmark::State& st) {
  const auto a = replay_args();
  kernels::kda::ReplayPlan plan;
  for (auto _ : st) benchmark::DoNotOptimize(kernels::kda::prepare_replayssm_decode(a, nullptr, {}, plan));
}
BENCHMARK(BM_ReplayPrepareLaunch);

void BM_PackedPrepareLaunch(benchmark::State& st) {
  const auto r = replay_args();
  kda::PackedDecodeArgs p;
  p.mixed_qkv = r.mixed_qkv; p.b = r.b; p.A_log = r.A_log; p.scale = r.scale; p.initial_state = r.initial_state;
  p.out = r.out; p.ssm_state_indices = r.ssm_state_indices; p.use_qk_l2norm_in_kernel = true;
  p.a = TensorView(r.a.data, DType::bf16, {256, 32 * 128}, Device::cuda(0));
  p.dt_bias = TensorView(r.a.data, DType::f32, {32 * 128}, Device::cuda(0));
  kernels::kda::PackedPlan plan;
  for (auto _ : st) benchmark::DoNotOptimize(kernels::kda::prepare_packed_decode(p, nullptr, {}, plan));
}
BENCHMARK(BM_PackedPrepareLaunch);

}  // namespace

BENCHMARK_MAIN();
