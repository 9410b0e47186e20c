// `kparity fuzz --replay` under KPARITY_FUZZ_PROFILE: saved upstream outputs (fla chunk_kda's, captured
// on the H200: tests/data/fla_chunk_kda) are judged with the faithful model of the kernel's profile,
// as the campaign that produced them judged them; a name that is no profile is refused.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <tuple>

#include "../fuzz_external/fuzz_cli.hpp"

#if defined(KPARITY_CLI_PATH)
namespace kparity::fuzz {
namespace {

using test::fuzz_cli;

const std::string kCaptures = std::string(KPARITY_SOURCE_DIR) + "/tests/data/fla_chunk_kda";

TEST(ReplayProfile, ChunkKdaCapturesPassUnderFlaChunkOnly) {
  setenv("KPARITY_FUZZ_PROFILE", "fla-chunk", 1);
  auto [rc, out] = fuzz_cli("--replay " + kCaptures);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("12 of 12 corpus dumps replayed cleanly"), std::string::npos) << out;
  unsetenv("KPARITY_FUZZ_PROFILE");
  std::tie(rc, out) = fuzz_cli("--replay " + kCaptures);
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("final_state"), std::string::npos) << out;
  setenv("KPARITY_FUZZ_PROFILE", "fla", 1);
  std::tie(rc, out) = fuzz_cli("--replay " + kCaptures);
  unsetenv("KPARITY_FUZZ_PROFILE");
  EXPECT_NE(rc, 0) << out;
  EXPECT_NE(out.find("KPARITY_FUZZ_PROFILE=fla is not a precision profile"), std::string::npos) << out;
}

}  // namespace
}  // namespace kparity::fuzz
#endif
