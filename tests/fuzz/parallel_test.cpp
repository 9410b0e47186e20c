// Campaigns in worker processes and in shards: for a case budget the result does not depend on the
// number of workers or shards (same cases, discards, verdicts, buckets, worst errors, repro lines and
// corpus dumps as one process), a worker that dies fails only its chunk, and --shard parses what
// Slurm and Kubernetes set.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "cli/scratch_dir.hpp"
#include "decode_spec.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/merge.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/campaign/shard.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace {

using namespace kpt;
namespace fs = std::filesystem;

const std::string kOp = "sparse/paged_decode";

fs::path scratch(const std::string& name) { return kparity::test::scratch_dir("parallel_" + name); }

// Wrong only on a rare shape (T = 3, H = 2, D = 8, P = 5: about one case in 120 of decode_spec's
// draws), so that with the seed below the first failure comes in chunk 2 and later chunks may fail
// too.
Backend rarely_wrong() {
  return Backend{"rare", {kOp}, [](Call& c) {
                   faithful_backend({kOp}).run(c);
                   const TensorView out = c.at("out").view();
                   if (out.size(0) == 3 && out.size(1) == 2 && out.size(2) == 8 && c.at("unified_kv").shape()[0] == 5)
                     out.store_flat(0, out.load_flat(0) + 100.0);
                 }};
}

std::vector<Property> properties() {
  return {differential_property(decode_spec(), faithful_backend({kOp}), false),
          differential_property(decode_spec(), rarely_wrong(), false),
          differential_property(decode_spec(), faithful_backend({kOp}), true)};
}

CampaignResult campaign(int jobs, Shard shard, const fs::path& corpus, int cases = 1000) {
  CampaignOptions o;
  o.seed = 0x5eed;
  o.cases = cases;
  o.jobs = jobs;
  o.shard = shard;
  o.corpus_dir = corpus.string();
  std::ostringstream log;
  return run_campaign(properties(), o, {{"reference", true, ""}}, log);
}

// Everything a run reports about a property except how long it took and where it saved.
void expect_same(const PropertyOutcome& a, const PropertyOutcome& b) {
  SCOPED_TRACE(a.name);
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.passed, b.passed);
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.discarded, b.discarded);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.repro_cases, b.repro_cases);
  EXPECT_EQ(a.repro, b.repro);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.buckets, b.buckets);
  EXPECT_EQ(a.first_chunk, b.first_chunk);
  EXPECT_EQ(a.chunks_run, b.chunks_run);
  ASSERT_EQ(a.max_errors.size(), b.max_errors.size());
  for (const auto& [name, e] : a.max_errors) {
    const ErrorStat& f = b.max_errors.at(name);
    EXPECT_EQ(e.backend, f.backend) << name;
    EXPECT_EQ(e.faithful, f.faithful) << name;
    EXPECT_EQ(e.bound, f.bound) << name;
    EXPECT_EQ(e.ratio, f.ratio) << name;
  }
}

void expect_same(const CampaignResult& a, const CampaignResult& b) {
  ASSERT_EQ(a.properties.size(), b.properties.size());
  for (std::size_t i = 0; i < a.properties.size(); ++i) expect_same(a.properties[i], b.properties[i]);
}

TEST(Workers, ResultsDoNotDependOnTheNumberOfWorkers) {
  const fs::path dir = scratch("jobs");
  const CampaignResult one = campaign(1, {}, dir / "one");
  ASSERT_FALSE(one.properties[1].passed);
  // The planted shape shows up some chunks in, so chunks after the first failure exist to be dropped.
  EXPECT_GT(one.properties[1].chunks_run, 1);
  EXPECT_LT(one.properties[1].chunks_run, 10);
  for (int jobs : {2, 3}) {
    SCOPED_TRACE(jobs);
    const CampaignResult many = campaign(jobs, {}, dir / fmt::format("jobs{}", jobs));
    expect_same(one, many);
    // The shrunk call reaches the corpus under the same name, with the same bytes.
    const PropertyOutcome& a = one.properties[1];
    const PropertyOutcome& b = many.properties[1];
    ASSERT_TRUE(fs::exists(a.saved)) << a.saved;
    ASSERT_TRUE(fs::exists(b.saved)) << b.saved;
    EXPECT_EQ(fs::path(a.saved).filename(), fs::path(b.saved).filename());
    EXPECT_EQ(fs::file_size(a.saved), fs::file_size(b.saved));
    const auto fa = read_safetensors(a.saved), fb = read_safetensors(b.saved);
    ASSERT_EQ(fa.tensors.size(), fb.tensors.size());
    for (const auto& [name, t] : fa.tensors) EXPECT_EQ(t.storage(), fb.tensors.at(name).storage()) << name;
    EXPECT_EQ(fa.metadata, fb.metadata);
  }
  fs::remove_all(dir);
}

