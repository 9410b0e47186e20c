// Every KDA metamorphic property holds for a pinned seed at a CI-sized budget, and its draws reach
// the buckets the property exists for. KPARITY_FUZZ_SEED overrides the seed; the campaign
// (`kparity fuzz --op kda`) runs the same properties with larger budgets.
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>

#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "support/fuzz_seed.hpp"

namespace kparity::fuzz {
namespace {

std::uint64_t seed_for(const std::string& name) { return kparity::testing_support::pinned_seed(name, 0x6b64615f70726f70ull); }

class KdaProperty : public testing::Test {
 public:
  explicit KdaProperty(Property p) : p_(std::move(p)) {}
  void TestBody() override {
    const std::uint64_t seed = seed_for(p_.name);
    const PropertyOutcome o = run_property(p_, seed, 40, 100, true);
    EXPECT_TRUE(o.passed) << p_.name << " failed with seed " << seed << " after " << o.cases << " cases\n" << o.message;
    EXPECT_EQ(o.cases, 40);
  }

 private:
  Property p_;
};

const bool registered = [] {
  for (const auto& p : kda_properties()) {
    std::string test = p.name.substr(4);  // "kda/"
    for (char& c : test)
      if (c == '/' || c == '-') c = '_';
    testing::RegisterTest("KdaProperties", test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [p]() -> testing::Test* { return new KdaProperty(p); });
  }
  return true;
}();

// The properties a planted bug needs are drawn often enough to matter at CI budgets: the
// equivalence property meets appending and flushing rows, several ring entries, padding rows and
// GQA; the special-values property meets NaN in live rows of every op.
TEST(KdaPropertiesCoverage, BucketsThePropertiesNeed) {
  const auto find = [](const std::string& name) {
    for (const auto& p : kda_properties())
      if (p.name == name) return p;
    throw std::invalid_argument(name);
  };
  const auto hits = [&](const std::string& name, const std::vector<std::string>& needed) {
    const Property p = find(name);
    const PropertyOutcome o = run_property(p, seed_for(name + "/coverage"), 60, 100, true);
    ASSERT_TRUE(o.passed) << o.message;
    for (const auto& b : needed) {
      const auto it = o.buckets.find(b);
      EXPECT_TRUE(it != o.buckets.end() && it->second > 0) << name << ": " << b << " never drawn in 60 cases";
    }
  };
  hits("kda/replayssm_decode/equals-packed-decode",
       {"append-row", "cursor=L-1", "ring-entries>=2", "padding-row", "gqa=2", "gqa=4", "forced-flush-mid",
        "divergent-cursors", "state=bf16"});
  hits("kda/recurrent/equals-packed-decode-steps", {"empty-seq", "N>1", "gqa=4", "l2norm=on", "gate=bounded"});
  hits("kda/packed_decode/special-values", {"special=nan", "special=inf", "special=-0", "special=subnormal",
                                            "special-unreferenced"});
  hits("kda/replayssm_decode/special-values", {"special-in=d_cache", "special-in=k_cache", "special-in=g_cache"});
}

}  // namespace
}  // namespace kparity::fuzz
