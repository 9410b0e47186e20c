// The fla-chunk precision profile (reference/precision_profile.hpp, reference/kda/chunk_fla.cpp):
// kda/chunk's faithful model with fla chunk_kda's rounding points. Its evidence is upstream's own
// output: tests/data/fla_chunk_kda holds calls captured from chunk_kda on the H200 with what it
// returned as expected.* (README there). Under the default profile the rule rejects most of them
// (final_state: the recurrence's fp32 model is far tighter than chunk_kda's bf16 intermediates);
// under fla-chunk every one meets it. A planted bug (a chunk's last token dropped from the state)
// must still fail under fla-chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/fuzz/generators/kda_chunk_gen.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/precision_profile.hpp"
#include "profile_property.hpp"

namespace kparity::fuzz {
namespace {

using reference::PrecisionProfile;

const std::string kCaptures = std::string(KPARITY_SOURCE_DIR) + "/tests/data/fla_chunk_kda";

TEST(FlaChunkProfile, ParsesAndNames) {
  EXPECT_EQ(reference::parse_profile("fla-chunk"), PrecisionProfile::fla_chunk);
  EXPECT_EQ(reference::profile_name(PrecisionProfile::fla_chunk), "fla-chunk");
  EXPECT_FALSE(reference::parse_profile("fla").has_value());
}

std::vector<ReplayOutcome> replay_captures(PrecisionProfile p) {
  const reference::PrecisionProfileScope scope(p);
  std::vector<ReplayOutcome> out;
  for (const auto& f : corpus_files(kCaptures)) out.push_back(replay_file(f, {}));
  return out;
}

TEST(FlaChunkProfile, ExplainsEveryCapturedChunkKdaOutput) {
  const auto fla = replay_captures(PrecisionProfile::fla_chunk);
  ASSERT_EQ(fla.size(), 12u) << "tests/data/fla_chunk_kda holds twelve captured calls";
  for (const auto& r : fla) {
    EXPECT_TRUE(r.passed) << r.file << ": " << (r.problems.empty() ? "" : r.problems.front());
    // The saved outputs were judged, final_state among them where chunk_kda returned one.
    EXPECT_NE(std::find(r.checks.begin(), r.checks.end(), "expected"), r.checks.end()) << r.file;
  }
  // The same outputs against the default model: the recurrence's rounding points do not explain
  // chunk_kda's, and final_state is where it shows.
  int failed = 0;
  for (const auto& r : replay_captures(PrecisionProfile::faithful)) {
    if (r.passed) continue;
    ++failed;
    ASSERT_FALSE(r.problems.empty());
    EXPECT_NE(r.problems.front().find("final_state"), std::string::npos) << r.file << ": " << r.problems.front();
  }
  EXPECT_GE(failed, 10) << "ten of the twelve captures break the rule under the default profile";
}

// fla-chunk's model as a kernel (`drop_last`: the planted bug of chunk_model_kernel).
Backend fla_chunk_kernel(bool drop_last) {
  return test::chunk_model_kernel(drop_last ? "fla-chunk-drop-last" : "fla-chunk-model", PrecisionProfile::fla_chunk,
                                  drop_last);
}

PropertyOutcome differential(const Backend& b, PrecisionProfile profile, int cases) {
  return test::profiled_differential(b, "kda/chunk", profile, cases);
}

TEST(FlaChunkProfile, ModelFailsFaithfulPassesFlaChunk) {
  const PropertyOutcome strict = differential(fla_chunk_kernel(false), PrecisionProfile::faithful, 300);
  ASSERT_FALSE(strict.passed) << "chunk_kda's bf16 intermediates should break the recurrence's fp32 bound";
  EXPECT_EQ(failure_class_of(strict.message), FailureClass::wrong_values) << strict.message;
  const PropertyOutcome profiled = differential(fla_chunk_kernel(false), PrecisionProfile::fla_chunk, 300);
  EXPECT_TRUE(profiled.passed) << profiled.message;
}

TEST(FlaChunkProfile, DroppedLastTokenStillFails) {
  const PropertyOutcome o = differential(fla_chunk_kernel(true), PrecisionProfile::fla_chunk, 300);
  ASSERT_FALSE(o.passed);
  EXPECT_EQ(failure_class_of(o.message), FailureClass::wrong_values) << o.message;
}

}  // namespace
}  // namespace kparity::fuzz
