#include "run_cuda.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "run_results.hpp"

#ifdef KPARITY_HAVE_FUZZ
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#endif

namespace kparity::cli {

#ifdef KPARITY_HAVE_FUZZ
namespace {

struct Found {
  std::vector<fuzz::Backend> backends;
  std::string why;
};

// Asked once: the answer (a device count) does not change during a run.
const Found& found() {
  static const Found f = [] {
    Found r;
    r.backends = fuzz::cuda_backends(r.why);
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
  const fuzz::Backend& cuda = found().backends.front();
  std::printf("cuda:\n");
  const fuzz::Call call = fuzz_call_of(dump, inputs);
  fuzz::Call b;
  try {
    b = fuzz::run_backend(call, cuda);
  } catch (const fuzz::BackendUnsupported& e) {
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
  const fuzz::Call oracle = fuzz::run_oracle(call);
  const fuzz::Call faithful = fuzz::run_faithful(call);
  const fuzz::DifferentialResult rule = fuzz::judge(call, oracle, faithful, b, rule_spec(call.op));
  print_rule("against the oracle (differential rule: max|b - o| <= max(2*max|f - o|, floor, a-priori)):", "b-o", rule);
  int status = rule.pass ? kExitOk : kExitMismatch;

  BackendResults results;
  for (const auto& name : call.written) add_result(results, name, b.at(name).view(), out_dtype(o));
  status = std::max(status, compare_expected(dump, inputs, results, o));
  return std::max(status, write_results(result_path(o, "cuda", several), results, dump, o, "cuda"));
}

#else  // a build without the fuzz harness (no RapidCheck) has no CUDA backend to run

CudaAvailability cuda_availability() {
  return {false, "this build has no fuzz harness, which holds the CUDA backend (install librapidcheck-dev and reconfigure)"};
}

bool cuda_implements(std::string_view) { return false; }

int run_cuda(const ops::Dump&, const ArgBag&, const RunOptions&, bool) { return kExitInternal; }

#endif

}  // namespace kparity::cli
