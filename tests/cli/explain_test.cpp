// `kparity explain`, run as a process: look-ups, exports and the error paths.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli/cli_runner.hpp"
#include "kparity/diagnostics/catalog.hpp"

namespace kparity::test {
namespace {

constexpr const char* kGCacheDtype = "066bd06e9ab538bd";
constexpr const char* kForceFlushDevice = "b62325e96d849b25";
constexpr const char* kSparseCuda = "5d9da259c68eb6c4";

class ExplainCli : public ::testing::Test {
 protected:
  void SetUp() override { dir = scratch_dir("explain"); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  CliResult explain(std::vector<std::string> args) {
    args.insert(args.begin(), "explain");
    return run_cli(args, dir);
  }
  std::filesystem::path dir;
};

TEST_F(ExplainCli, ById) {
  for (const char* id : {kGCacheDtype, kForceFlushDevice, kSparseCuda}) {
    auto r = explain({id});
    EXPECT_EQ(r.rc, 0) << id << "\n" << r.err;
    EXPECT_NE(r.out.find(id), std::string::npos) << r.out;
  }
  auto r = explain({kGCacheDtype});
  EXPECT_NE(r.out.find("`g_cache` must have dtype torch.float32."), std::string::npos) << r.out;
}

TEST_F(ExplainCli, BySlug) {
  const CatalogEntry* e = Catalog::embedded().by_id(kGCacheDtype);
  ASSERT_NE(e, nullptr);
  auto r = explain({e->slug});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(kGCacheDtype), std::string::npos);
}

TEST_F(ExplainCli, ByPastedMessage) {
  auto r = explain({"`g_cache` must have dtype torch.float32."});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(kGCacheDtype), std::string::npos);
  // Concrete numbers resolve through messagePattern; a "ValueError: " prefix is accepted.
  const std::string msg = "`write_pos` must have shape (3,).";
  auto hits = Catalog::embedded().by_message(msg);
  ASSERT_FALSE(hits.empty()) << "no entry matches " << msg;
  for (const std::string& pasted : {msg, "ValueError: " + msg}) {
    auto p = explain({pasted});
    EXPECT_EQ(p.rc, 0) << pasted << "\n" << p.err;
    EXPECT_NE(p.out.find(hits.front()->id), std::string::npos) << p.out;
  }
}

TEST_F(ExplainCli, JsonParses) {
  auto r = explain({"--json", kGCacheDtype});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("id"), kGCacheDtype);
  auto all = explain({"--json"});
  ASSERT_EQ(all.rc, 0) << all.err;
  auto arr = nlohmann::json::parse(all.out);
  ASSERT_TRUE(arr.is_array());
  EXPECT_EQ(arr.size(), Catalog::embedded().list().size());
}

TEST_F(ExplainCli, SarifHasVersionAndRules) {
  auto r = explain({"--sarif"});
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("version"), "2.1.0");
  const auto& rules = j.at("runs").at(0).at("tool").at("driver").at("rules");
  ASSERT_TRUE(rules.is_array());
  EXPECT_EQ(rules.size(), Catalog::embedded().list().size());
  bool seed = false;
  for (const auto& rule : rules) seed = seed || rule.at("id") == kGCacheDtype;
  EXPECT_TRUE(seed);
}

TEST_F(ExplainCli, ListAndFilters) {
  auto r = explain({"--list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  for (const char* id : {kGCacheDtype, kForceFlushDevice, kSparseCuda}) EXPECT_NE(r.out.find(id), std::string::npos);
  auto sparse = explain({"--list", "--op", "sparse/"});
  ASSERT_EQ(sparse.rc, 0) << sparse.err;
  EXPECT_NE(sparse.out.find(kSparseCuda), std::string::npos);
  EXPECT_EQ(sparse.out.find(kGCacheDtype), std::string::npos);
  auto prefix = explain({"--list", "066b"});
  ASSERT_EQ(prefix.rc, 0) << prefix.err;
  EXPECT_NE(prefix.out.find(kGCacheDtype), std::string::npos);
  EXPECT_EQ(prefix.out.find(kSparseCuda), std::string::npos);
}

TEST_F(ExplainCli, MarkdownIndex) {
  auto r = explain({"--markdown"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find(kGCacheDtype), std::string::npos);
}

TEST_F(ExplainCli, UnknownExitsTwoWithSuggestion) {
  auto r = explain({"066bd06e9ab538be"});  // one digit off the seed
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("did you mean"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(kGCacheDtype), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST_F(ExplainCli, MalformedCatalogOverride) {
  const auto bad = dir / "bad.json";
  std::ofstream(bad) << "{\"id\": \"0123456789abcdef\", ";
  auto r = explain({"--catalog", bad.string(), kGCacheDtype});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("cannot load catalog"), std::string::npos) << r.err;
}

TEST_F(ExplainCli, CatalogOverrideIsUsed) {
  const CatalogEntry* e = Catalog::embedded().by_id(kGCacheDtype);
  ASSERT_NE(e, nullptr);
  nlohmann::json rec = e->record;
  rec["summary"] = "an override summary that only this test writes";
  const auto path = dir / "override.json";
  std::ofstream(path) << rec.dump();
  auto r = explain({"--catalog", path.string(), "--list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("an override summary that only this test writes"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(kSparseCuda), std::string::npos);
}

TEST_F(ExplainCli, NoArgumentsIsUsageError) {
  auto r = explain({});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("usage"), std::string::npos);
}

}  // namespace
}  // namespace kparity::test
