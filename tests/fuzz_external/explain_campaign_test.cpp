// The explain step on the entry points that gained it last (issue 33): a plain `kparity fuzz --impl`
// (no --max-findings, --known or --explain-seconds) goes through the campaign with findings, in
// worker processes and shards as the plain campaign did; kparity's own campaign explains the
// findings of its differential properties, tested on the CPU through the self-test's planted bugs
// as backends (--backend selftest/<bug>), which take the path the CUDA backend's properties take.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "fuzz_cli.hpp"

namespace kparity::fuzz {
namespace {

#if defined(KPARITY_CLI_PATH) && defined(KPARITY_TEST_EXPLAIN_PLUGIN)

namespace fs = std::filesystem;
using nlohmann::json;

struct CliRun {
  int status = 0;
  std::string out;
  json report;  // null when none was written
};

// `kparity fuzz ARGS --corpus DIR --report DIR/report.json`, in a fresh scratch folder.
CliRun fuzz(const std::string& name, const std::string& args) {
  const fs::path dir = fs::temp_directory_path() / ("kparity-explain-campaign-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path report = dir / "report.json";
  CliRun r;
  std::tie(r.status, r.out) = test::fuzz_cli(args + " --corpus " + dir.string() + " --report " + report.string());
  if (std::ifstream f(report); f) r.report = json::parse(f);
  fs::remove_all(dir);
  return r;
}

// What does not depend on the machine: the report without times, rates, worker and shard counts,
// and without the corpus folder each run names differently.
json stable(const json& j) {
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) {
      if (k.find("seconds") != std::string::npos || k == "cases_per_minute" || k == "jobs" || k == "shards" ||
          k == "shard" || k == "saved" || k == "totals")
        continue;
      out[k] = stable(v);
    }
    return out;
  }
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(stable(v));
    return out;
  }
  return j;
}

std::set<std::string> names(const json& knobs) {
  std::set<std::string> s;
  for (const auto& k : knobs) s.insert(k.at("name").get<std::string>());
  return s;
}

const json* property(const json& report, const std::string& name) {
  for (const auto& p : report.at("properties"))
    if (p.at("name") == name) return &p;
  return nullptr;
}

const std::string kPlugin = KPARITY_TEST_EXPLAIN_PLUGIN;  // drops the last key of tokens with >= 5
const std::string kImpl = "--impl " + kPlugin + " --op sparse/paged_decode --seed 41";

TEST(PlainImplRun, ExplainsEveryFindingWithTheDefaultBudget) {
  const CliRun r = fuzz("plain", kImpl + " --cases 300");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("explain: needs keys >= 5 (passes with 4"), std::string::npos) << r.out;
  // Workers (the default --jobs is the machine's threads) print the properties in their order.
  const std::size_t a = r.out.find("FAIL sparse/paged_decode/differential/planted-drops-fifth-key"),
                    b = r.out.find("FAIL sparse/paged_decode/differential-special-values/planted-drops-fifth-key"),
                    c = r.out.find("PASS sparse/paged_decode/deterministic/planted-drops-fifth-key");
  ASSERT_NE(a, std::string::npos) << r.out;
  ASSERT_NE(b, std::string::npos) << r.out;
  ASSERT_NE(c, std::string::npos) << r.out;
  EXPECT_LT(a, b) << r.out;
  EXPECT_LT(b, c) << r.out;
  ASSERT_TRUE(r.report.is_object()) << r.out;
  const json* p = property(r.report, "sparse/paged_decode/differential/planted-drops-fifth-key");
  ASSERT_NE(p, nullptr);
  ASSERT_EQ(p->at("findings").size(), 1u) << p->dump(1);  // one slip, one finding
  const json& e = p->at("findings").at(0).at("explain");
  ASSERT_EQ(e.at("needed").size(), 1u) << e.dump(1);
  EXPECT_EQ(e.at("needed").at(0).at("name"), "keys");
  EXPECT_EQ(e.at("needed").at(0).at("nearest_pass"), "4");
  for (const char* free : {"H", "D", "T", "dtype"}) EXPECT_TRUE(names(e.at("free")).count(free)) << free;
  EXPECT_GT(e.at("shrink_seconds").get<double>(), 0.0);
  // The special-values property fails with the same slip: one finding there too, explained alike.
  const json* s = property(r.report, "sparse/paged_decode/differential-special-values/planted-drops-fifth-key");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->at("findings").size(), 1u) << s->dump(1);
  EXPECT_EQ(names(s->at("findings").at(0).at("explain").at("needed")), std::set<std::string>{"keys"});
}

