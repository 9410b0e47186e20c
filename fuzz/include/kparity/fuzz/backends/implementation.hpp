#pragma once
// The properties of an implementation under test from outside kparity (a plugin, external.hpp; a
// Python callable, kparity.fuzz): the differential rule on finite and special values, determinism,
// and (opt-in) the contract, every failure reported with its class (failure.hpp).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/failure.hpp"
#include "kparity/fuzz/backends/findings.hpp"
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
  // that lack a keyword); false: the call is outside what the implementation can be called with,
  // and another is drawn (counted as outside the domain, "signature").
  std::function<bool(Call&)> adapt;
  // Optional: the implementation's declared domain, asked about every drawn call before it runs:
  // "" when the call is inside, else why not. A call outside is never run: another is drawn in its
  // place (up to kMaxDraws per case), and the report counts both (findings.hpp, FindingCounters).
  std::function<std::string(const Call&)> supports;
  // Optional: a real model's shapes (generators/presets.hpp) for the ops the preset has them for.
  const ShapePreset* preset = nullptr;
  // Optional: the compile-relevant sizes and dtypes held to a few values (generators/pins.hpp), so
  // that a JIT-compiled implementation compiles a handful of shape classes once each.
  const ShapePins* pins = nullptr;
  // Where each property's FindingLedger is registered, by property name (findings.hpp); the
  // properties keep their own when null.
  std::shared_ptr<std::map<std::string, std::shared_ptr<FindingLedger>>> ledgers;
  // The faithful model the differential rule's bound comes from (reference/precision_profile.hpp).
  reference::PrecisionProfile profile = reference::PrecisionProfile::faithful;
};

// Draws per case before a case is given up (RC_DISCARD): calls outside the domain, declined by the
// implementation or recurrences of excluded findings are redrawn inside the case.
inline constexpr int kMaxDraws = 500;

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

// The signature a backend failure gets in a finding (findings.hpp), without the call's edges: what
// the explain step (campaign/explain.hpp) compares a variant's failure with.
FindingSignature signature_of_failure(const ImplFailure& e);

std::vector<Property> implementation_properties(const Backend& backend, const std::vector<OpFuzzSpec>& specs,
                                                const ImplPropertyOptions& options = {});

}  // namespace kparity::fuzz
