// Varlen recurrent prefill kernel vs the exact result (kda.md A.7 token by token), random shapes,
// judged by the a-priori bound of recurrent_bound.hpp. The RecurrentRecipe tests check the recipe
// itself on the host (no GPU needed): the faithful reference, another fp32 implementation, lies
// within it; the bound follows the oracle's trajectory; and it is tight enough to see a gate
// stored in bf16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "compare.hpp"
#include "kparity/kernels/kda.hpp"
#include "recurrent_bound.hpp"
#include "recurrent_case.hpp"
#include "support/gpu_env.hpp"

namespace kparity::gpu_test {
namespace {

constexpr std::uint64_t kSeeds = 8;

std::vector<double> scaled(const std::vector<double>& b, double f) {
  std::vector<double> r(b.size());
  for (std::size_t i = 0; i < b.size(); ++i) r[i] = f * b[i];
  return r;
}

TEST(RecurrentRecipe, BoundFollowsTheOracleTrajectory) {
  // Two fp64 implementations of A.7 (the reference's oracle mode and the recipe's trajectory)
  // differ by fp64 rounding only, far below a millionth of the fp32 bound.
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RecHost orc = random_recurrent_case(seed);
    const RecurrentBound b = recurrent_bound(orc.args());
    reference::kda::recurrent(orc.args(), reference::Precision::oracle);
    EXPECT_TRUE(within_rounded(orc.out, b.out, scaled(b.out_bound, 1e-6), orc.tag + " oracle out"));
    EXPECT_TRUE(within_rounded(orc.fin, b.state, scaled(b.state_bound, 1e-6), orc.tag + " oracle final state"));
  }
}

TEST(RecurrentRecipe, FaithfulReferenceWithinBound) {
  // The faithful reference is an fp32 implementation with the spec's rounding points in one fixed
  // order: the recipe must hold for it as for the kernel. Also checks the recipe's own premise
  // (first order: the bound stays small against the state).
  double out_share = 0, state_share = 0, rel = 0;
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    RecHost lp = random_recurrent_case(seed);
    const RecurrentBound b = recurrent_bound(lp.args());
    reference::kda::recurrent(lp.args(), reference::Precision::faithful);
    double so = 0, ss = 0;
    EXPECT_TRUE(within_rounded(lp.out, b.out, b.out_bound, lp.tag + " faithful out", &so));
    EXPECT_TRUE(within_rounded(lp.fin, b.state, b.state_bound, lp.tag + " faithful final state", &ss));
    EXPECT_LT(b.worst_relative_state_bound, 1e-2) << lp.tag << ": the first-order recipe is out of its range";
    // Shares of 16-bit stores are 100% by construction (the bound allows one or two roundings): only
    // fp32 stores say how much of the bound an implementation uses.
    if (lp.out.view().dtype == DType::f32) out_share = std::max(out_share, so);
    if (lp.fin.view().dtype == DType::f32) state_share = std::max(state_share, ss);
    rel = std::max(rel, b.worst_relative_state_bound);
  }
  std::printf("recipe: the faithful reference used at most %.1f%% (fp32 out) and %.1f%% (fp32 final state) of the "
              "allowed distance; largest state bound %.2e of its row\n",
              100 * out_share, 100 * state_share, rel);
}

TEST(RecurrentRecipe, CatchesAGateStoredInBf16) {
  // A planted precision defect a kernel could have: the log-decay g rounded to bf16 before exp
  // (relative error 2^-9 in g, so about |g| 2^-9 per token in the state). The faithful reference
  // run on that g must leave the bound of the true call, in fp32 where no storage rounding hides it.
  for (std::uint64_t seed = 1; seed <= 200; ++seed) {
    RecHost h = random_recurrent_case(seed, {.act = DType::f32, .state = DType::f32, .use_g = true});
    if (h.q.view().size(0) < 6) continue;  // a few tokens, so the error builds up
    const RecurrentBound b = recurrent_bound(h.args());
    RecHost bad = h;
    bad.g = Tensor(DType::f32, {h.g.view().size(0), h.g.view().size(1), h.g.view().size(2)});
    for (std::int64_t i = 0; i < h.g.numel(); ++i)
      bad.g.view().store_flat(i, round_to_dtype(h.g.view().load_flat(i), DType::bf16));
    reference::kda::recurrent(bad.args(), reference::Precision::faithful);
    EXPECT_FALSE(within_rounded(bad.fin, b.state, b.state_bound, h.tag)) << "the recipe missed a bf16 gate";
    EXPECT_FALSE(within_rounded(bad.out, b.out, b.out_bound, h.tag)) << "the recipe missed a bf16 gate";
    return;
  }
  FAIL() << "no seed gave a long enough sequence";
}

struct Devices {
  DevTensor q, k, v, g, a, dtb, Al, beta, init, fin, out, cus;
};

TEST(Recurrent, VarlenMatchesReference) {
  KPARITY_REQUIRE_GPU();
  for (std::uint64_t seed = 1; seed <= kSeeds; ++seed) {
    const RecHost h = random_recurrent_case(seed);
    const RecurrentBound b = recurrent_bound(h.args());
    RecHost ker = h;
    {
      Devices d{DevTensor(h.q), DevTensor(h.k), DevTensor(h.v), DevTensor(h.g), DevTensor(h.a), DevTensor(h.dt_bias),
                DevTensor(h.A_log), DevTensor(h.beta), DevTensor(h.init), DevTensor(h.fin), DevTensor(h.out),
                DevTensor(h.cu)};
      d.out.poison();
      d.fin.poison();
      kparity::kda::RecurrentArgs r = h.args();
      r.q = d.q.view(); r.k = d.k.view(); r.v = d.v.view(); r.beta = d.beta.view(); r.out = d.out.view();
      if (h.use_g) r.g = d.g.view();
      else { r.a = d.a.view(); r.dt_bias = d.dtb.view(); r.A_log = d.Al.view(); }
      r.initial_state = d.init.view(); r.final_state = d.fin.view(); r.cu_seqlens = d.cus.view();
      const Status s = kernels::kda::recurrent(r, nullptr, kernels::LaunchOptions{ValidateOptions::upstream(), true});
      ASSERT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
      d.out.download(ker.out);
      d.fin.download(ker.fin);
    }
    double so = 0, ss = 0;
    EXPECT_TRUE(within_rounded(ker.out, b.out, b.out_bound, h.tag + " out", &so));
    EXPECT_TRUE(within_rounded(ker.fin, b.state, b.state_bound, h.tag + " final state", &ss));
    if (h.q.view().size(0) > 0) EXPECT_TRUE(nonzero(ker.out)) << h.tag << ": the kernel wrote nothing";
    std::printf("%s: %.1f%% (out), %.1f%% (final state) of the recipe's allowed distance (100%% for a 16-bit store "
                "that took the rounding the bound allows)\n",
                h.tag.c_str(), 100 * so, 100 * ss);
  }
}

}  // namespace
}  // namespace kparity::gpu_test
