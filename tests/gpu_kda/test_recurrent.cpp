// Varlen recurrent prefill kernel vs the references (kda.md A.7 token by token), random shapes.
#include <gtest/gtest.h>

#include "compare.hpp"
#include "support/gpu_env.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/reference/kda.hpp"
#include "tolerances.hpp"

namespace kparity::gpu_test {
namespace {

struct RecHost {
  Tensor q, k, v, g, a, dt_bias, A_log, beta, init, fin, out, cu;
  bool use_g = false, l2norm = true, logits = true;
  std::optional<double> lb;
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

TEST(Recurrent, VarlenMatchesReference) {
  KPARITY_REQUIRE_GPU();
  const std::int64_t dims[] = {16, 32, 64, 128, 256};
  const DType floats[] = {DType::f32, DType::bf16, DType::f16};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    Rng rng(seed * 31337);
    const std::int64_t K = dims[rng.integer(0, 4)], V = dims[rng.integer(0, 4)], H = rng.integer(1, 2);
    const std::int64_t HV = H * rng.integer(1, 2), N = rng.integer(1, 3);
    const DType act = floats[rng.integer(0, 2)], st = floats[rng.integer(0, 2)];
    std::vector<std::int64_t> cu{0};
    for (std::int64_t n = 0; n < N; ++n) cu.push_back(cu.back() + rng.integer(0, 12));
    const std::int64_t T = cu.back();
    RecHost h;
    h.use_g = rng.integer(0, 1); h.l2norm = rng.integer(0, 1); h.logits = true;
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
    RecHost lp = h, orc = h, ker = h;
    reference::kda::recurrent(lp.args(), reference::Precision::faithful);
    reference::kda::recurrent(orc.args(), reference::Precision::oracle);
    {
      DevTensor q(h.q), k(h.k), v(h.v), g(h.g), a(h.a), dtb(h.dt_bias), Al(h.A_log), beta(h.beta), init(h.init),
          fin(h.fin), out(h.out), cus(h.cu);
      out.poison();
      fin.poison();
      kparity::kda::RecurrentArgs r = h.args();
      r.q = q.view(); r.k = k.view(); r.v = v.view(); r.beta = beta.view(); r.out = out.view();
      if (h.use_g) r.g = g.view();
      else { r.a = a.view(); r.dt_bias = dtb.view(); r.A_log = Al.view(); }
      r.initial_state = init.view(); r.final_state = fin.view(); r.cu_seqlens = cus.view();
      const Status s = kernels::kda::recurrent(r, nullptr, kernels::LaunchOptions{ValidateOptions::upstream(), true});
      ASSERT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
      out.download(ker.out);
      fin.download(ker.fin);
    }
    const std::string tag = "seed " + std::to_string(seed) + " K=" + std::to_string(K) + " V=" + std::to_string(V) +
                            " T=" + std::to_string(T);
    const double F = tol::factor(h.lb.has_value());
    EXPECT_TRUE(close(ker.out, lp.out, orc.out, tol::kRecurrentOut, F, tag + " out"));
    EXPECT_TRUE(close(ker.fin, lp.fin, orc.fin, tol::kRecurrentState, F, tag + " final state"));
  }
}

}  // namespace
}  // namespace kparity::gpu_test
