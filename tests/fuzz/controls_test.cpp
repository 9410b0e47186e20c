// The controls (issue 19 item 2; fuzz/include/kparity/fuzz/backends/reference.hpp): correct fp32
// fake kernels that accumulate in other orders (reversed, pairwise, 16-wide tiles), with fma, or in
// fp64. Their fixed-seed tier runs as the ctest fuzz.controls (the campaign itself); here: they are
// not the faithful model in disguise, the default accumulation is the faithful model bit for bit,
// and they run through the campaign's path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include <rapidcheck.h>

#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/reference/accumulate.hpp"

namespace {

using namespace kparity;
using namespace kparity::fuzz;
using reference::Accumulation;

// The first n calls an op's default generator draws from `seed` (finite inputs unless `special`).
std::vector<Call> draws(const OpFuzzSpec& spec, int n, std::uint64_t seed = 0x5eed, bool special = false) {
  std::vector<Call> out;
  GenConfig cfg;
  cfg.special_values = special;
  for (int i = 0; i < n; ++i) {
    const auto gen = rc::gen::exec([&] { return spec.draw(cfg); });
    out.push_back(gen(rc::Random(seed + static_cast<std::uint64_t>(i)), i % 101).value());
  }
  return out;
}

// Elements of the written tensors whose bits differ between two runs of the same call.
std::int64_t differing(const Call& a, const Call& b) {
  std::int64_t n = 0;
  for (const auto& name : a.written) {
    const TensorView x = a.at(name).view(), y = b.at(name).view();
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      const double u = x.load_flat(i), v = y.load_flat(i);
      if (std::isnan(u) && std::isnan(v)) continue;
      if (std::memcmp(&u, &v, sizeof u) != 0) ++n;
    }
  }
  return n;
}

TEST(Controls, EachDiffersFromTheFaithfulModelOnEveryOp) {
  // A control that rounds exactly like the faithful model would pass the rule by construction (the
  // old self-test's control): each must produce other bits on some of the first calls of every op.
  for (const auto& spec : op_specs()) {
    const std::vector<Call> calls = draws(spec, 30);
    for (const Backend& control : control_backends({spec.op})) {
      std::int64_t diff = 0, elements = 0;
      for (const auto& c : calls) {
        const Call f = run_faithful(c), b = run_backend(c, control);
        diff += differing(f, b);
        for (const auto& name : c.written) elements += c.at(name).view().numel();
      }
      if (control.name == "control/fma" && spec.op == "sparse/paged_decode") {
        // By arithmetic: q and k are bf16/f16 (every product exact in fp32), the weights are
        // rounded to the storage dtype before P.V (exact products again) and decode adds no shift
        // to q.k * scale, so no fma changes a bit here. Only fma-exponent (the fused exponent) differs.
        EXPECT_EQ(diff, 0) << control.name << " on " << spec.op;
      } else {
        EXPECT_GT(diff, 0) << control.name << " on " << spec.op << ": bit-identical to the faithful model over "
                           << calls.size() << " calls";
      }
      std::printf("%-20s %-22s %lld of %lld written elements differ from the faithful model\n", control.name.c_str(),
                  spec.op.c_str(), static_cast<long long>(diff), static_cast<long long>(elements));
    }
  }
}

// The fused exponent (accumulate.hpp, "fma-exponent"): FlashAttention's exp2(qk * scale - m) in one
// fma. Where |logit| >= 2^31 (the special values' +-2^100 keys) the max key's weight overflows and
// the output is NaN where the exact one is finite; the recipe's weight-range term (reference/sparse/
// error_bound.cpp, item 6) accepts it there. This was the rule's one false alarm the controls found.
TEST(Controls, TheFusedExponentOverflowsWhereTheRecipeSaysItMay) {
  const Backend fused = control_backend(Accumulation::fma_exponent, {"sparse/paged_decode"});
  const OpFuzzSpec& spec = spec_for("sparse/paged_decode");
  const PropertyOutcome special = run_property(differential_property(spec, fused, true), kDefaultSeed, 100, 100, false);
  EXPECT_TRUE(special.passed) << special.message;
  // What the term is for: among special-value draws, the fused kernel writes NaN where the oracle
  // is finite (keys of +-2^100; one key per token, so the exact output is that key's value).
  bool saw_nan = false;
  for (const Call& c : draws(spec, 300, kDefaultSeed, true)) {
    const Call b = run_backend(c, fused), o = run_oracle(c);
    const TensorView bo = b.at("out").view(), oo = o.at("out").view();
    for (std::int64_t i = 0; i < bo.numel() && !saw_nan; ++i)
      saw_nan = std::isnan(bo.load_flat(i)) && std::isfinite(oo.load_flat(i));
    if (saw_nan) break;
  }
  EXPECT_TRUE(saw_nan) << "no draw made the fused exponent overflow: the test no longer shows why item 6 exists";
  const PropertyOutcome finite = run_property(differential_property(spec, fused, false), kDefaultSeed, 100, 100, false);
  EXPECT_TRUE(finite.passed) << finite.message;
}

