#pragma once
// Shared by the tests/site suites: the kparity executable of this build, scratch folders and
// override catalogs.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "kparity/diagnostics/catalog.hpp"

// The CLI this build made (tests/CMakeLists.txt gives every area KPARITY_BINARY_DIR); the runner
// from tests/cli runs it and captures both streams.
#ifndef KPARITY_CLI_PATH
#define KPARITY_CLI_PATH KPARITY_BINARY_DIR "/cli/kparity"
#endif
#include "cli/cli_runner.hpp"

namespace kparity::test {

inline void require_cli() {
  ASSERT_TRUE(std::filesystem::exists(KPARITY_CLI_PATH))
      << KPARITY_CLI_PATH << " is missing: build the kparity_cli target (scripts/test.sh builds everything)";
}

// One embedded record, re-summarised, as a single-file override catalog.
inline void write_override_with_summary(const std::filesystem::path& file, const std::string& id, const std::string& summary) {
  nlohmann::json rec = Catalog::embedded().by_id(id)->record;
  rec["summary"] = summary;
  std::ofstream(file) << rec.dump(2);
}

}  // namespace kparity::test
