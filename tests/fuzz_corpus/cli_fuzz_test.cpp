// `kparity fuzz` through the executable: exit statuses, corpus replay and `kparity run` on corpus
// dumps (they are `kparity run` dumps), a short campaign with its report.
#include <gtest/gtest.h>

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
  for (const auto& p : j["properties"]) {
    EXPECT_EQ(p["op"], "sparse/paged_decode") << p["name"];
    EXPECT_EQ(p["cases"], 5) << p["name"];
  }
  EXPECT_EQ(j["totals"]["failed"], 0);
}

TEST_F(FuzzCli, BadUsageExitsWithTwo) {
  EXPECT_EQ(run_cli({"fuzz", "--op", "kda/nope"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--property", "nope"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--seed", "12x"}, dir_).rc, 2);
  EXPECT_EQ(run_cli({"fuzz", "--cases", "3", "--time", "1"}, dir_).rc, 2);
}

}  // namespace
