// `kparity fuzz` through the executable: exit statuses, corpus replay and `kparity run` on corpus
// dumps (they are `kparity run` dumps), a short campaign with its report, workers, shards and merge.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#ifndef KPARITY_CLI_PATH
#define KPARITY_CLI_PATH KPARITY_BINARY_DIR "/cli/kparity"
#endif
#include "cli/cli_runner.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace {

namespace fs = std::filesystem;
namespace fz = kparity::fuzz;
using kparity::test::run_cli;

const std::string kCorpus = std::string(KPARITY_SOURCE_DIR) + "/fuzz/corpus";

class FuzzCli : public testing::Test {
 protected:
  void SetUp() override {
    // The executable is built by the same build (ctest after a full build); a tree built for this
    // test binary alone has none to run.
    if (!fs::exists(KPARITY_CLI_PATH)) GTEST_SKIP() << "no kparity executable at " << KPARITY_CLI_PATH;
    dir_ = kparity::test::scratch_dir("fuzz_" + std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  fs::path dir_;
};

TEST_F(FuzzCli, ReplaysTheCommittedCorpus) {
  const auto files = fz::corpus_files(kCorpus);
  ASSERT_FALSE(files.empty());
  const auto r = run_cli({"fuzz", "--replay", kCorpus}, dir_);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(std::to_string(files.size()) + " of " + std::to_string(files.size()) +
                       " corpus dumps replayed cleanly"),
            std::string::npos)
      << r.out;
}

TEST_F(FuzzCli, CorpusDumpsRunWithKparityRun) {
  for (const auto& f : fz::corpus_files(kCorpus)) {
    const auto r = run_cli({"run", f, "-o", (dir_ / "result.safetensors").string()}, dir_);
    EXPECT_EQ(r.rc, 0) << f << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("PASS"), std::string::npos) << f << "\n" << r.out;  // expected.* compared
  }
}

TEST_F(FuzzCli, AReplayThatFailsExitsWithOne) {
  const auto files = fz::corpus_files(kCorpus);
  ASSERT_FALSE(files.empty());
  const fz::Call c = fz::load_call(files.front());
  fz::Call wrong = fz::run_oracle(c);
  const std::string& out = c.written.front();
  wrong.at(out).view().store_flat(0, wrong.at(out).view().load_flat(0) + 1.0);
  const std::string path = (dir_ / "moved.safetensors").string();
  fz::write_call(c, path, &wrong);
  const auto r = run_cli({"fuzz", "--replay", path}, dir_);
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("FAIL " + path), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 of 1 corpus dumps replayed cleanly"), std::string::npos) << r.out;
}

TEST_F(FuzzCli, AShortCampaignWritesItsReport) {
  const std::string report = (dir_ / "r.json").string();
  const auto r = run_cli({"fuzz", "--op", "sparse/paged_decode", "--cases", "5", "--seed", "0x2a", "--report", report,
                          "--corpus", (dir_ / "corpus").string()},
                         dir_);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("properties held"), std::string::npos) << r.out;
  std::ifstream f(report);
  const nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["seed"], "0x2a");
  EXPECT_EQ(j["budget"]["cases"], 5);
  ASSERT_FALSE(j["properties"].empty());
  int skipped = 0;
  for (const auto& p : j["properties"]) {
    EXPECT_EQ(p["op"], "sparse/paged_decode") << p["name"];
    if (p.contains("skipped")) {  // the CUDA properties on a machine without a device
      ++skipped;
      EXPECT_EQ(p["cases"], 0) << p["name"];
      continue;
    }
    EXPECT_EQ(p["cases"], 5) << p["name"];
  }
  EXPECT_EQ(j["totals"]["failed"], 0);
  EXPECT_EQ(j["totals"]["skipped"], skipped);
}

// Issue 19 item 3: without a device (or without kernels) the CUDA properties are listed, run and
// reported as skipped with the probe's reason, not left out.
TEST_F(FuzzCli, CudaPropertiesAreListedAndReportedAsSkippedWithTheReason) {
  std::string why;
  const bool device = !fz::cuda_backends(why).empty();
  const auto list = run_cli({"fuzz", "--list"}, dir_);
  ASSERT_EQ(list.rc, 0) << list.out << list.err;
  for (const auto& op : fz::cuda_backend_ops())
    for (const char* kind : {"/differential/cuda", "/differential-special-values/cuda"}) {
      const std::string name = op + kind;
      const std::string skip = name + "  skipped: " + why + "\n";
      EXPECT_NE(list.out.find(device ? name + "\n" : skip), std::string::npos) << (device ? name : skip) << "\n" << list.out;
    }
  if (device) GTEST_SKIP() << "a CUDA device is present: the CUDA properties run (no skip to show)";
  EXPECT_FALSE(why.empty());
  EXPECT_NE(list.out.find("cuda: skipped, " + why), std::string::npos) << list.out;

  const std::string report = (dir_ / "r.json").string();
  const auto r = run_cli({"fuzz", "--backend", "cuda", "--op", "sparse/paged_decode", "--cases", "5", "--report", report,
                          "--corpus", (dir_ / "corpus").string()},
                         dir_);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("SKIP sparse/paged_decode/differential/cuda  (" + why + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 properties skipped (cuda: " + why + ")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("0 of 0 properties held (2 more skipped)"), std::string::npos) << r.out;
  std::ifstream f(report);
  const nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_EQ(j["properties"].size(), 2u) << j.dump(2);
  for (const auto& p : j["properties"]) {
    EXPECT_EQ(p["backend"], "cuda");
    EXPECT_EQ(p["skipped"], why);
    EXPECT_EQ(p["cases"], 0);
    EXPECT_TRUE(p["passed"].get<bool>());
  }
  EXPECT_EQ(j["totals"]["skipped"], 2);
  EXPECT_EQ(j["totals"]["failed"], 0);
}

