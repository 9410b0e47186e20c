// Where a dump's expected.* came from, and what that changes (issue 23 items 3 and 6):
//   * `kparity run` judges kparity's saved oracle results with the differential rule, the saved
//     values in the oracle's place, and anything else (or anything, under --atol/--rtol) with the
//     elementwise tolerance: on an ill-conditioned call a result the rule accepts is far outside
//     any fixed atol/rtol of the saved value;
//   * a replay whose saved expected.* break the rule says what it compared, by which rule, and
//     what that means for their origin, without presuming the oracle moved.
// Runs without a GPU: the reference backend's results stand in for a kernel's, and the saved
// expected.* are moved instead of the results.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#ifndef KPARITY_CLI_PATH
#define KPARITY_CLI_PATH KPARITY_BINARY_DIR "/cli/kparity"
#endif
#include "cli/cli_runner.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/ops/compare.hpp"
#include "kparity/reference/error_bound.hpp"

namespace {

namespace fs = std::filesystem;
namespace fz = kparity::fuzz;
using kparity::test::run_cli;

// A corpus dump whose `out` dots cancel: unified_kv holds +-2^100 (fuzz/corpus/README.md); the
// one issue 23 item 3 saw fail `kparity run --backend cuda` on its expected.*.
const std::string kConditioning = std::string(KPARITY_SOURCE_DIR) +
                                  "/fuzz/corpus/sparse.paged_prefill.cancelling-2p100-keys.cuda-7f2444911fedfbbd.safetensors";

// A small recurrent call whose outputs are O(1): a move by 1 is far outside its rule.
const std::string kWellConditioned =
    std::string(KPARITY_SOURCE_DIR) + "/fuzz/corpus/kda.recurrent.differential.cuda-1fbfcc493144906b.safetensors";

class ExpectedOrigin : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = kparity::test::scratch_dir("expected_origin_" +
                                      std::string(testing::UnitTest::GetInstance()->current_test_info()->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ExpectedOrigin, SaveCallMarksItsExpectedAsTheOracles) {
  const fz::Call c = fz::load_call(kConditioning);
  const std::string saved = fz::save_call(c, dir_.string(), "saved", {{"property", "p"}});
  EXPECT_EQ(kparity::read_safetensors(saved).metadata.at("kparity.expected"), "oracle");
  fz::ExpectedOrigin origin = fz::ExpectedOrigin::unknown;
  fz::load_call(saved, nullptr, &origin);
  EXPECT_EQ(origin, fz::ExpectedOrigin::oracle);

  const fz::Call o = fz::run_oracle(c);
  const std::string plain = (dir_ / "plain.safetensors").string();
  fz::write_call(c, plain, &o);  // what any other writer of expected.* looks like
  fz::load_call(plain, nullptr, &origin);
  EXPECT_EQ(origin, fz::ExpectedOrigin::unknown);

  // Dumps kparity fuzz wrote before the key existed carry their property; an explicit key wins.
  EXPECT_EQ(fz::expected_origin({{"kparity.property", "x"}}), fz::ExpectedOrigin::oracle);
  EXPECT_EQ(fz::expected_origin({{"kparity.property", "x"}, {"kparity.expected", "sglang"}}),
            fz::ExpectedOrigin::unknown);
  EXPECT_EQ(fz::expected_origin({}), fz::ExpectedOrigin::unknown);
}

// The replay of a dump whose expected.* are deliberately off (one element of `out` moved by 1):
// the finding names what was compared and the rule, and what it means by origin.
TEST_F(ExpectedOrigin, ReplaySaysWhatItComparedWithoutPresumingTheOracleMoved) {
  const fz::Call c = fz::load_call(kWellConditioned);
  fz::Call wrong = fz::run_oracle(c);
  auto out = wrong.at("out").view();
  out.store_flat(0, out.load_flat(0) + 1.0);
  const std::string compared =
      "the saved expected.* (b below) against today's oracle o, by the differential rule a backend's results meet";

  const std::string theirs = (dir_ / "upstream.safetensors").string();
  fz::write_call(c, theirs, &wrong, {{"expected", "upstream kernel"}});
  const fz::ReplayOutcome u = fz::replay_file(theirs, {});
  ASSERT_FALSE(u.passed);
  ASSERT_EQ(u.problems.size(), 1u);
  EXPECT_NE(u.problems[0].find(compared), std::string::npos) << u.problems[0];
  EXPECT_NE(u.problems[0].find("): out: |b-o|"), std::string::npos) << u.problems[0];
  EXPECT_NE(u.problems[0].find("they are not marked as kparity's oracle results"), std::string::npos) << u.problems[0];
  EXPECT_EQ(u.problems[0].find("moved"), std::string::npos) << u.problems[0];

  const std::string ours = (dir_ / "ours.safetensors").string();
  fz::write_call(c, ours, &wrong, {{"expected", "oracle"}});
  const fz::ReplayOutcome o = fz::replay_file(ours, {});
  ASSERT_FALSE(o.passed);
  ASSERT_EQ(o.problems.size(), 1u);
  EXPECT_NE(o.problems[0].find(compared), std::string::npos) << o.problems[0];
  EXPECT_NE(o.problems[0].find("today's oracle no longer reproduces them"), std::string::npos) << o.problems[0];
}

// `kparity run` on the conditioning dump with expected.* = today's oracle o moved, at every element,
// by half of what the rule allows a backend there, away from the faithful reference f:
// e_i = o_i - sign(f_i - o_i) max(A_i, 2 max|f - o|) / 2. With e in the oracle's place the rule's
// empirical term only grows (max|f - e| >= max|f - o|), so |o - e| stays inside it; elementwise it
// is far outside the documented 2e-2 atol/rtol where the dots cancel (values ~1e24 next to moves
// ~1e29). The reference backend's result (today's oracle) plays the kernel whose error is that large:
// on the H200 the kernel was 1.19e30 from an expected 8.4e23, inside the rule's 2.52e30.
TEST_F(ExpectedOrigin, RunJudgesSavedOracleResultsWithTheRule) {
  if (!fs::exists(KPARITY_CLI_PATH)) GTEST_SKIP() << "no kparity executable at " << KPARITY_CLI_PATH;
  const fz::Call c = fz::load_call(kConditioning);
  fz::Call moved = fz::run_oracle(c);
  const fz::Call f = fz::run_faithful(c);
  const auto bounds = kparity::reference::error_bound(c.op, c.bag());
  const std::vector<double>& A = bounds.at("out");
  const kparity::TensorView e = moved.at("out").view(), fv = f.at("out").view();
  ASSERT_EQ(static_cast<std::size_t>(e.numel()), A.size());
  double err_f = 0;
  for (std::int64_t i = 0; i < e.numel(); ++i)
    if (std::isfinite(e.load_flat(i)) && std::isfinite(fv.load_flat(i)))
      err_f = std::max(err_f, std::fabs(fv.load_flat(i) - e.load_flat(i)));
  for (std::int64_t i = 0; i < e.numel(); ++i) {
    const double o = e.load_flat(i), fi = fv.load_flat(i);
    if (!std::isfinite(o) || !std::isfinite(fi) || !std::isfinite(A[i])) continue;
    e.store_flat(i, o - (fi > o ? 1.0 : -1.0) * 0.5 * std::max(A[i], 2 * err_f));
  }
  // The premise: elementwise, the moved values fail the documented tolerance.
  const kparity::Tensor today = fz::run_oracle(c).at("out");
  const auto tol = kparity::ops::documented_tolerance(c.op, "out", c.at("out").dtype(), e.dtype);
  ASSERT_FALSE(kparity::ops::compare(today.view(), e, tol).pass()) << "the dump is not ill-conditioned enough";

  const std::string ours = (dir_ / "ours.safetensors").string();
  fz::write_call(c, ours, &moved, {{"expected", "oracle"}});
  const auto r = run_cli({"run", ours, "-o", (dir_ / "r.safetensors").string()}, dir_);
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("against expected.* (kparity's saved oracle results: the differential rule"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("|b-e|"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos) << r.out;

  // Asked for, the elementwise tolerance is what judges, and it fails.
  const auto asked = run_cli({"run", ours, "--atol", "2e-2", "--rtol", "2e-2", "-o", (dir_ / "r.safetensors").string()}, dir_);
  EXPECT_EQ(asked.rc, 1) << asked.out << asked.err;
  EXPECT_NE(asked.out.find("against expected.* (|got - expected| <= atol + rtol*|expected|)"), std::string::npos)
      << asked.out;

  // The same values saved by someone else are compared elementwise too.
  const std::string theirs = (dir_ / "theirs.safetensors").string();
  fz::write_call(c, theirs, &moved);
  const auto other = run_cli({"run", theirs, "-o", (dir_ / "r.safetensors").string()}, dir_);
  EXPECT_EQ(other.rc, 1) << other.out << other.err;
  EXPECT_NE(other.out.find("out            max_abs"), std::string::npos) << other.out;
  EXPECT_NE(other.out.find("FAIL"), std::string::npos) << other.out;

  // And the saved oracle results of the corpus dump itself (kparity.property, no kparity.expected)
  // pass the rule as they pass the elementwise check.
  const auto corpus = run_cli({"run", kConditioning, "-o", (dir_ / "r.safetensors").string()}, dir_);
  EXPECT_EQ(corpus.rc, 0) << corpus.out << corpus.err;
  EXPECT_NE(corpus.out.find("kparity's saved oracle results"), std::string::npos) << corpus.out;
}

}  // namespace
