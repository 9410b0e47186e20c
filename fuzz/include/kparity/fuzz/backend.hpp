#pragma once
// What runs a call: the CUDA kernels (when built and a device is present), or a fake kernel made
// from the reference with a planted bug (the self-test). The references themselves are the oracle
// and the faithful model of the differential rule, not a backend under test.
#include <functional>
#include <string>
#include <vector>

#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

struct Backend {
  std::string name;                           // "cuda", "selftest/<bug>"
  std::vector<std::string> ops;               // the ops it implements
  std::function<void(Call& call)> run;        // runs in place: written tensors updated; throws on error
};

// The CUDA backend, or nothing (with the reason in `why`) when kernels are not built or no device
// is present: the campaign prints "cuda: skipped, <why>".
std::vector<Backend> cuda_backends(std::string& why);

}  // namespace kparity::fuzz
