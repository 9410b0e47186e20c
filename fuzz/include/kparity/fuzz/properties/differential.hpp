#pragma once
// The differential rule's fuzz side: its properties, the per-property error report, and the rule
// (kparity/judge/rule.hpp, which documents it) with a generator spec's floors.
#include <map>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "kparity/judge/rule.hpp"

namespace kparity::fuzz {

using judging::DifferentialResult;
using judging::TensorError;

// judging::rule with spec.abs_floor as the floors (the op's own floors unless a test set others),
// under the thread's current precision profile.
DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec);
// judging::run_and_judge with spec.abs_floor as the floors. Throws what the runs throw (BackendUnsupported
// included).
DifferentialResult differential(const Call& call, const Backend& backend, const OpFuzzSpec& spec);

// The worst result a property saw, per written tensor, for the report (maximum over its passing
// cases; `ratio` = the largest |b_i - o_i| / allowed_i, the share of the allowed error used).
struct ErrorStat {
  double backend = 0.0;
  double faithful = 0.0;
  double bound = 0.0;
  double ratio = 0.0;
};
// Noted by a property for the current case (thread-local); the campaign keeps the maxima of the
// cases that passed, as it does for buckets.
void note_errors(const DifferentialResult& r);
// The errors noted since the last take (maximum per tensor), cleared.
std::map<std::string, ErrorStat> take_noted_errors();

// "<op>/differential/<backend>" (finite inputs) and "<op>/differential-special-values/<backend>"
// (NaN, +-Inf, -0 and subnormals among the inputs) for one op and one backend: draws with
// spec.draw, applies the rule above, records the call and notes the errors.
// Kernel backends ("cuda") draw kernel-sized shapes (GenConfig::large).
Property differential_property(const OpFuzzSpec& spec, const Backend& backend, bool special_values);
// Both variants for every op each backend implements, in op_specs() order.
std::vector<Property> differential_properties(const std::vector<Backend>& backends,
                                              const std::vector<OpFuzzSpec>& specs);

}  // namespace kparity::fuzz
