#pragma once
// A fresh scratch directory per test binary run, removed by the caller.
#include <unistd.h>

#include <filesystem>
#include <string>

namespace kparity::test {

inline std::filesystem::path scratch_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("kparity_cli_" + name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(d);
  std::filesystem::create_directories(d);
  return d;
}

}  // namespace kparity::test
