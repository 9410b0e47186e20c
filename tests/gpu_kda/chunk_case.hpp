#pragma once
// Random chunk_kda calls (kda/chunk) for the chunked kernel's tests: varlen with empty sequences and
// sequences ending mid-chunk, or B > 1 equal-length rows; GQA; every option of the op; both state
// layouts; fp32/bf16/fp16 activations. Gate extremes are forced through ChunkForce.
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/contracts/kda_chunk.hpp"

namespace kparity::gpu_test {

struct ChunkHost {
  Tensor q, k, v, g, beta, A_log, dt_bias, init, fin, out, cu;
  bool has_A_log = false, has_dt_bias = false, has_init = false, has_cu = false;
  kparity::kda::ChunkArgs a;  // flags and scalars; tensors are set by args()
  std::string tag;
  kparity::kda::ChunkArgs args() const {
    kparity::kda::ChunkArgs r = a;
    r.q = q; r.k = k; r.v = v; r.g = g; r.beta = beta; r.out = out;
    r.A_log.reset(); r.dt_bias.reset(); r.initial_state.reset(); r.final_state.reset(); r.cu_seqlens.reset();
    if (has_A_log) r.A_log = A_log.view();
    if (has_dt_bias) r.dt_bias = dt_bias.view();
    if (has_init) r.initial_state = init.view();
    if (r.output_final_state) r.final_state = fin.view();
    if (has_cu) r.cu_seqlens = cu.view();
    return r;
  }
};

// The gate as a log-decay at an extreme: the contract's lower bound (-5 per token everywhere), a
// steeper -8 (no lower bound), or -inf at a few places inside a mild gate.
enum class GateExtreme { none, lower_bound, minus8, minus_inf };

struct ChunkForce {
  std::optional<DType> act;
  std::optional<std::int64_t> K, V;
  std::optional<std::int64_t> max_len;  // tokens per sequence at most (default 40: a few chunks)
  std::optional<std::int64_t> seqs;     // varlen with this many sequences
  GateExtreme extreme = GateExtreme::none;
};

inline ChunkHost random_chunk_case(std::uint64_t seed, const ChunkForce& f = {}) {
  const std::int64_t dims[] = {16, 32, 64, 128, 256};
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  Rng rng(seed * 7919 + 17);
  const std::int64_t K = f.K.value_or(dims[rng.integer(0, 4)]), V = f.V.value_or(dims[rng.integer(0, 4)]);
  const std::int64_t H = rng.integer(1, 2), HV = H * rng.integer(1, 2);
  const DType act = f.act.value_or(floats[rng.integer(0, 2)]);
  const std::int64_t max_len = f.max_len.value_or(40);
  ChunkHost c;
  c.has_cu = rng.integer(0, 1) || f.seqs.has_value();
  std::int64_t B = 1, T = 0, N = 1;
  std::vector<std::int64_t> cu{0};
  if (c.has_cu) {
    N = f.seqs.value_or(rng.integer(1, 4));
    for (std::int64_t n = 0; n < N; ++n) cu.push_back(cu.back() + (rng.integer(0, 4) == 0 ? 0 : rng.integer(1, max_len)));
    T = cu.back();
  } else {
    B = rng.integer(1, 3);
    N = B;
    T = rng.integer(0, max_len);
  }
  kparity::kda::ChunkArgs& a = c.a;
  a.use_qk_l2norm_in_kernel = rng.integer(0, 3) != 0;  // chunk_kda is nearly always called with it
  a.use_gate_in_kernel = f.extreme == GateExtreme::none && rng.integer(0, 1);
  a.use_beta_sigmoid_in_kernel = rng.integer(0, 1);
  a.allow_neg_eigval = a.use_beta_sigmoid_in_kernel && rng.integer(0, 2) == 0;
  a.output_final_state = rng.integer(0, 3) != 0;
  a.state_v_first = rng.integer(0, 1);
  if (rng.integer(0, 2) == 0) a.scale = 0.5 / std::sqrt(double(K));
  c.has_init = rng.integer(0, 3) != 0;
  c.q = Tensor(act, {B, T, H, K}); c.q.fill_normal(seed + 1);
  // Without the in-kernel l2norm the keys come in normalised on average (|k|^2 ~ 1): the delta rule
  // with beta |k|^2 far above 2 diverges exponentially, in any precision and in fla too.
  c.k = Tensor(act, {B, T, H, K});
  c.k.fill_normal(seed + 2, 0.0, a.use_qk_l2norm_in_kernel ? 1.0 : 1.0 / std::sqrt(double(K)));
  c.v = Tensor(act, {B, T, HV, V}); c.v.fill_normal(seed + 3);
  c.g = Tensor(act, {B, T, HV, K});
  std::string gate;
  if (a.use_gate_in_kernel) {
    c.g.fill_normal(seed + 4, 0.0, 1.0);
    c.has_A_log = rng.integer(0, 3) != 0;
    c.has_dt_bias = rng.integer(0, 1);
    if (rng.integer(0, 1)) { a.lower_bound = -5.0; a.safe_gate = rng.integer(0, 1); }
    else if (!c.has_A_log) c.has_A_log = true;  // the softplus form needs A_log (contract)
    c.A_log = Tensor(DType::f32, {HV}); c.A_log.fill_normal(seed + 5, 0.0, 0.5);
    // dt_bias flat [HV * K] or [HV, K] (chunk_kda takes both).
    c.dt_bias = rng.integer(0, 1) ? Tensor(DType::f32, {HV * K}) : Tensor(DType::f32, {HV, K});
    c.dt_bias.fill_normal(seed + 6, 0.0, 0.2);
    gate = a.lower_bound ? " bounded gate" : " softplus gate";
  } else {
    switch (f.extreme) {
      case GateExtreme::none: c.g.fill_uniform(seed + 4, -0.3, 0.0); gate = " g"; break;
      case GateExtreme::lower_bound: c.g.fill(-5.0); gate = " g=-5"; break;
      case GateExtreme::minus8: c.g.fill(-8.0); gate = " g=-8"; break;
      case GateExtreme::minus_inf: {
        c.g.fill_uniform(seed + 4, -0.3, 0.0);
        Rng r2(seed + 99);
        for (int i = 0; i < 6 && c.g.numel() > 0; ++i)
          c.g.view().store_flat(r2.integer(0, c.g.numel() - 1), -INFINITY);
        gate = " g with -inf";
        break;
      }
    }
  }
  c.beta = Tensor(act, {B, T, HV});
  if (a.use_beta_sigmoid_in_kernel) c.beta.fill_normal(seed + 7);
  else c.beta.fill_uniform(seed + 7, 0.0, 1.0);
  const Shape st = a.state_v_first ? Shape{N, HV, V, K} : Shape{N, HV, K, V};
  c.init = Tensor(DType::f32, st); c.init.fill_normal(seed + 8, 0.0, 0.05);
  c.fin = Tensor(DType::f32, st);
  c.out = Tensor(act, {B, T, HV, V});
  c.cu = Tensor(rng.integer(0, 1) ? DType::i32 : DType::i64, {N + 1});
  for (std::int64_t i = 0; i <= N && c.has_cu; ++i) c.cu.view().store_flat(i, double(cu[i]));
  c.tag = "seed " + std::to_string(seed) + " B=" + std::to_string(B) + " T=" + std::to_string(T) + " N=" +
          std::to_string(N) + " H=" + std::to_string(H) + " HV=" + std::to_string(HV) + " K=" + std::to_string(K) +
          " V=" + std::to_string(V) + " " + std::string(dtype_name(act)) + gate +
          (a.use_qk_l2norm_in_kernel ? " l2norm" : "") + (a.allow_neg_eigval ? " 2sigmoid" :
          a.use_beta_sigmoid_in_kernel ? " sigmoid" : "") + (a.state_v_first ? " v-first" : " k-first") +
          (c.has_init ? " init" : "") + (c.has_cu ? " varlen" : "");
  return c;
}

}  // namespace kparity::gpu_test
