#pragma once
// What runs a call under test: the CUDA kernels (backends/cuda/, when built and a device is present),
// a fake kernel made from the reference with a planted bug (the self-test), or any other
// implementation wrapped the same way. The references themselves are the oracle and the faithful
// model of the differential rule (reference.hpp), not a backend under test.
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

struct Backend {
  std::string name;                           // "cuda", "selftest/<bug>"
  std::vector<std::string> ops;               // the ops it implements
  std::function<void(Call& call)> run;        // runs in place: written tensors updated; throws on error

  bool implements(std::string_view op) const;
};

// Thrown by Backend::run for a valid call outside what the backend supports (a kernel's
// NotImplementedError: head dim, dtype). The differential property discards such a case instead
// of failing, and counts it in the "backend-unsupported" bucket so the report shows how many.
class BackendUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The CUDA backend, or nothing (with the reason in `why`) when kernels are not built or no device
// is present: the campaign prints "cuda: skipped, <why>".
std::vector<Backend> cuda_backends(std::string& why);

}  // namespace kparity::fuzz