// The per-property part of a report that must not depend on workers or shards.
nlohmann::json verdicts(const nlohmann::json& report) {
  nlohmann::json out = nlohmann::json::array();
  for (auto p : report.at("properties")) {
    for (const char* timing : {"seconds", "cases_per_minute", "saved"}) p.erase(timing);
    out.push_back(p);
  }
  return out;
}

nlohmann::json read_json(const fs::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

const std::vector<std::string> kShortCampaign = {"fuzz", "--op", "sparse/paged_decode", "--cases", "250", "--seed", "0x2b"};

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more);
  return args;
}

TEST_F(FuzzCli, WorkersDoNotChangeTheResult) {
  const auto one = run_cli(with(kShortCampaign, {"--jobs", "1", "--report", (dir_ / "one.json").string()}), dir_);
  ASSERT_EQ(one.rc, 0) << one.out << one.err;
  const auto three = run_cli(with(kShortCampaign, {"--jobs", "3", "--report", (dir_ / "three.json").string()}), dir_);
  ASSERT_EQ(three.rc, 0) << three.out << three.err;
  EXPECT_NE(three.out.find("3 workers"), std::string::npos) << three.out;
  const auto a = read_json(dir_ / "one.json"), b = read_json(dir_ / "three.json");
  EXPECT_EQ(verdicts(a), verdicts(b));
  EXPECT_EQ(a["totals"]["cases"], b["totals"]["cases"]);
  EXPECT_EQ(b["jobs"], 3);
}

// Issue 18: n shards and a merge give one unsharded run's per-property results, for n = 1, 3, 4
// (with 250 cases a property has 3 chunks, so 4 shards leave one empty).
TEST_F(FuzzCli, ShardsMergeIntoTheUnshardedRun) {
  ASSERT_EQ(run_cli(with(kShortCampaign, {"--report", (dir_ / "whole.json").string()}), dir_).rc, 0);
  const auto whole = read_json(dir_ / "whole.json");
  for (int n : {1, 3, 4}) {
    SCOPED_TRACE(n);
    std::vector<std::string> merge = {"fuzz", "merge"};
    for (int i = 0; i < n; ++i) {
      const std::string report = (dir_ / ("shard" + std::to_string(i) + ".json")).string();
      const auto r = run_cli(with(kShortCampaign, {"--shard", std::to_string(i) + "/" + std::to_string(n), "--report", report}), dir_);
      ASSERT_EQ(r.rc, 0) << r.out << r.err;
      if (n > 1) EXPECT_NE(r.out.find("shard " + std::to_string(i) + "/" + std::to_string(n)), std::string::npos) << r.out;
      merge.push_back(report);
    }
    const std::string all = (dir_ / "all.json").string();
    merge.insert(merge.end(), {"-o", all});
    const auto m = run_cli(merge, dir_);
    ASSERT_EQ(m.rc, 0) << m.out << m.err;
    EXPECT_NE(m.out.find("properties held"), std::string::npos) << m.out;
    const auto merged = read_json(all);
    EXPECT_EQ(verdicts(whole), verdicts(merged));
    EXPECT_EQ(merged["totals"]["cases"], whole["totals"]["cases"]);
    EXPECT_EQ(merged["shards"], n);
  }
  // An incomplete set is refused, naming the missing shard.
  const auto partial = run_cli({"fuzz", "merge", (dir_ / "shard0.json").string(), (dir_ / "shard2.json").string()}, dir_);
  EXPECT_EQ(partial.rc, 2);
  EXPECT_NE(partial.err.find("shard(s) 1, 3 of 4 missing"), std::string::npos) << partial.err;
}

TEST_F(FuzzCli, ShardAutoReadsTheScheduler) {
  ::setenv("JOB_COMPLETION_INDEX", "1", 1);
  const auto no_count = run_cli({"fuzz", "--op", "sparse/paged_decode", "--cases", "1", "--shard", "auto"}, dir_);
  ::setenv("KPARITY_SHARD_COUNT", "2", 1);
  const auto ok = run_cli({"fuzz", "--op", "sparse/paged_decode", "--cases", "1", "--shard", "auto"}, dir_);
  ::unsetenv("JOB_COMPLETION_INDEX");
  ::unsetenv("KPARITY_SHARD_COUNT");
  EXPECT_EQ(no_count.rc, 2);
  EXPECT_NE(no_count.err.find("KPARITY_SHARD_COUNT"), std::string::npos) << no_count.err;
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("shard 1/2"), std::string::npos) << ok.out;
}

TEST_F(FuzzCli, BadUsageExitsWithTwo) {
  EXPECT_EQ(run_cli({"fuzz", "--op", "kda/nope"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--property", "nope"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--seed", "12x"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--cases", "3", "--time", "1"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--shard", "4/4"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--jobs", "0"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "merge", (dir_ / "nope.json").string()}, dir_).rc, 2);
}

}  // namespace
