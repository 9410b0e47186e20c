// The corpus dumps of the self-test's planted bugs (fuzz/corpus/*.selftest.<bug>-<seed>.safetensors)
// replayed against their planted bug (issue 19 item 6): each must still fail there, by the rule,
// or the dump no longer guards anything. The clean replay of the same dumps is corpus_replay_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <string>

#include "kparity/fuzz/campaign/selftest.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"

namespace {

namespace fz = kparity::fuzz;

const std::string kCorpus = std::string(KPARITY_SOURCE_DIR) + "/fuzz/corpus";

// "<op>.differential.selftest.<bug>-<16 hex seed>": the bug's name, or "" for other dumps.
std::string planted_bug_of(const std::string& file) {
  static const std::regex re(R"(\.selftest\.([a-z0-9-]+)-[0-9a-f]{16}$)");
  std::smatch m;
  const std::string stem = std::filesystem::path(file).stem().string();
  return std::regex_search(stem, m, re) ? m[1].str() : "";
}

class PlantedCorpus : public testing::Test {
 public:
  PlantedCorpus(std::string file, std::string bug) : file_(std::move(file)), bug_(std::move(bug)) {}
  void TestBody() override {
    const auto bugs = fz::planted_bugs();
    const auto it = std::find_if(bugs.begin(), bugs.end(), [&](const fz::PlantedBug& b) { return b.name == bug_; });
    ASSERT_NE(it, bugs.end()) << file_ << " names planted bug '" << bug_ << "', which the self-test no longer has";
    const fz::ReplayOutcome r = fz::replay_file(file_, {it->backend});
    std::string problems;
    for (const auto& p : r.problems) problems += "\n  " + p;
    // Exactly one problem, the planted bug's: the dump itself validates and its expected.* hold.
    ASSERT_EQ(r.problems.size(), 1u) << file_ << problems;
    EXPECT_EQ(r.problems[0].rfind(it->backend.name + " breaks the differential rule: ", 0), 0u)
        << file_ << ": replayed against " << it->backend.name << problems;
  }

 private:
  std::string file_, bug_;
};

TEST(PlantedCorpus, HoldsADumpOfMostPlantedBugs) {
  // Not every bug needs a dump (the self-test catches them afresh); an empty set would make the
  // guard below vacuous.
  int n = 0;
  for (const auto& f : fz::corpus_files(kCorpus)) n += !planted_bug_of(f).empty();
  EXPECT_GE(n, 4) << kCorpus;
}

const bool registered = [] {
  for (const auto& f : fz::corpus_files(kCorpus)) {
    const std::string bug = planted_bug_of(f);
    if (bug.empty()) continue;
    std::string name = std::filesystem::path(f).stem().string();
    for (char& c : name)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    testing::RegisterTest("PlantedCorpus", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [f, bug]() -> testing::Test* { return new PlantedCorpus(f, bug); });
  }
  return true;
}();

}  // namespace
