// Host cost of one decode call without the launch (issue 5 target: <= 200 ns for the shape
// checks): the contract alone, and contract + derive + params (what every launch pays).
//
// Every benchmark also reports allocs_per_call: heap allocations (global operator new) per call,
// counted by the replacement operator new below. The success path of a contract must report 0.
// Results and method: bench/results/host_validation_2026-11-29.md.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "kda/prepare.hpp"
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

namespace {
std::atomic<std::int64_t> g_allocations{0};
}  // namespace

// Counting replacements of the global allocation functions (the array, sized and nothrow forms
// forward to these two; the aligned forms are not used on these paths).
void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {
using namespace kparity;

// Views only: fake device pointers, never dereferenced by shape-level checks. Each view gets its
// own far-apart address, so the kparity-only overlap checks (extra) see disjoint buffers.
TensorView fake_view(DType t, std::initializer_list<std::int64_t> shape) {
  static std::uintptr_t next = 0;
  next += std::uintptr_t{1} << 40;
  return TensorView(reinterpret_cast<void*>(next), t, shape, Device::cuda(0));
}

// The issue-5 decode shapes: H = HV = 32, K = V = 128, L = 16, fp32 state, bf16 activations, B = 256.
kda::ReplaySsmDecodeArgs replay_args() {
  const std::int64_t B = 256, H = 32, HV = 32, K = 128, V = 128, L = 16, S = 256;
  const auto v = fake_view;
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

// The packed decode on the same shapes (a and dt_bias already flat, as the packed API takes them).
kda::PackedDecodeArgs packed_args() {
  const auto r = replay_args();
  kda::PackedDecodeArgs p;
  p.mixed_qkv = r.mixed_qkv; p.b = r.b; p.A_log = r.A_log; p.scale = r.scale; p.initial_state = r.initial_state;
  p.out = r.out; p.ssm_state_indices = r.ssm_state_indices; p.use_qk_l2norm_in_kernel = true;
  p.a = fake_view(DType::bf16, {256, 32 * 128});
  p.dt_bias = fake_view(DType::f32, {32 * 128});
  return p;
}

// Varlen prefill: T = 1024 tokens in 4 sequences, g-gate form, both states.
kda::RecurrentArgs recurrent_args() {
  const std::int64_t T = 1024, H = 32, HV = 32, K = 128, V = 128, N = 4;
  const auto v = fake_view;
  kda::RecurrentArgs a;
  a.q = v(DType::bf16, {T, H, K}); a.k = v(DType::bf16, {T, H, K}); a.v = v(DType::bf16, {T, HV, V});
  a.g = v(DType::f32, {T, HV, K}); a.beta = v(DType::bf16, {T, HV});
  a.initial_state = v(DType::f32, {N, HV, V, K}); a.final_state = v(DType::f32, {N, HV, V, K});
  a.out = v(DType::bf16, {T, HV, V}); a.cu_seqlens = v(DType::i32, {N + 1});
  return a;
}

// fla chunk_kda, varlen prefill (issue 16's 8 x 1024 row): H = HV = 32, K = V = 128, bf16, raw gate
// with A_log and dt_bias, logit beta, fp32 K-first states; issue 16 target: <= 300 ns.
kda::ChunkArgs chunk_args() {
  const std::int64_t T = 8192, H = 32, HV = 32, K = 128, V = 128, N = 8;
  const auto v = fake_view;
  kda::ChunkArgs a;
  a.q = v(DType::bf16, {1, T, H, K}); a.k = v(DType::bf16, {1, T, H, K}); a.v = v(DType::bf16, {1, T, HV, V});
  a.g = v(DType::bf16, {1, T, HV, K}); a.beta = v(DType::bf16, {1, T, HV});
  a.A_log = v(DType::f32, {HV}); a.dt_bias = v(DType::f32, {HV * K});
  a.initial_state = v(DType::f32, {N, HV, K, V}); a.final_state = v(DType::f32, {N, HV, K, V});
  a.out = v(DType::bf16, {1, T, HV, V}); a.cu_seqlens = v(DType::i64, {N + 1});
  a.output_final_state = a.use_qk_l2norm_in_kernel = a.use_gate_in_kernel = a.use_beta_sigmoid_in_kernel = true;
  return a;
}

sparse::PagedDecodeArgs sparse_decode_args() {
  const auto v = fake_view;
  sparse::PagedDecodeArgs a;
  a.q = v(DType::bf16, {64, 64, 512}); a.unified_kv = v(DType::bf16, {100000, 512});
  a.kv_indices = v(DType::i32, {64 * 2048}); a.kv_indptr = v(DType::i32, {65}); a.attn_sink = v(DType::f32, {64});
  a.softmax_scale = 0.04; a.out = v(DType::bf16, {64, 64, 512});
  return a;
}

sparse::PagedPrefillArgs sparse_prefill_args() {
  const auto v = fake_view;
  sparse::PagedPrefillArgs a;
  a.q = v(DType::bf16, {1024, 64, 512}); a.unified_kv = v(DType::bf16, {100000, 512});
  a.kv_indices_prefix = v(DType::i32, {1024 * 2048}); a.kv_indptr_prefix = v(DType::i32, {1025});
  a.kv = v(DType::bf16, {1024, 512});
  a.kv_indices_extend = v(DType::i32, {1024 * 128}); a.kv_indptr_extend = v(DType::i32, {1025});
  a.attn_sink = v(DType::f32, {64}); a.softmax_scale = 0.04; a.out = v(DType::bf16, {1024, 64, 512});
  return a;
}

// Times f() (which must succeed) and reports the heap allocations per call.
template <class F>
void time_calls(benchmark::State& st, F&& f) {
  const std::int64_t before = g_allocations.load(std::memory_order_relaxed);
  for (auto _ : st) {
    Status s = f();
    if (!s.ok()) {
      st.SkipWithError("the arguments failed the contract");
      break;
    }
    benchmark::DoNotOptimize(s);
  }
  const std::int64_t n = st.iterations() > 0 ? static_cast<std::int64_t>(st.iterations()) : 1;
  st.counters["allocs_per_call"] =
      static_cast<double>(g_allocations.load(std::memory_order_relaxed) - before) / static_cast<double>(n);
}

ValidateOptions with_extra() {
  ValidateOptions o = ValidateOptions::upstream();
  o.extra = true;
  return o;
}

// --- The issue-5 target: upstream-parity (shape-only) contract checks of one call. ---
void BM_ReplayContractShapeChecks(benchmark::State& st) {
  const auto a = replay_args();
  time_calls(st, [&] { return kda::try_check_replayssm_decode(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_ReplayContractShapeChecks);

void BM_PackedContractShapeChecks(benchmark::State& st) {
  const auto a = packed_args();
  time_calls(st, [&] { return kda::try_check_packed_decode(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_PackedContractShapeChecks);

// --- What every launch pays: contract + derive + params + geometry (no launch). ---
void BM_ReplayPrepareLaunch(benchmark::State& st) {
  const auto a = replay_args();
  kernels::kda::ReplayPlan plan;
  time_calls(st, [&] { return kernels::kda::prepare_replayssm_decode(a, nullptr, {}, plan); });
}
BENCHMARK(BM_ReplayPrepareLaunch);

void BM_PackedPrepareLaunch(benchmark::State& st) {
  const auto a = packed_args();
  kernels::kda::PackedPlan plan;
  time_calls(st, [&] { return kernels::kda::prepare_packed_decode(a, nullptr, {}, plan); });
}
BENCHMARK(BM_PackedPrepareLaunch);

// --- The other contracts' shape checks, and the kparity-only shape checks (extra). ---
void BM_RecurrentContractShapeChecks(benchmark::State& st) {
  const auto a = recurrent_args();
  time_calls(st, [&] { return kda::try_check_recurrent(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_RecurrentContractShapeChecks);

void BM_ChunkContractShapeChecks(benchmark::State& st) {
  const auto a = chunk_args();
  time_calls(st, [&] { return kda::try_check_chunk(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_ChunkContractShapeChecks);

void BM_SparseDecodeContractShapeChecks(benchmark::State& st) {
  const auto a = sparse_decode_args();
  time_calls(st, [&] { return sparse::try_check_paged_decode(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_SparseDecodeContractShapeChecks);

void BM_SparsePrefillContractShapeChecks(benchmark::State& st) {
  const auto a = sparse_prefill_args();
  time_calls(st, [&] { return sparse::try_check_paged_prefill(a, ValidateOptions::upstream()); });
}
BENCHMARK(BM_SparsePrefillContractShapeChecks);

void BM_ReplayContractExtraChecks(benchmark::State& st) {
  const auto a = replay_args();
  time_calls(st, [&] { return kda::try_check_replayssm_decode(a, with_extra()); });
}
BENCHMARK(BM_ReplayContractExtraChecks);

void BM_PackedContractExtraChecks(benchmark::State& st) {
  const auto a = packed_args();
  time_calls(st, [&] { return kda::try_check_packed_decode(a, with_extra()); });
}
BENCHMARK(BM_PackedContractExtraChecks);

void BM_RecurrentContractExtraChecks(benchmark::State& st) {
  const auto a = recurrent_args();
  time_calls(st, [&] { return kda::try_check_recurrent(a, with_extra()); });
}
BENCHMARK(BM_RecurrentContractExtraChecks);

void BM_ChunkContractExtraChecks(benchmark::State& st) {
  const auto a = chunk_args();
  time_calls(st, [&] { return kda::try_check_chunk(a, with_extra()); });
}
BENCHMARK(BM_ChunkContractExtraChecks);

void BM_SparseDecodeContractExtraChecks(benchmark::State& st) {
  const auto a = sparse_decode_args();
  time_calls(st, [&] { return sparse::try_check_paged_decode(a, with_extra()); });
}
BENCHMARK(BM_SparseDecodeContractExtraChecks);

void BM_SparsePrefillContractExtraChecks(benchmark::State& st) {
  const auto a = sparse_prefill_args();
  time_calls(st, [&] { return sparse::try_check_paged_prefill(a, with_extra()); });
}
BENCHMARK(BM_SparsePrefillContractExtraChecks);

}  // namespace

BENCHMARK_MAIN();
