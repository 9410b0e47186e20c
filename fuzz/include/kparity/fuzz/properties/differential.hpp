#pragma once
// The one differential rule every op shares (testing guide 1.2/1.3, issue 7 "Properties" 1):
//
//   o = the oracle reference (fp64, no intermediate rounding; outputs stored in fp32 when the
//       contract allows, so o is not limited by bf16/f16 output rounding),
//   f = the faithful reference (fp32 with the kernel's rounding points, the call's dtypes),
//   b = the backend under test (pure outputs poisoned with NaN before the run),
//
//   for every tensor the op writes:  err_b = max|b - o|,  err_f = max|f - o|
//   pass iff err_b <= max(2 * err_f, floor),  floor = spec.abs_floor(call, name)
//
// Non-finite values are compared by class (NaN, +Inf, -Inf), element by element, where NaN agrees
// with either infinity (0 * Inf = NaN appears in one association of a sum of products and not in
// another) but +Inf never agrees with -Inf:
//   * o finite: b must be finite, unless f is non-finite there (the faithful model overflows in
//     fp32 where fp64 does not; a kernel following it may too);
//   * o non-finite: b must agree with o's class, or f's (same reason); no error is accumulated.
// A NaN in b where o and f are finite (an unwritten poisoned output, a NaN leak) always fails.
#include <map>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

struct TensorError {
  std::string name;
  double backend = 0.0;   // err_b over elements finite in both b and o
  double faithful = 0.0;  // err_f over elements finite in both f and o
  double floor = 0.0;
  double bound = 0.0;     // max(2 * faithful, floor)
  bool pass = true;       // error within bound and no class mismatch
  bool mismatch = false;  // a non-finite class or shape disagreement (fails whatever the bound)
  std::string worst;      // the worst element: "[i, j] b=..., o=..., f=..." (or the class mismatch)
};

struct DifferentialResult {
  bool pass = true;
  std::vector<TensorError> tensors;  // one per written tensor, in `written` order
  // One line naming the worst tensor and element, e.g.
  // "out: |b-o| 3.1e-02 > bound 1.2e-03 (2*err_f 1.2e-03, floor 1e-05) at [0, 2, 5]: b=..., o=..., f=..."
  std::string detail;
};

// The rule on already computed results (all three are runs of `input`).
DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec);
// The three runs (backends/reference.hpp) and the rule, for one call and one backend. Throws what the runs throw
// (BackendUnsupported included).
DifferentialResult differential(const Call& call, const Backend& backend, const OpFuzzSpec& spec);

// The worst result a property saw, per written tensor, for the report (maximum over its passing
// cases; `ratio` = err_b / bound, the share of the allowed error used).
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
