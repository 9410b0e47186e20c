// `kparity fuzz --bench-oracle` (fuzz_bench_oracle.hpp).
#include "fuzz_bench_oracle.hpp"

#include <cstdio>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>

#include "kparity/fuzz/campaign/oracle_bench.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/reference/exact_lanes.hpp"

namespace kparity::cli {
namespace {

bool& requested() {
  static bool flag = false;
  return flag;
}

}  // namespace

void add_bench_oracle_option(CLI::App& fuzz) {
  fuzz.add_flag("--bench-oracle", requested(),
                "Benchmark the host side of a differential case (exact oracle, faithful model, rule) per op at small, "
                "kernel-sized and real-model shapes, beside the baseline commit's figures; --op, --cases (per half "
                "and op, default 10) and --seed apply");
}

bool bench_oracle_requested() { return requested(); }

int fuzz_bench_oracle(const FuzzOptions& o) {
  fuzz::OracleBenchOptions b;
  b.ops = o.ops;
  if (o.cases) b.cases = *o.cases;
  b.model_cases = b.cases / 10 > 1 ? b.cases / 10 : 1;
  if (!o.seed.empty()) {
    try {
      std::size_t used = 0;
      b.seed = std::stoull(o.seed, &used, 0);
      if (used != o.seed.size()) throw std::invalid_argument("trailing characters");
    } catch (const std::exception&) {
      std::fprintf(stderr, "error: --seed %s is not a decimal or 0x hex 64-bit number\n", o.seed.c_str());
      return kExitBadInput;
    }
  }
  std::printf("kparity fuzz --bench-oracle: seed 0x%llx, %d cases a half per op (small, kernel), %d real-model calls "
              "per op, lane kernels: %s\n",
              static_cast<unsigned long long>(b.seed), b.cases, b.model_cases, reference::lanes::kernel_name());
  std::fflush(stdout);
  try {
    const auto rows = fuzz::run_oracle_bench(b, std::cerr);
    fuzz::print_oracle_bench(rows, fuzz::oracle_bench_baseline(), fuzz::oracle_bench_baseline_label(), std::cout);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {  // the faithful model broke the rule: a bug, not a measurement
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitMismatch;
  }
  return kExitOk;
}

}  // namespace kparity::cli
