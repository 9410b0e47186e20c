#pragma once
// The properties of an implementation under test from outside kparity (a plugin, external.hpp; a
// Python callable, kparity.fuzz): the differential rule on finite and special values, determinism,
// and (opt-in) the contract, every failure reported with its class (failure.hpp).
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/failure.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::fuzz {

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
// The content of a call (op, every tensor's layout and bytes, scalars, flags) as a 64-bit FNV-1a
// hash: how the implementation properties and backends recognise RapidCheck's final re-run of a
// counterexample whose verdict cannot be reproduced by running it again (a hang, a race).
std::uint64_t call_fingerprint(const Call& c);

std::vector<Property> implementation_properties(const Backend& backend, const std::vector<OpFuzzSpec>& specs,
                                                const ImplPropertyOptions& options = {});

}  // namespace kparity::fuzz
