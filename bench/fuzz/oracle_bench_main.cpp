// fuzz_oracle_bench: `kparity fuzz --bench-oracle` as a binary of its own (oracle_bench.hpp), so that
// the same source measures the baseline commit too: built against c6c0638's fuzz library (which has
// everything oracle_bench.cpp uses), it prints that commit's figures; --raw adds one line a row for
// scripts (bench/fuzz/oracle_compare.sh runs the two side by side).
//
//   fuzz_oracle_bench [--cases N] [--model-cases N] [--seed S] [--op OP]... [--tier small|kernel|model]... [--raw]
#include <cstdlib>
#include <iostream>
#include <string>

#include "kparity/fuzz/campaign/oracle_bench.hpp"

int main(int argc, char** argv) {
  using namespace kparity::fuzz;
  OracleBenchOptions o;
  bool raw = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) o.cases = std::atoi(argv[++i]);
    else if (a == "--model-cases" && i + 1 < argc) o.model_cases = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) o.seed = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--op" && i + 1 < argc) o.ops.emplace_back(argv[++i]);
    else if (a == "--tier" && i + 1 < argc) o.tiers.emplace_back(argv[++i]);
    else if (a == "--raw") raw = true;
    else {
      std::cerr << "usage: fuzz_oracle_bench [--cases N] [--model-cases N] [--seed S] [--op OP]... "
                   "[--tier small|kernel|model]... [--raw]\n";
      return 2;
    }
  }
  try {
    const auto rows = run_oracle_bench(o, std::cerr);
    print_oracle_bench(rows, oracle_bench_baseline(), oracle_bench_baseline_label(), std::cout);
    if (raw) print_oracle_bench_raw(rows, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
