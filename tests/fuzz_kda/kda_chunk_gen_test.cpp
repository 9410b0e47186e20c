// The kda/chunk fuzz generator (fuzz/src/generators/kda_chunk_gen.cpp): every draw is a call the
// strict contract accepts (special-values draws: only the non-finite check objects) and the
// references run, every listed bucket is reached, the rewrites the properties use keep calls valid,
// and the floor is kda/recurrent's on the equivalent call. Seeds pinned; KPARITY_FUZZ_SEED overrides.
#include <gtest/gtest.h>

#include <map>
#include <rapidcheck.h>
#include <set>

#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/kda_chunk_gen.hpp"
#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/kda_support.hpp"
#include "support/fuzz_seed.hpp"

namespace kparity::fuzz {
namespace {

std::uint64_t seed_for(const std::string& name) { return kparity::testing_support::pinned_seed(name, 0x6b64615f63686b31ull); }

PropertyOutcome check(const std::string& name, int cases, std::function<void()> body) {
  const Property p{name, "test", std::move(body)};
  return run_property(p, seed_for(name), cases, 100, true);
}

std::string errors_of(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds)
    if (d.severity != Severity::note) s += d.slug + " at " + d.location + ": " + d.message + "\n";
  return s;
}

void expect_valid(const Call& c) {
  RC_LOG() << c.description << "\n";
  RC_ASSERT(c.op == "kda/chunk");
  const OpContract* contract = find_op_contract(c.op);
  for (const auto& name : c.pure_outputs) {
    RC_ASSERT(c.tensors.count(name) == 1u);
    RC_ASSERT(max_finite_abs(c.at(name).view()) == 0.0);  // poisoned
  }
  // No error and no warning under the call's own options (strict, or deep off around a special value).
  const auto own = contract->validate(c.bag(), c.options);
  RC_LOG() << errors_of(own);
  RC_ASSERT(own.empty());
  if (!c.options.deep) {  // only a non-finite input can be what the data checks object to
    for (const auto& d : contract->validate(c.bag(), ValidateOptions::strict(Entry::reference)))
      RC_ASSERT(d.slug == "kda-chunk-non-finite");
  }
}

TEST(KdaChunkGen, DrawsPassTheContractAndRun) {
  for (const bool special : {false, true}) {
    GenConfig cfg;
    cfg.special_values = special;
    const auto o = check(special ? "chunk/validate-special" : "chunk/validate", 200, [&] {
      const Call c = draw_kda_chunk(cfg);
      expect_valid(c);
      for (auto p : {reference::Precision::faithful, reference::Precision::oracle}) {
        Call run = c;
        run_kda(run, p);
      }
    });
    EXPECT_TRUE(o.passed) << "special=" << special << ": " << o.message;
    EXPECT_EQ(o.cases, 200);
  }
}

TEST(KdaChunkGen, EveryBucketIsHit) {
  GenConfig special, large;
  special.special_values = true;
  large.large = true;
  std::set<std::string> union_listed;
  for (const auto& [name, cfg, cases] : {std::tuple<std::string, GenConfig, int>{"default", GenConfig{}, 500},
                                         {"special", special, 300}, {"large", large, 60}}) {
    std::map<std::string, int> hits;
    take_buckets();
    const auto o = check("chunk/coverage-" + name, cases, [&] {
      draw_kda_chunk(cfg);
      for (auto& b : take_buckets()) ++hits[b];
    });
    EXPECT_TRUE(o.passed) << o.message;
    const auto list = kda_chunk_buckets(cfg);
    const std::set<std::string> listed(list.begin(), list.end());
    EXPECT_EQ(listed.size(), list.size()) << name << " lists a bucket twice";
    const auto small = kda_chunk_buckets(GenConfig{});
    for (const auto& b : list) {
      if (cfg.large && std::find(small.begin(), small.end(), b) != small.end()) continue;
      EXPECT_GT(hits[b], 0) << name << ": bucket " << b << " never hit";
    }
    for (const auto& [b, n] : hits) EXPECT_TRUE(listed.count(b)) << name << ": noted bucket " << b << " is not listed";
    union_listed.insert(list.begin(), list.end());
  }
  EXPECT_EQ(std::set<std::string>(spec_for("kda/chunk").buckets.begin(), spec_for("kda/chunk").buckets.end()), union_listed);
}

TEST(KdaChunkGen, RewritesStayValid) {
  const auto o = check("chunk/rewrites", 150, [] {
    const Call c = draw_kda_chunk(GenConfig{});
    const auto seqs = chunk_sequences(c);
    const bool varlen = c.tensors.count("cu_seqlens") != 0;
    std::vector<ChunkPiece> all, halves;
    for (std::int64_t n = 0; n < static_cast<std::int64_t>(seqs.size()); ++n) {
      all.push_back({n, 0, seqs[static_cast<std::size_t>(n)].len});
      halves.push_back({n, seqs[static_cast<std::size_t>(n)].len / 2, seqs[static_cast<std::size_t>(n)].len});
    }
    for (const Call& r : {select_chunk_tokens(c, all, varlen), select_chunk_tokens(c, halves, true),
                          chunk_as_recurrent(c, reference::Precision::oracle)}) {
      RC_LOG() << r.op << ": " << r.description << "\n";
      const auto ds = find_op_contract(r.op)->validate(r.bag(), r.options);
      RC_LOG() << errors_of(ds);
      RC_ASSERT(ds.empty());
    }
    // The whole call rebuilt from all of its pieces computes the same thing.
    Call a = c, b = select_chunk_tokens(c, all, varlen);
    run_kda(a, reference::Precision::faithful);
    run_kda(b, reference::Precision::faithful);
    for (const auto& name : c.written) RC_ASSERT(first_difference(a.at(name).view(), b.at(name).view(), Compare::values).empty());
  });
  EXPECT_TRUE(o.passed) << o.message;
}

TEST(KdaChunkGen, FloorIsTheRecurrentFloorOfTheEquivalentCall) {
  const auto o = check("chunk/floor", 30, [] {
    const Call c = draw_kda_chunk(GenConfig{});
    const Call r = chunk_as_recurrent(c, reference::Precision::oracle);
    const Call oracle = run_oracle(c);
    for (const auto& name : c.written) {
      const double f = spec_for("kda/chunk").abs_floor(c, name, nullptr);
      RC_ASSERT(f == kda_abs_floor(r, name));
      // The differential rule passes the chunk call's own oracle result: the same floor.
      RC_ASSERT(spec_for("kda/chunk").abs_floor(c, name, &oracle) == f);
      RC_ASSERT(f > 0.0);
    }
  });
  EXPECT_TRUE(o.passed) << o.message;
}

}  // namespace
}  // namespace kparity::fuzz
