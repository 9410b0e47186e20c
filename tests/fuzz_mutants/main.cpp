// test_fuzz_mutants: the harness tests on the test-only fuzz library (harness_mutant.hpp). Besides
// GoogleTest's flags, `--list-harness-mutants` prints the mutant names, one a line, for kill_table.cmake.
#include <cstring>
#include <gtest/gtest.h>
#include <iostream>

#include "kparity/fuzz/harness_mutant.hpp"

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--list-harness-mutants") == 0) {
      for (const auto& m : kparity::fuzz::harness_mutants()) std::cout << m.name << "\n";
      return 0;
    }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