TEST(Workers, ShardsMergeToTheUnshardedRun) {
  const fs::path dir = scratch("shards");
  const CampaignResult whole = campaign(1, {}, dir / "whole", 2000);
  ASSERT_FALSE(whole.properties[1].passed);
  int later_failures = 0;
  for (int n : {1, 3, 4}) {
    SCOPED_TRACE(n);
    std::vector<CampaignResult> parts;
    for (int i = 0; i < n; ++i) {
      // Through the report file, as `kparity fuzz merge` reads them; shards use 1 or 2 workers.
      const CampaignResult r = campaign(1 + i % 2, {i, n}, dir / "corpus", 2000);
      const std::string path = (dir / fmt::format("shard{}-{}.json", i, n)).string();
      write_report(r, path);
      parts.push_back(read_report(path));
    }
    const CampaignResult merged = merge_shards(parts);
    EXPECT_EQ(merged.shards, n);
    expect_same(whole, merged);
    // Only the shard holding the first failing chunk keeps its failure; a later shard's failing
    // chunk is dropped like the chunks a single run never reaches.
    for (const auto& part : parts) {
      const PropertyOutcome& p = part.properties[1];
      if (!p.passed && p.failed_chunk() > whole.properties[1].failed_chunk()) ++later_failures;
    }
  }
  fs::remove_all(dir);
}

TEST(Workers, ATimeBudgetIsSharedByTheWorkers) {
  std::vector<Property> props;
  for (const char* name : {"a", "b", "c", "d"}) {
    Property p;
    p.name = name;
    p.kind = "test";
    p.body = [] { ::usleep(2000); };
    props.push_back(p);
  }
  CampaignOptions o;
  o.seconds = 0.8;
  o.jobs = 2;
  o.corpus_dir.clear();
  std::ostringstream log;
  const CampaignResult r = run_campaign(props, o, {}, log);
  EXPECT_TRUE(r.passed());
  EXPECT_LT(r.seconds, 1.3);
  // Two at a time, each about half of the 0.8 s: twice the cases of one process in the same time.
  for (const auto& p : r.properties) EXPECT_NEAR(p.seconds, 0.4, 0.15) << p.name;
}

TEST(Workers, ADeadWorkerFailsOnlyItsChunk) {
  Property dies;
  dies.name = "dies";
  dies.kind = "test";
  dies.body = [] {
    if (*rc::gen::inRange(0, 50) == 7) std::abort();  // a crash in a backend, say
  };
  Property fine;
  fine.name = "fine";
  fine.kind = "test";
  fine.body = [] {};
  CampaignOptions o;
  o.cases = 400;
  o.jobs = 2;
  o.shrink = false;
  o.corpus_dir.clear();
  std::ostringstream log;
  const CampaignResult r = run_campaign({dies, fine}, o, {}, log);
  ASSERT_EQ(r.properties.size(), 2u);
  EXPECT_FALSE(r.properties[0].passed);
  EXPECT_NE(r.properties[0].message.find("killed by signal"), std::string::npos) << r.properties[0].message;
  EXPECT_NE(r.properties[0].repro.find("--seed 0x"), std::string::npos) << r.properties[0].repro;
  EXPECT_TRUE(r.properties[1].passed);
  EXPECT_EQ(r.properties[1].cases, 400);
}

