// The oracle properties (`<op>/oracle/long-accumulator`, fuzz/src/properties/oracle_properties.cpp)
// on the test-only fuzz library, for the harness-mutant kill table: the fast-path mutant
// "oracle-fast-path-inexact" must be caught here and nowhere else (kill_table.cmake, row marked
// only). 200 cases per op with a pinned seed: about 2 s.
#include <gtest/gtest.h>

#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace {

TEST(OracleProperty, TheFastOracleEqualsItsLongAccumulatorEvaluationOnEveryOp) {
  for (const auto& p : kparity::fuzz::oracle_properties()) {
    const auto r = kparity::fuzz::run_property(p, 0x6f7261636c65ull, 200, 100, false);
    EXPECT_TRUE(r.passed) << p.name << ": " << r.message;
  }
}

}  // namespace
