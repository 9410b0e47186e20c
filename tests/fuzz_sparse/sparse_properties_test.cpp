// The sparse metamorphic properties (fuzz/src/properties/sparse_properties.cpp) hold on the CPU reference at a
// pinned seed and a small budget, and they have teeth: a reference with a planted sink bug fails
// the properties that pin the sink's role. KPARITY_FUZZ_SEED overrides the seed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace {

using namespace kparity;
using namespace kparity::fuzz;

std::uint64_t seed_for(const std::string& name) {
  std::uint64_t h = 0x73706172736531ull;
  if (const char* s = std::getenv("KPARITY_FUZZ_SEED")) h = std::strtoull(s, nullptr, 0);
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

const Property& property(const std::string& name) {
  static const std::vector<Property> props = sparse_properties();
  for (const auto& p : props)
    if (p.name == name) return p;
  throw std::invalid_argument("no property " + name);
}

class SparseProperty : public testing::TestWithParam<std::string> {};

TEST_P(SparseProperty, HoldsOnTheReference) {
  const Property& p = property(GetParam());
  const std::uint64_t seed = seed_for(p.name);
  const auto r = run_property(p, seed, 100, 100, true);
  EXPECT_TRUE(r.passed) << p.name << " failed with seed " << seed << " after " << r.cases << " cases\n"
                        << r.message << "repro: KPARITY_FUZZ_SEED=<seed> or kparity fuzz --filter '" << p.name << "'";
  EXPECT_GT(r.cases, 0);
}

std::vector<std::string> names() {
  std::vector<std::string> v;
  for (const auto& p : sparse_properties()) v.push_back(p.name);
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, SparseProperty, testing::ValuesIn(names()), [](const auto& info) {
  std::string s = info.param.substr(std::string("sparse/").size());
  for (char& c : s)
    if (c == '/' || c == '-') c = '_';
  return s;
});

TEST(SparseProperties, NamedByOpAndRelation) {
  for (const auto& p : sparse_properties()) {
    EXPECT_EQ(p.kind, "metamorphic") << p.name;
    EXPECT_TRUE(p.name.rfind("sparse/paged_prefill/", 0) == 0 || p.name.rfind("sparse/paged_decode/", 0) == 0) << p.name;
  }
}

// The sink's weight leaking into the numerator (the self-test's planted bug) breaks the closed
// forms of keyless tokens: their output must be exactly zero.
TEST(SparseProperties, KeylessTokensCatchTheSinkInTheNumerator) {
  for (const char* op : {"sparse/paged_prefill", "sparse/paged_decode"}) {
    const Property& p = property(std::string(op) + "/keyless-tokens-exact");
    reference::PlantedFaultScope fault(reference::PlantedFault::sink_in_numerator);
    const auto r = run_property(p, seed_for(p.name), 60, 100, false);
    EXPECT_FALSE(r.passed) << p.name << " passed on a reference that adds the sink to the numerator";
  }
}

}  // namespace
