// The guards other than the oracle property, on the test-only fuzz library (kill_table.cmake runs
// them with every mutant of a row marked `only`, and with no mutant): the self-test (every planted
// bug caught by the rule, every control clean) and the controls through the campaign's differential
// properties. With the fast-path mutant "oracle-fast-path-inexact" they still pass: the rule judges
// fp32 results against a bound that contains the oracle's own error, so a last-bit fp64 error of the
// oracle is invisible to them, which is why the oracle property exists (issue 25).
#include <gtest/gtest.h>

#include <sstream>

#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/campaign/selftest.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace {

using namespace kparity::fuzz;

TEST(OtherGuards, SelfTestCatchesEveryPlantedBugAndNoControl) {
  SelfTestOptions o;
  o.max_cases = 100;
  std::ostringstream log;
  for (const auto& r : self_test(o, log)) EXPECT_TRUE(r.ok()) << r.backend << " on " << r.op << ": " << r.detail;
}

TEST(OtherGuards, ControlsHoldTheDifferentialRule) {
  std::vector<std::string> ops;
  for (const auto& s : op_specs()) ops.push_back(s.op);
  for (const auto& p : differential_properties(control_backends(ops), op_specs())) {
    const auto r = run_property(p, 0x636f6e74726f6cull, 20, 100, false);
    EXPECT_TRUE(r.passed) << p.name << ": " << r.message;
  }
}

}  // namespace
