// `kparity fuzz --self-test` with a CI-sized budget: the shared differential rule catches every
// planted bug (by a mismatch, not by an exception) and never flags the unmodified faithful reference.
#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <set>
#include <sstream>

#include "kparity/fuzz/campaign/selftest.hpp"

namespace {

using namespace kparity::fuzz;

TEST(SelfTest, EveryPlantedBugIsCaughtAndNoControlIsFlagged) {
  SelfTestOptions o;
  o.max_cases = 150;
  if (const char* s = std::getenv("KPARITY_FUZZ_SEED")) o.seed = std::strtoull(s, nullptr, 0);
  std::ostringstream log;
  const auto outcomes = self_test(o, log);
  std::set<std::string> bugs, controls;
  for (const auto& r : outcomes) {
    const char* what = r.control ? "control flagged" : r.blind.empty() ? "bug not caught" : "ledgered blind spot caught (remove it)";
    EXPECT_TRUE(r.ok()) << r.backend << " on " << r.op << ": " << what
                        << " after " << r.cases << " cases (seed " << o.seed << "): " << r.detail;
    (r.control ? controls : bugs).insert(r.control ? r.op : r.backend);
  }
  EXPECT_EQ(bugs.size(), planted_bugs().size());
  for (const auto& b : planted_bugs()) {
    EXPECT_TRUE(bugs.count(b.backend.name)) << b.name;
    EXPECT_TRUE(controls.count(b.op)) << "no control for " << b.op;
  }
  std::cout << log.str();
}

TEST(SelfTest, ExitStatusFollowsTheOutcome) {
  SelfTestOptions o;
  o.max_cases = 60;
  o.bugs = {"selftest/state-written-on-append"};
  std::ostringstream log;
  EXPECT_EQ(run_self_test(log, o), 0) << log.str();
  // One case cannot catch a bug that needs a ring entry, a padding row or a duplicate to show.
  o.max_cases = 0;
  std::ostringstream none;
  EXPECT_EQ(run_self_test(none, o), 1) << none.str();
  EXPECT_NE(none.str().find("NOT caught"), std::string::npos) << none.str();
}

TEST(SelfTest, TheLedgerNamesPlantedBugsOnly) {
  for (const auto& spot : blind_spots()) {
    const auto bugs = planted_bugs();
    EXPECT_TRUE(std::any_of(bugs.begin(), bugs.end(), [&](const PlantedBug& b) { return b.name == spot.bug; })) << spot.bug;
    EXPECT_NE(spot.reason.find("issue"), std::string::npos) << spot.bug << ": a ledger entry cites its issue";
  }
}

TEST(SelfTest, UnknownBugNamesAreRejected) {
  SelfTestOptions o;
  o.bugs = {"off-by-two"};
  std::ostringstream log;
  EXPECT_THROW(self_test(o, log), std::invalid_argument);
}

}  // namespace
