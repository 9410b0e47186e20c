// `kparity run` built without RapidCheck (tests/cli_nofuzz/CMakeLists.txt) still judges with the
// differential rule: a dump whose expected.* are kparity's saved oracle results is judged by the rule
// with them in the oracle's place (the faithful reference's own distance to them is the rule's
// empirical term, so the reference backend passes even when they are moved), where --atol/--rtol
// compare elementwise and fail the moved ones.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "cli/cli_runner.hpp"
#include "kparity/core/safetensors.hpp"

namespace {

namespace fs = std::filesystem;
using kparity::test::run_cli;

// A small kda/recurrent call saved by the fuzzer with its oracle results (outputs O(1)).
const std::string kDump =
    std::string(KPARITY_SOURCE_DIR) + "/fuzz/corpus/kda.recurrent.differential.cuda-1fbfcc493144906b.safetensors";

TEST(RunWithoutRapidCheck, JudgesSavedOracleResultsWithTheRule) {
  const fs::path dir = kparity::test::scratch_dir("nofuzz_run_judged");
  const auto ok = run_cli({"run", kDump, "-o", (dir / "r.safetensors").string()}, dir);
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("against expected.* (kparity's saved oracle results: the differential rule"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("PASS"), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find("FAIL"), std::string::npos) << ok.out;

  // expected.out moved by 1 at every element: far outside any elementwise tolerance of O(1) outputs.
  kparity::SafetensorsFile f = kparity::read_safetensors(kDump);
  ASSERT_TRUE(f.tensors.count("expected.out"));
  const kparity::TensorView e = f.tensors.at("expected.out").view();
  for (std::int64_t i = 0; i < e.numel(); ++i)
    if (std::isfinite(e.load_flat(i))) e.store_flat(i, e.load_flat(i) + 1.0);
  std::map<std::string, kparity::TensorView> views;
  for (const auto& [name, t] : f.tensors) views.emplace(name, t.view());
  const fs::path moved = dir / "moved.safetensors";
  kparity::write_safetensors(moved, views, f.metadata);
  const auto moved_rule = run_cli({"run", moved.string(), "-o", (dir / "r.safetensors").string()}, dir);
  EXPECT_EQ(moved_rule.rc, 0) << moved_rule.out << moved_rule.err;
  EXPECT_NE(moved_rule.out.find("out            |b-e| 1.000e+00  bound 2.000e+00 (2*|f-e| 2.000e+00"), std::string::npos)
      << moved_rule.out;
  const auto elementwise =
      run_cli({"run", moved.string(), "--atol", "1e-3", "--rtol", "1e-3", "-o", (dir / "r.safetensors").string()}, dir);
  EXPECT_EQ(elementwise.rc, 1) << elementwise.out << elementwise.err;
  EXPECT_NE(elementwise.out.find("against expected.* (|got - expected| <= atol + rtol*|expected|)"), std::string::npos)
      << elementwise.out;
  EXPECT_NE(elementwise.out.find("FAIL"), std::string::npos) << elementwise.out;
  fs::remove_all(dir);
}

}  // namespace
