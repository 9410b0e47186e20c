// The KDA fuzz generators (fuzz/src/generators/kda_gen.cpp): every draw is a call the strict contract accepts
// (special-values draws: only the non-finite check objects, at the injected element), every edge
// bucket is reachable within a few hundred draws, and the differential floor is a relative bound.
// Seeds are pinned; KPARITY_FUZZ_SEED overrides them.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <rapidcheck.h>
#include <set>

#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/kda_support.hpp"
#include "support/fuzz_seed.hpp"

namespace kparity::fuzz {
namespace {

std::uint64_t seed_for(const std::string& name) { return kparity::testing_support::pinned_seed(name, 0x6b64615f67656e31ull); }

PropertyOutcome check(const std::string& name, int cases, std::function<void()> body) {
  const Property p{name, "test", std::move(body)};
  return run_property(p, seed_for(name), cases, 100, true);
}

std::string errors_of(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds)
    if (d.severity == Severity::error) s += d.slug + " at " + d.location + ": " + d.message + "\n";
  return s;
}

void expect_valid(const Call& c, const GenConfig& cfg, const std::optional<KdaSpecial>& special) {
  RC_LOG() << c.description << "\n";
  const OpContract* contract = find_op_contract(c.op);
  RC_ASSERT(contract != nullptr);
  for (const auto& name : c.written) RC_ASSERT(c.tensors.count(name) == 1u);
  for (const auto& name : c.pure_outputs) {
    RC_ASSERT(std::find(c.written.begin(), c.written.end(), name) != c.written.end());
    RC_ASSERT(max_finite_abs(c.at(name).view()) == 0.0);  // poisoned: nothing finite in it
  }
  const auto strict = contract->validate(c.bag(), ValidateOptions::strict(Entry::reference));
  const bool non_finite = special && (special->kind == KdaSpecial::Kind::nan || special->kind == KdaSpecial::Kind::pos_inf ||
                                      special->kind == KdaSpecial::Kind::neg_inf);
  if (!cfg.special_values || !non_finite || !special->referenced) {
    RC_LOG() << errors_of(strict);
    RC_ASSERT(errors_of(strict).empty());
    RC_ASSERT(c.options.deep);
    return;
  }
  // C.3 O6 (data check) is the one objection, and it names the injected tensor; upstream and the
  // references with the data checks off (the call's own options) accept the call.
  for (const auto& d : strict) {
    if (d.severity != Severity::error) continue;
    RC_LOG() << d.slug << " at " << d.location << "\n";
    RC_ASSERT(d.slug == "kda-non-finite" || d.slug == "kda-recurrent-non-finite");
    RC_ASSERT(d.location.find("arg[" + special->tensor + "]") != std::string::npos);
  }
  RC_ASSERT(!c.options.deep);
  const auto own = contract->validate(c.bag(), c.options);
  RC_LOG() << errors_of(own);
  RC_ASSERT(errors_of(own).empty());
}

const std::vector<std::string> kOps = {"kda/recurrent", "kda/packed_decode", "kda/replayssm_decode"};

TEST(KdaGen, DrawsPassTheStrictContract) {
  for (const auto& op : kOps)
    for (const bool special : {false, true}) {
      GenConfig cfg;
      cfg.special_values = special;
      const auto o = check(op + (special ? "/validate-special" : "/validate"), 200, [&] {
        const KdaDraw d = draw_kda(op, cfg);
        expect_valid(d.call, cfg, d.special);
        // And the faithful reference runs it (the reference validates with the call's options).
        Call run = d.call;
        run_kda(run, reference::Precision::faithful);
      });
      EXPECT_TRUE(o.passed) << op << " special=" << special << ": " << o.message;
      EXPECT_EQ(o.cases, 200);
    }
}

TEST(KdaGen, LargeDrawsPassTheStrictContractWithKernelHeadDims) {
  for (const auto& op : kOps) {
    GenConfig cfg;
    cfg.large = true;
    const auto o = check(op + "/validate-large", 12, [&] {
      const KdaDraw d = draw_kda(op, cfg);
      expect_valid(d.call, cfg, d.special);
      // Every drawn call is one the CUDA kernels accept: K, V powers of two in [16, 256].
      RC_ASSERT(d.shape.K >= 16 && d.shape.K <= 256 && (d.shape.K & (d.shape.K - 1)) == 0);
      RC_ASSERT(d.shape.V >= 16 && d.shape.V <= 256 && (d.shape.V & (d.shape.V - 1)) == 0);
    });
    EXPECT_TRUE(o.passed) << op << ": " << o.message;
  }
}

// Under each config the campaign and the properties draw with, every bucket kda_buckets() lists
// for it is hit within a few hundred draws (kernel-sized draws: those only they reach) and nothing
// outside the list is noted; the spec's list is the union over configs.
TEST(KdaGen, EveryBucketIsHit) {
  GenConfig special, large;
  special.special_values = true;
  large.large = true;
  struct Config {
    std::string name;
    GenConfig cfg;
    KdaDrawOptions opts;
    int cases;
  };
  const std::vector<Config> configs = {{"default", {}, {}, 400},
                                       {"special", special, {}, 300},
                                       {"large", large, {}, 80},
                                       {"exact", {}, {.values = KdaValues::exact}, 400},
                                       {"packed-compatible", {}, {.packed_compatible = true}, 300}};
  for (const auto& spec : kda_specs()) {
    std::set<std::string> union_listed;
    for (const auto& c : configs) {
      if (c.opts.packed_compatible && spec.op != "kda/recurrent") continue;
      std::map<std::string, int> hits;
      take_buckets();
      const auto o = check(spec.op + "/coverage-" + c.name, c.cases, [&] {
        draw_kda(spec.op, c.cfg, c.opts);
        for (auto& b : take_buckets()) ++hits[b];
      });
      EXPECT_TRUE(o.passed) << o.message;
      const auto list = kda_buckets(spec.op, c.cfg, c.opts);
      const std::set<std::string> listed(list.begin(), list.end());
      EXPECT_EQ(listed.size(), list.size()) << spec.op << " lists a bucket twice";
      // Kernel-sized draws are few (each fills megabytes); they must reach what only they can reach,
      // the default draws cover the rest.
      const auto small = kda_buckets(spec.op, GenConfig{}, c.opts);
      for (const auto& b : list) {
        if (c.cfg.large && std::find(small.begin(), small.end(), b) != small.end()) continue;
        EXPECT_GT(hits[b], 0) << spec.op << " " << c.name << ": bucket " << b << " never hit";
      }
      for (const auto& [b, n] : hits)
        EXPECT_TRUE(listed.count(b)) << spec.op << " " << c.name << ": noted bucket " << b << " is not listed";
      union_listed.insert(list.begin(), list.end());
    }
    EXPECT_EQ(std::set<std::string>(spec.buckets.begin(), spec.buckets.end()), union_listed) << spec.op;
  }
}

// The floor is an ulp-scale bound at the result's magnitude: doubling the data (v, the state and
// the ring deltas; the recurrence is linear in them jointly, and a power of two scales every
// rounding exactly) doubles it, up to the fixed 2 FLT_MIN term.
TEST(KdaGen, FloorScalesWithTheData) {
  for (const auto& spec : kda_specs()) {
    const auto o = check(spec.op + "/floor-scaling", 30, [&] {
      const KdaDraw d = draw_kda(spec.op, GenConfig{}, {.values = KdaValues::typical});
      Call twice = d.call;
      const auto scale = [](const TensorView& v) {
        for_each_element(v, [&](std::span<const std::int64_t> i, std::int64_t) {
          const double x = v.load(i);
          if (std::isfinite(x)) v.store(i, 2 * x);
        });
      };
      const KdaShape& s = d.shape;
      if (spec.op == "kda/recurrent") {
        scale(twice.at("v").view());
        if (s.has_initial) scale(twice.at("initial_state").view());
      } else {
        const TensorView mq = twice.at("mixed_qkv").view();
        for (std::int64_t r = 0; r < s.B; ++r)
          for (std::int64_t c = 2 * s.H * s.K; c < mq.size(1); ++c) {
            const std::int64_t i[2] = {r, c};
            if (std::isfinite(mq.load(i))) mq.store(i, 2 * mq.load(i));
          }
        scale(twice.at("initial_state").view());
        if (spec.op == "kda/replayssm_decode") scale(twice.at("d_cache").view());
      }
      const double tiny = 2.0 * std::numeric_limits<float>::min();
      Call result = d.call;
      run_kda(result, reference::Precision::oracle);
      for (const auto& name : d.call.written) {
        if (name == "k_cache" || name == "g_cache") continue;  // keys and gates do not scale
        // Below the normal range of a 16-bit dtype the ulp no longer scales.
        if (max_finite_abs(result.at(name).view()) < 1e-3) continue;
        const double f1 = spec.abs_floor(d.call, name, nullptr) - tiny, f2 = spec.abs_floor(twice, name, nullptr) - tiny;
        RC_LOG() << name << ": " << f1 << " -> " << f2 << "\n";
        RC_ASSERT(f1 > 0.0);
        RC_ASSERT(std::fabs(f2 - 2 * f1) <= 1e-12 * f2);
      }
    });
    EXPECT_TRUE(o.passed) << o.message;
  }
}

}  // namespace
}  // namespace kparity::fuzz
