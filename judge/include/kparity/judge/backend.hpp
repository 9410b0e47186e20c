#pragma once
// What runs a call under test: the CUDA kernels (src/cuda/, when built and a device is present),
// a fake kernel made from the reference with a planted bug (the fuzz self-test), a plugin, or any
// other implementation wrapped the same way. The references themselves are the oracle and the
// faithful model of the differential rule (runs.hpp), not a backend under test.
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/judge/call.hpp"
#include "kparity/judge/kernel_ops.hpp"

namespace kparity::judging {

struct Backend {
  std::string name;                           // "cuda", "selftest/<bug>"
  std::vector<std::string> ops;               // the ops it implements
  std::function<void(Call& call)> run;        // runs in place: written tensors updated; throws on error

  bool implements(std::string_view op) const;
};

// Thrown by Backend::run for a valid call outside what the backend supports (a kernel's
// NotImplementedError: head dim, dtype). The fuzz differential property discards such a case
// instead of failing; `kparity run` reports it as a skip.
class BackendUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether this process can use a CUDA device, and why not. probe_cuda(false) asks here, which
// initialises CUDA in this process; probe_cuda(true) asks in a forked child, so that a process that
// forks workers afterwards stays free of CUDA (a CUDA context does not survive fork(), and a
// worker forked from a process that initialised CUDA cannot use the device).
struct DeviceProbe {
  bool available = false;
  std::string why;  // when not available: "no CUDA device", "kernels not built (...)"
};
DeviceProbe probe_cuda(bool in_child = false);

// The ops the CUDA backend implements (whether or not it is built or has a device): kernel_ops().
const std::vector<std::string>& cuda_backend_ops();

// The CUDA backend, or nothing (with the reason in `why`) when kernels are not built or no device
// is present: the campaign prints "cuda: skipped, <why>". The first form probes in this process.
std::vector<Backend> cuda_backends(std::string& why);
std::vector<Backend> cuda_backends(const DeviceProbe& probe, std::string& why);

}  // namespace kparity::judging
