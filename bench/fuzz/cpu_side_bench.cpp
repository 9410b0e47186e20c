// The host side of a CUDA campaign's differential properties, measured without a GPU (issue 18
// item 2: >= 5,000 cases/min per property on the H200 machine with --jobs 16). Each case of
// `<op>/differential[-special-values]/cuda` draws a kernel-sized call, runs the backend, the exact
// oracle, the faithful reference and the a-priori bound, and judges; everything but the backend runs
// on the CPU. Here the backend is the faithful model under the name "cuda" (so the generators draw
// kernel-sized calls, as differential_property does for the real one) and its time is taken out:
// "host cases/min" is what one worker's CPU allows when the kernel costs nothing.
//
//   fuzz_cpu_side_bench [--cases N] [--seed S] [--op OP]...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace {

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace kparity::fuzz;
  int cases = 200;
  std::uint64_t seed = kDefaultSeed;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cases" && i + 1 < argc) cases = std::atoi(argv[++i]);
    else if (a == "--seed" && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 0);
    else if (a == "--op" && i + 1 < argc) only.emplace_back(argv[++i]);
    else {
      std::cerr << "usage: fuzz_cpu_side_bench [--cases N] [--seed S] [--op OP]...\n";
      return 2;
    }
  }
  std::cout << fmt::format("{:<52} {:>6} {:>8} {:>8} {:>10} {:>10}\n", "property (host side, one process)", "cases",
                           "cpu s", "kernel s", "host/min", "wall/min");
  bool all_passed = true;
  for (const OpFuzzSpec& spec : op_specs()) {
    if (!only.empty() && std::find(only.begin(), only.end(), spec.op) == only.end()) continue;
    for (bool special : {false, true}) {
      double kernel_cpu = 0.0;  // the stand-in kernel's share, taken out below
      Backend faithful = faithful_backend({spec.op});
      Backend stand_in{"cuda", {spec.op}, [&kernel_cpu, run = faithful.run](Call& c) {
                         const double t = thread_cpu_seconds();
                         run(c);
                         kernel_cpu += thread_cpu_seconds() - t;
                       }};
      const Property p = differential_property(spec, stand_in, special);
      PropertyBudget budget;
      budget.seed = seed;
      budget.cases = cases;
      const double c0 = thread_cpu_seconds();
      const auto w0 = std::chrono::steady_clock::now();
      const PropertyOutcome o = run_property(p, budget);
      const double cpu = thread_cpu_seconds() - c0;
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
      const double host = cpu - kernel_cpu;
      all_passed = all_passed && o.passed;
      std::cout << fmt::format("{:<52} {:>6} {:>8.2f} {:>8.2f} {:>10.0f} {:>10.0f}{}\n", p.name, o.cases, cpu,
                               kernel_cpu, host > 0 ? 60.0 * o.cases / host : 0.0,
                               wall > 0 ? 60.0 * o.cases / wall : 0.0, o.passed ? "" : "  FAILED")
                << std::flush;
    }
  }
  return all_passed ? 0 : 1;
}