TEST(PlainImplRun, WorkersAndShardsGiveTheOneProcessReport) {
  const CliRun one = fuzz("jobs1", kImpl + " --cases 150 --jobs 1");
  const CliRun two = fuzz("jobs2", kImpl + " --cases 150 --jobs 2");
  ASSERT_TRUE(one.report.is_object()) << one.out;
  ASSERT_TRUE(two.report.is_object()) << two.out;
  EXPECT_NE(two.out.find("; 2 workers"), std::string::npos) << two.out;
  EXPECT_EQ(stable(one.report), stable(two.report));
  // Each shard runs every other property and reports the rest as run by the other shard; the merge
  // takes each property from the shard that ran it, findings and explanations included.
  const fs::path dir = fs::temp_directory_path() / "kparity-explain-campaign-shards";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (int i = 0; i < 2; ++i) {
    const auto [status, out] = test::fuzz_cli(kImpl + " --cases 150 --shard " + std::to_string(i) + "/2 --corpus " +
                                              dir.string() + " --report " + (dir / std::to_string(i)).string());
    EXPECT_EQ(status, 1) << out;  // each shard holds one of the two failing properties
    EXPECT_NE(out.find(i == 0 ? "(run by shard 1/2)" : "(run by shard 0/2)"), std::string::npos) << out;
  }
  const std::string merge = std::string(KPARITY_CLI_PATH) + " fuzz merge " + (dir / "0").string() + " " +
                            (dir / "1").string() + " -o " + (dir / "merged.json").string() + " > /dev/null 2>&1";
  const int st = std::system(merge.c_str());
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1) << merge;  // the merged campaign failed
  std::ifstream f(dir / "merged.json");
  ASSERT_TRUE(f) << merge;
  const json merged = json::parse(f);
  fs::remove_all(dir);
  EXPECT_EQ(stable(merged).at("properties"), stable(one.report).at("properties"));
}

// kparity's own campaign: a planted kernel bug (duplicate rows of a token's list counted once)
// through the campaign's path for a backend's differential properties.
const std::string kPlanted = "--backend selftest/duplicate-indices-dropped --property "
                             "sparse/paged_decode/differential/selftest/duplicate-indices-dropped --seed 41 --cases 300";