TEST(Controls, TheDefaultAccumulationIsTheFaithfulModel) {
  // index_order through the same scope is the faithful model itself, bit for bit (what the
  // refactoring of the reference's reductions into accumulate.hpp must keep).
  const Backend same = control_backend(Accumulation::index_order, {});
  for (const auto& spec : op_specs())
    for (const auto& c : draws(spec, 10)) {
      Backend b = same;
      b.ops = {spec.op};
      EXPECT_EQ(differing(run_faithful(c), run_backend(c, b)), 0) << spec.op << ": " << c.description;
    }
}

TEST(Controls, NamesRoundTripAndExcludeTheFaithfulOrder) {
  for (const auto a : reference::control_accumulations()) {
    EXPECT_NE(a, Accumulation::index_order);
    EXPECT_EQ(reference::parse_accumulation(reference::accumulation_name(a)), a);
  }
  EXPECT_EQ(reference::control_accumulations().size(), 6u);
  EXPECT_EQ(reference::parse_accumulation("fma-exponent"), Accumulation::fma_exponent);
  EXPECT_FALSE(reference::parse_accumulation("tile32").has_value());
  EXPECT_EQ(reference::accumulation(), Accumulation::index_order);  // scopes end with their run
}

TEST(Controls, FaithfulSumOrders) {
  // 2^24 + 1 + 1 + ...: in index order each 1 is lost to rounding; reversed, the ones add up first.
  std::vector<float> x(17, 1.0f);
  x[0] = 16777216.0f;
  const auto term = [&](std::size_t i) { return std::pair{x[i], 1.0f}; };
  EXPECT_EQ(reference::faithful_sum(x.size(), term), 16777216.0f);
  {
    const reference::AccumulationScope s(Accumulation::reversed);
    EXPECT_EQ(reference::faithful_sum(x.size(), term), 16777232.0f);
  }
  {
    const reference::AccumulationScope s(Accumulation::fp64);
    EXPECT_EQ(reference::faithful_sum(x.size(), term), 16777232.0f);
  }
  {
    // Tiles [0, 16) and [16, 17): the first tile loses its ones, the second adds its one to 2^24
    // (a tie, rounded to even: 2^24).
    const reference::AccumulationScope s(Accumulation::tile16);
    EXPECT_EQ(reference::faithful_sum(x.size(), term), 16777216.0f);
  }
  {
    // Halves [0, 8) and [8, 17): 2^24 + 7 ones lost one by one except at the leaves' pairs.
    const reference::AccumulationScope s(Accumulation::pairwise);
    EXPECT_GT(reference::faithful_sum(x.size(), term), 16777216.0f);
  }
  {
    // fma keeps a*b exact before the add: -3 + 3 * (1 + 2^-23) is 3 * 2^-23 fused; unfused, the
    // product 3 + 1.5 * 2^-22 ties and rounds to even, 3 + 2^-21.
    const float a = 1.0f + 0x1p-23f;
    const auto t = [&](std::size_t i) { return i == 0 ? std::pair{-3.0f, 1.0f} : std::pair{3.0f, a}; };
    EXPECT_EQ(reference::faithful_sum(2, t), 0x1p-21f);
    const reference::AccumulationScope s(Accumulation::fma);
    EXPECT_EQ(reference::faithful_sum(2, t), 3 * 0x1p-23f);
  }
}

TEST(Controls, RunThroughTheCampaignAndHold) {
  // The campaign's own selection and runner (what `kparity fuzz --backend control` does), on a
  // small budget: every control property of every op is there and holds.
  CampaignOptions o;
  o.backend = "control";
  o.cases = 20;
  o.corpus_dir.clear();
  std::vector<BackendStatus> backends;
  const std::vector<Property> props = campaign_properties(o, backends);
  EXPECT_EQ(props.size(), op_specs().size() * reference::control_accumulations().size() * 2);
  std::ostringstream log;
  const CampaignResult r = run_campaign(props, o, backends, log);
  EXPECT_TRUE(r.passed()) << log.str();
  for (const auto& p : r.properties) EXPECT_EQ(p.cases, 20) << p.name;
}

}  // namespace
