// Every fuzz property as a GoogleTest case with a pinned seed and a CI-sized budget (the CI
// fixed-seed tier); `kparity fuzz` runs the same properties with larger budgets. KPARITY_FUZZ_SEED
// overrides the seed, KPARITY_FUZZ_CASES the cases per property.
#include <cstdlib>
#include <gtest/gtest.h>
#include <string>

#include <fmt/format.h>

#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "support/fuzz_seed.hpp"

namespace {

std::uint64_t seed_for(const std::string& name) { return kparity::testing_support::pinned_seed(name, 0x6b7061726974ull); }

int cases() {
  if (const char* s = std::getenv("KPARITY_FUZZ_CASES")) return std::max(1, std::atoi(s));
  return 100;
}

class PropertyTest : public testing::Test {
 public:
  explicit PropertyTest(kparity::fuzz::Property p) : p_(std::move(p)) {}
  void TestBody() override {
    const std::uint64_t seed = seed_for(p_.name);
    const auto r = kparity::fuzz::run_property(p_, seed, cases(), 100, true);
    EXPECT_TRUE(r.passed) << p_.name << " failed with seed " << seed << " after " << r.cases << " cases\n"
                          << r.message << "repro: kparity fuzz --property " << p_.name << " --seed "
                          << fmt::format("0x{:x}", r.seed) << " --cases " << r.repro_cases;
  }

 private:
  kparity::fuzz::Property p_;
};

const bool registered = [] {
  for (const auto& p : kparity::fuzz::all_properties()) {
    std::string test = p.name;
    for (char& c : test)
      if (c == '/' || c == '-') c = '_';
    testing::RegisterTest(("Fuzz_" + p.kind).c_str(), test.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [p]() -> testing::Test* { return new PropertyTest(p); });
  }
  return true;
}();

}  // namespace
