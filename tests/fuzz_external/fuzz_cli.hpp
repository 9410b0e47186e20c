#pragma once
// `kparity fuzz ARGS` run by the tests of --impl's options: exit status and everything printed.
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <utility>

#if defined(KPARITY_CLI_PATH)
namespace kparity::fuzz::test {

inline std::pair<int, std::string> fuzz_cli(const std::string& args) {
  const std::string cmd = std::string(KPARITY_CLI_PATH) + " fuzz " + args + " 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

}  // namespace kparity::fuzz::test
#endif