TEST(CampaignExplain, APlantedKernelsFindingSaysWhatItNeeds) {
  const CliRun r = fuzz("selftest", kPlanted + " --jobs 1");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("    explain: needs "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("duplicates = yes (passes with no)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("    first bad out["), std::string::npos) << r.out;
  ASSERT_TRUE(r.report.is_object()) << r.out;
  const json& e = r.report.at("properties").at(0).at("explain");
  EXPECT_TRUE(names(e.at("needed")).count("duplicates")) << e.dump(1);
  for (const char* free : {"H", "D", "dtype", "sink"}) EXPECT_TRUE(names(e.at("free")).count(free)) << free;
  EXPECT_NE(e.at("first_bad").get<std::string>().find("a duplicate"), std::string::npos) << e.at("first_bad");
  EXPECT_GT(e.at("shrink_seconds").get<double>(), 0.0);
  EXPECT_GT(e.at("trials").get<int>(), 1);
  // The same explanation from a worker process.
  const CliRun w = fuzz("selftest-jobs", kPlanted + " --jobs 2");
  ASSERT_TRUE(w.report.is_object()) << w.out;
  EXPECT_EQ(stable(w.report.at("properties").at(0).at("explain")), stable(e));
}

// The KDA knobs on the own campaign's KDA bugs: a head mapping wrong only with grouped heads needs
// H >= 2 and HV > H, a skipped padding row needs a padding row; the message is the call as a user
// reads it, RapidCheck's drawn values only in "debug".
TEST(CampaignExplain, PlantedKdaKernelsFindingsSayWhatTheyNeed) {
  const CliRun r = fuzz("selftest-gqa", "--backend selftest/wrong-gqa-head-mapping --property "
                                        "kda/packed_decode/differential/selftest/wrong-gqa-head-mapping "
                                        "--seed 41 --cases 300 --jobs 1");
  EXPECT_EQ(r.status, 1) << r.out;
  ASSERT_TRUE(r.report.is_object()) << r.out;
  const json& p = r.report.at("properties").at(0);
  const json& e = p.at("explain");
  EXPECT_EQ(names(e.at("needed")), (std::set<std::string>{"H", "HV"})) << e.dump(1);
  for (const char* free : {"K", "V", "act", "B"}) EXPECT_TRUE(names(e.at("free")).count(free)) << free << "\n" << e.dump(1);
  const std::string msg = p.at("message").get<std::string>();
  EXPECT_NE(msg.find("breaks the differential rule: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("call: kda/packed_decode H="), std::string::npos) << msg;
  EXPECT_NE(msg.find("first bad "), std::string::npos) << msg;
  for (const char* raw : {"RC_FAIL", "long: ", "drawn values", "Log:"}) EXPECT_EQ(msg.find(raw), std::string::npos) << raw << "\n" << msg;
  EXPECT_NE(p.at("debug").get<std::string>().find("RC_FAIL"), std::string::npos) << p.at("debug");
  EXPECT_EQ(r.out.find("long: "), std::string::npos) << r.out;  // the text report has no drawn values either
  EXPECT_NE(r.out.find("    call: kda/packed_decode H="), std::string::npos) << r.out;

  const CliRun pad = fuzz("selftest-padding", "--backend selftest/missed-padding-row --property "
                                              "kda/packed_decode/differential/selftest/missed-padding-row "
                                              "--seed 41 --cases 300 --jobs 1");
  ASSERT_TRUE(pad.report.is_object()) << pad.out;
  EXPECT_TRUE(names(pad.report.at("properties").at(0).at("explain").at("needed")).count("padding rows")) << pad.out;
}

// A plain --impl run's property entries carry the readable message too (the findings had it).
TEST(PlainImplRun, APropertysMessageHasNoDrawnValues) {
  const CliRun r = fuzz("plain-message", kImpl + " --cases 100 --jobs 1");
  ASSERT_TRUE(r.report.is_object()) << r.out;
  const json* p = property(r.report, "sparse/paged_decode/differential/planted-drops-fifth-key");
  ASSERT_NE(p, nullptr);
  ASSERT_FALSE(p->at("passed").get<bool>());
  const std::string msg = p->at("message").get<std::string>();
  EXPECT_EQ(msg.rfind("[wrong-values] ", 0), 0u) << msg;
  EXPECT_NE(msg.find("call: T="), std::string::npos) << msg;
  EXPECT_EQ(msg.find("RC_FAIL"), std::string::npos) << msg;
  EXPECT_NE(p->at("debug").get<std::string>().find("RC_FAIL"), std::string::npos);
}

TEST(CampaignExplain, ABudgetOfZeroTurnsItOff) {
  const CliRun r = fuzz("selftest-off", kPlanted + " --jobs 1 --explain-seconds 0");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_EQ(r.out.find("explain:"), std::string::npos) << r.out;
  ASSERT_TRUE(r.report.is_object()) << r.out;
  EXPECT_FALSE(r.report.at("properties").at(0).contains("explain"));
}

// Controls (correct kernels) and passing properties carry no explanation.
TEST(CampaignExplain, NothingToExplainOnAPass) {
  const CliRun r = fuzz("control", "--backend control/fp64 --op sparse/paged_decode --cases 20 --jobs 1");
  EXPECT_EQ(r.status, 0) << r.out;
  ASSERT_TRUE(r.report.is_object()) << r.out;
  for (const auto& p : r.report.at("properties")) EXPECT_FALSE(p.contains("explain")) << p.at("name");
}

#endif

}  // namespace
}  // namespace kparity::fuzz
