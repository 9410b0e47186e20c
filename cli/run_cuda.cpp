#include "run_cuda.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "run_results.hpp"

#include "kparity/judge/backend.hpp"
#include "kparity/judge/rule.hpp"
#include "kparity/judge/runs.hpp"

namespace kparity::cli {

namespace {

struct Found {
  std::vector<judging::Backend> backends;
  std::string why;
};

// Asked once: the answer (a device count) does not change during a run.
const Found& found() {
  static const Found f = [] {
    Found r;
    r.backends = judging::cuda_backends(r.why);
    return r;
  }();
  return f;
}

}  // namespace

CudaAvailability cuda_availability() {
  const Found& f = found();
  return {!f.backends.empty(), f.why};
}

bool cuda_implements(std::string_view op) {
  for (const auto& b : found().backends)
    if (b.implements(op)) return true;
  return false;
}

int run_cuda(const ops::Dump& dump, const ArgBag& inputs, const RunOptions& o, bool several) {
  const judging::Backend& cuda = found().backends.front();
  std::printf("cuda:\n");
  const judging::Call call = judge_call_of(dump, inputs);
  judging::Call b;
  try {
    b = judging::run_backend(call, cuda);
  } catch (const judging::BackendUnsupported& e) {
    // The kernel's NotImplementedError (a head dim, a dtype it has no code for): the call is valid,
    // so with other backends this is a skip; asked for alone, the run cannot do what was asked.
    if (several) {
      std::printf("  skipped, the kernel does not support this call:\n%s\n", e.what());
      return kExitOk;
    }
    std::fprintf(stderr, "error: --backend cuda: the kernel does not support this call:\n%s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    // A launcher that rejects what the reference accepts, a CUDA error, a guard band or an input
    // overwritten: the kernel failed on this call.
    std::printf("  FAIL  the kernel run failed: %s\n", e.what());
    return kExitMismatch;
  }
  // The two references of the rule; the dump passed their contract, so a throw here is internal.
  const judging::Call oracle = judging::run_oracle(call);
  const judging::Call faithful = judging::run_faithful(call);
  const judging::DifferentialResult rule = judging::rule(call, oracle, faithful, b);
  print_rule("against the oracle (differential rule: max|b - o| <= max(2*max|f - o|, floor, a-priori)):", "b-o", rule);
  int status = rule.pass ? kExitOk : kExitMismatch;

  BackendResults results;
  for (const auto& name : call.written) add_result(results, name, b.at(name).view(), out_dtype(o));
  status = std::max(status, compare_expected(dump, inputs, results, o));
  return std::max(status, write_results(result_path(o, "cuda", several), results, dump, o, "cuda"));
}

}  // namespace kparity::cli
