// `kparity explain` with a query that matches nothing exactly: the ranked candidates of
// kparity::search on stderr, best first, and exit status 2.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "site/site_test_util.hpp"

namespace kparity::test {
namespace {

class ExplainCandidates : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cli();
    dir = scratch_dir("candidates");
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
};

// The first candidate line: "  <id>  <slug> <score>  <summary>".
std::string first_candidate(const std::string& err) {
  const auto head = err.find("help: closest entries");
  if (head == std::string::npos) return {};
  const auto line = err.find('\n', head);
  return err.substr(line + 3, 16);
}

TEST_F(ExplainCandidates, RankedFirstForTheIssueExamples) {
  const std::pair<const char*, const char*> cases[] = {
      {"sparse_attn_v4_paged_prefill requires CUDA tensors", "5d9da259c68eb6c4"},
      {"RuntimeError: sparse_attn_v4_paged_prefill requires CUDA/HIP tensors", "5d9da259c68eb6c4"},
      {"g_cache must be float32", "066bd06e9ab538bd"},
      {"force_flush on wrong device", "b62325e96d849b25"},
  };
  for (const auto& [query, id] : cases) {
    const auto r = run_cli({"explain", query}, dir);
    EXPECT_EQ(r.rc, 2) << query;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_NE(r.err.find("error: no catalog entry matches"), std::string::npos) << r.err;
    EXPECT_EQ(first_candidate(r.err), id) << query << "\n" << r.err;
    EXPECT_NE(r.err.find("words: "), std::string::npos) << r.err;
  }
}

TEST_F(ExplainCandidates, WordsSplitAcrossArgumentsAreOneQuery) {
  const auto r = run_cli({"explain", "force_flush", "on", "wrong", "device"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(first_candidate(r.err), "b62325e96d849b25") << r.err;
}

TEST_F(ExplainCandidates, ExactMatchesStillPrintThePage) {
  const auto r = run_cli({"explain", "RuntimeError: Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors"}, dir);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("Catalog id: 5d9da259c68eb6c4"), std::string::npos) << r.out;
}

TEST_F(ExplainCandidates, NoiseGetsNoCandidatesButKeepsTheSpellingHint) {
  auto r = run_cli({"explain", "xyzzy"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err.find("closest entries"), std::string::npos) << r.err;
  r = run_cli({"explain", "066bd06e9ab538be"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(first_candidate(r.err), "066bd06e9ab538bd") << r.err;
  EXPECT_NE(r.err.find("did you mean 066bd06e9ab538bd"), std::string::npos) << r.err;
}

TEST_F(ExplainCandidates, AnOverrideCatalogIsSearchedToo) {
  const auto cat = dir / "one.json";
  write_override_with_summary(cat, "066bd06e9ab538bd", "a summary only this test writes");
  const auto r = run_cli({"explain", "--catalog", cat.string(), "gate ring fp32"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(first_candidate(r.err), "066bd06e9ab538bd") << r.err;
  EXPECT_NE(r.err.find("a summary only this test writes"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("5d9da259c68eb6c4"), std::string::npos) << "only the override's entries: " << r.err;
}

}  // namespace
}  // namespace kparity::test
