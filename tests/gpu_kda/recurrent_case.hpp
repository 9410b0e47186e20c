#pragma once
// Random varlen calls of the recurrent KDA prefill (kda.md A.7 token by token), shared by the
// kernel test and the host-side checks of its tolerance recipe (recurrent_bound.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::gpu_test {

struct RecHost {
  Tensor q, k, v, g, a, dt_bias, A_log, beta, init, fin, out, cu;
  bool use_g = false, l2norm = true, logits = true;
  std::optional<double> lb;
  std::string tag;  // shape and seed, for failure messages
  kparity::kda::RecurrentArgs args() const {
    kparity::kda::RecurrentArgs r;
    r.q = q; r.k = k; r.v = v; r.beta = beta; r.out = out;
    if (use_g) r.g = g.view();
    else { r.a = a.view(); r.dt_bias = dt_bias.view(); r.A_log = A_log.view(); r.lower_bound = lb; }
    r.beta_is_logits = logits; r.use_qk_l2norm_in_kernel = l2norm;
    r.initial_state = init.view(); r.final_state = fin.view(); r.cu_seqlens = cu.view();
    return r;
  }
};

// K, V in {16..256}, 1-2 heads (GQA up to 2), 1-3 sequences of 0-12 tokens, every dtype mix of
// activations and state, either gate form (the bounded one at lower_bound -5), L2 norm on or off.
// Without the L2 norm the delta rule grows the state by about beta*|k|^2 ~ K/2 per token: those
// calls test that errors are judged relative to the magnitudes they come from.
// Fields to force instead of drawing (the draws still happen, so the rest of the case is unchanged).
struct RecForce {
  std::optional<DType> act, state;
  std::optional<bool> use_g;
};

inline RecHost random_recurrent_case(std::uint64_t seed, const RecForce& force = {}) {
  const std::int64_t dims[] = {16, 32, 64, 128, 256};
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  Rng rng(seed * 31337);
  const std::int64_t K = dims[rng.integer(0, 4)], V = dims[rng.integer(0, 4)], H = rng.integer(1, 2);
  const std::int64_t HV = H * rng.integer(1, 2), N = rng.integer(1, 3);
  const DType act = force.act.value_or(floats[rng.integer(0, 2)]), st = force.state.value_or(floats[rng.integer(0, 2)]);
  std::vector<std::int64_t> cu{0};
  for (std::int64_t n = 0; n < N; ++n) cu.push_back(cu.back() + rng.integer(0, 12));
  const std::int64_t T = cu.back();
  RecHost h;
  h.use_g = rng.integer(0, 1); if (force.use_g) h.use_g = *force.use_g;
  h.l2norm = rng.integer(0, 1); h.logits = true;
  if (rng.integer(0, 1)) h.lb = -5.0;
  h.q = Tensor(act, {T, H, K}); h.q.fill_normal(seed + 1);
  h.k = Tensor(act, {T, H, K}); h.k.fill_normal(seed + 2);
  h.v = Tensor(act, {T, HV, V}); h.v.fill_normal(seed + 3);
  h.g = Tensor(DType::f32, {T, HV, K}); h.g.fill_uniform(seed + 4, -0.2, 0.0);
  h.a = Tensor(act, {T, HV, K}); h.a.fill_normal(seed + 5, 0.0, 0.5);
  h.dt_bias = Tensor(DType::f32, {HV, K}); h.dt_bias.fill_normal(seed + 6, 0.0, 0.1);
  h.A_log = Tensor(DType::f32, {HV}); h.A_log.fill_normal(seed + 7, 0.0, 0.3);
  h.beta = Tensor(act, {T, HV}); h.beta.fill_normal(seed + 8);
  h.init = Tensor(st, {N, HV, V, K}); h.init.fill_normal(seed + 9, 0.0, 0.02);
  h.fin = Tensor(st, {N, HV, V, K});
  h.out = Tensor(act, {T, HV, V});
  h.cu = Tensor(DType::i32, {N + 1});
  for (std::int64_t i = 0; i <= N; ++i) h.cu.view().store_flat(i, double(cu[i]));
  h.tag = "seed " + std::to_string(seed) + " K=" + std::to_string(K) + " V=" + std::to_string(V) + " T=" +
          std::to_string(T) + " act " + std::string(dtype_name(act)) + " state " + std::string(dtype_name(st)) +
          (h.use_g ? " g" : h.lb ? " bounded gate" : " softplus gate") + (h.l2norm ? " l2norm" : " no l2norm");
  return h;
}

}  // namespace kparity::gpu_test