// The environment a test hands to parse_shard.
EnvLookup fake_env(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string shard_error(std::string_view spec, std::map<std::string, std::string> vars) {
  try {
    parse_shard(spec, fake_env(std::move(vars)));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Shard, ExplicitSpecs) {
  EXPECT_EQ(parse_shard("0/1", fake_env({})), (Shard{0, 1}));
  EXPECT_EQ(parse_shard("3/4", fake_env({})), (Shard{3, 4}));
  for (const char* bad : {"4/4", "1/0", "-1/4", "1", "a/b", "1/2/3", ""})
    EXPECT_NE(shard_error(bad, {}), "no error") << bad;
}

TEST(Shard, SlurmArrays) {
  EXPECT_EQ(parse_shard("auto", fake_env({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}})),
            (Shard{2, 4}));
  // sbatch --array=1-4: ids 1..4, MIN 1.
  EXPECT_EQ(parse_shard("auto", fake_env({{"SLURM_ARRAY_TASK_ID", "4"},
                                          {"SLURM_ARRAY_TASK_MIN", "1"},
                                          {"SLURM_ARRAY_TASK_COUNT", "4"}})),
            (Shard{3, 4}));
  EXPECT_NE(shard_error("auto", {{"SLURM_ARRAY_TASK_ID", "2"}}).find("SLURM_ARRAY_TASK_COUNT"), std::string::npos);
  EXPECT_NE(shard_error("auto", {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}, {"SLURM_ARRAY_TASK_STEP", "2"}})
                .find("SLURM_ARRAY_TASK_STEP"),
            std::string::npos);
  EXPECT_NE(shard_error("auto", {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}), "no error");
  EXPECT_NE(shard_error("auto", {{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}), "no error");
}

TEST(Shard, KubernetesIndexedJobs) {
  EXPECT_EQ(parse_shard("auto", fake_env({{"JOB_COMPLETION_INDEX", "0"}, {"KPARITY_SHARD_COUNT", "3"}})), (Shard{0, 3}));
  EXPECT_EQ(parse_shard("auto", fake_env({{"JOB_COMPLETION_INDEX", "2"}, {"KPARITY_SHARD_COUNT", "3"}})), (Shard{2, 3}));
  EXPECT_NE(shard_error("auto", {{"JOB_COMPLETION_INDEX", "2"}}).find("KPARITY_SHARD_COUNT"), std::string::npos);
  EXPECT_NE(shard_error("auto", {{"KPARITY_SHARD_COUNT", "3"}}).find("JOB_COMPLETION_INDEX"), std::string::npos);
  EXPECT_NE(shard_error("auto", {{"JOB_COMPLETION_INDEX", "3"}, {"KPARITY_SHARD_COUNT", "3"}}), "no error");
  EXPECT_NE(shard_error("auto", {}).find("no scheduler"), std::string::npos);
}

TEST(Shard, ChunksArePartitioned) {
  for (int chunks : {0, 1, 2, 3, 7, 100, 1001})
    for (int n : {1, 2, 3, 4, 16}) {
      int next = 0;
      for (int i = 0; i < n; ++i) {
        const auto [a, b] = shard_chunks(chunks, {i, n});
        EXPECT_EQ(a, next) << chunks << " " << i << "/" << n;
        EXPECT_LE(a, b);
        EXPECT_LE(b - a, chunks / n + 1);  // balanced
        next = b;
      }
      EXPECT_EQ(next, chunks);
    }
}

TEST(Merge, RefusesShardsThatDoNotFit) {
  const fs::path dir = scratch("refuse");
  std::vector<CampaignResult> parts;
  for (int i = 0; i < 3; ++i) parts.push_back(campaign(1, {i, 3}, dir, 200));
  const auto error = [](const std::vector<CampaignResult>& p) -> std::string {
    try {
      merge_shards(p);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error({parts[0], parts[2]}).find("shard(s) 1 of 3 missing"), std::string::npos);
  EXPECT_NE(error({parts[0], parts[1], parts[1], parts[2]}).find("more than once"), std::string::npos);
  std::vector<CampaignResult> other = parts;
  other[1].options.seed = 1;
  EXPECT_NE(error(other).find("different campaigns"), std::string::npos);
  other = parts;
  other[2].properties.pop_back();
  EXPECT_NE(error(other).find("backends differ"), std::string::npos);
  EXPECT_EQ(error(parts), "no error");
  fs::remove_all(dir);
}

}  // namespace
