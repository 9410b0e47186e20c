#pragma once
// Implementations from outside kparity as fuzz backends: a shared library written to
// kparity/impl_abi.h (loaded with dlopen; `kparity fuzz --impl lib.so`), or any callable wrapped
// the same way (the Python package's check_implementation). Each gets the implementation
// properties: the differential rule on finite and special values, determinism, and (opt-in) the
// contract, every failure reported with its class (failure.hpp).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kparity/abi/plugin.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/failure.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::fuzz {

struct ExternalOptions {
  // Seconds one call may take. A CPU plugin's process is then killed; a CUDA plugin's call is
  // abandoned (its thread detached, its buffers leaked: the plugin may still write them) and every
  // later call of the same backend is declined ("an earlier call never returned").
  double case_timeout = 30.0;
};

// The plugin as a backend named after its info name: every tensor of the call placed inside guard
// bands, pure outputs arriving NaN-poisoned (run_backend), then the hygiene checks. A kDLCPU
// plugin runs in a forked child over shared memory, so a crash (a signal) is reported as the class
// crashed and a hang is killed at the time limit; a kDLCUDA plugin gets device mirrors as the CUDA
// backend does, runs on a worker thread, and the device is probed after the call (a plugin that
// kills the process cannot be survived there). Statuses map to classes: REJECTED ->
// rejected-valid-call, UNSUPPORTED -> the case is discarded, ERROR -> crashed. A CUDA plugin needs a
// kparity built with its kernels (CUDA runtime); without one run() throws.
Backend plugin_backend(std::shared_ptr<const abi::Plugin> plugin, const ExternalOptions& options = {});

// Runs `f` on a worker thread and waits at most `seconds`; false when it did not finish (the thread
// is detached and keeps `keep_alive` alive until it ends).
bool run_with_timeout(const std::function<void()>& f, double seconds, std::shared_ptr<void> keep_alive = {});

struct ImplPropertyOptions {
  bool large = false;  // kernel-sized shapes (GenConfig::large), for GPU implementations
  bool on_device = false;  // the implementation runs on CUDA: its contract is judged at the kernel entry
  // Which properties: "differential", "differential-special-values", "deterministic", "contract".
  std::vector<std::string> kinds = {"differential", "differential-special-values", "deterministic"};
  // The contract property also requires upstream's message (and class, where the backend knows it).
  bool contract_messages = false;
  // Optional: turns a drawn call into one the implementation can be called with (Python callables
  // that lack a keyword); false discards the case.
  std::function<bool(Call&)> adapt;
  // The faithful model the differential rule's bound comes from (reference/precision_profile.hpp).
  reference::PrecisionProfile profile = reference::PrecisionProfile::faithful;
};

// For every op the backend implements (in specs order), the selected kinds:
//   <op>/differential/<backend>                 the rule of differential.hpp on finite inputs
//   <op>/differential-special-values/<backend>  NaN, +-Inf, -0, subnormals among the inputs
//   <op>/deterministic/<backend>                the same call twice gives the same bytes in every
//                                               written tensor (every op here promises it: no atomics upstream)
//   <op>/rejects-hostile-calls/<backend>        a valid call with one catalog mutation of an upstream
//                                               check must be refused (opt-in: a kernel may skip checks)
std::vector<Property> implementation_properties(const Backend& backend, const std::vector<OpFuzzSpec>& specs,
                                                const ImplPropertyOptions& options = {});

}  // namespace kparity::fuzz
