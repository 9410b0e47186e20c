#pragma once
// Runs the kparity executable (path from the build, KPARITY_CLI_PATH) and captures its streams.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "cli/scratch_dir.hpp"

namespace kparity::test {

struct CliResult {
  int rc = -1;
  std::string out, err;
};

// POSIX single quotes, so messages with backticks and spaces reach the program unchanged.
inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& dir) {
  std::string cmd = shell_quote(KPARITY_CLI_PATH);
  for (const auto& a : args) cmd += " " + shell_quote(a);
  const auto out = dir / "stdout.txt", err = dir / "stderr.txt";
  cmd += " >" + shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

}  // namespace kparity::test
