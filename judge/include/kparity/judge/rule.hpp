#pragma once
// The one differential rule every op shares (testing guide 1.2/1.3/1.3a, issues 7 and 18):
//
//   o = the oracle reference (exact sums, fp64 otherwise; outputs stored in fp32 when the contract
//       allows, so o is not limited by bf16/f16 output rounding),
//   f = the faithful reference (fp32 with the kernel's rounding points, the call's dtypes),
//   b = the backend under test (pure outputs poisoned with NaN before the run),
//   A = the a-priori bound of every written element (reference/error_bound.hpp): what any fp32
//       implementation of the op may differ from the exact result by, in any summation order,
//       from gamma_n(u) sum |x_i y_i| of every accumulation carried through the op
//       (reference/sparse/error_bound.cpp and reference/kda/error_bound.cpp hold the recipes),
//
//   for every tensor the op writes:  err_f = max|f - o|,  floor = abs_floor(call, name) (floors.hpp),
//   and for every element i:         |b_i - o_i| <= max(2 * err_f, floor, A_i + S_i)
//   S_i = u(b) (|o_i| + A_i) + u(o) |o_i| + the two dtypes' half smallest subnormals: the stores of
//   the backend's fp32 value into its output dtype and of the exact value into the oracle's.
//
// 2 * err_f and the floor are the empirical terms of recipe 1.3 (a kernel in another order errs
// about as much as the faithful model does); A is the a-priori term of recipe 1.3a, which knows the
// conditioning: it grows with sum |q k| where a dot product cancels, so an fp32 kernel that lands
// anywhere inside what fp32 allows there is accepted for that reason, not for a widened floor.
//
// Non-finite values are compared by class (NaN, +Inf, -Inf), element by element, where NaN agrees
// with either infinity (0 * Inf = NaN appears in one association of a sum of products and not in
// another) but +Inf never agrees with -Inf:
//   * o finite: b must be finite, unless f is non-finite there (the faithful model overflows in
//     fp32 where fp64 does not; a kernel following it may too), or A_i is +inf (the recipe sees an
//     fp32 intermediate that may overflow), or b is the infinity of o's sign and |o_i| + A_i
//     reaches the overflow threshold of b's dtype (the store itself may overflow);
//   * o non-finite: b must agree with o's class, or f's (same reason), unless A_i is +inf (the
//     recipe sees fp32's range lost: a fused exponent's weights all underflow, and Z = 0 gives
//     zeros where the exact result is NaN); no error is accumulated.
// A NaN in b where o and f are finite and A_i is finite (an unwritten poisoned output, a NaN leak)
// always fails.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/judge/backend.hpp"
#include "kparity/judge/call.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::judging {

struct TensorError {
  std::string name;
  double backend = 0.0;   // err_b = max |b - o| over elements finite in both b and o
  double faithful = 0.0;  // err_f over elements finite in both f and o
  double floor = 0.0;
  double bound = 0.0;     // the allowed error at the worst element: max(2 * faithful, floor, apriori)
  double apriori = 0.0;   // A_i + S_i at the worst element (0 without a bound for the op)
  double ratio = 0.0;     // max over elements of |b_i - o_i| / allowed_i (> 1 fails)
  bool pass = true;       // every element within its bound and no class mismatch
  bool mismatch = false;  // a non-finite class or shape disagreement (fails whatever the bound)
  std::string worst;      // the worst element (largest ratio): "[i, j] b=..., o=..., f=..." (or the class mismatch)
};

struct DifferentialResult {
  bool pass = true;
  std::vector<TensorError> tensors;  // one per written tensor, in `written` order
  // One line naming the worst tensor and element, e.g. "out: |b-o| 3.1e-02 > bound 1.2e-03 (2*err_f
  // 1.2e-03, floor 1e-05, a-priori 4.0e-04) at [0, 2, 5]: b=..., o=..., f=..." (|b-o| and the bound at
  // that element, err_f tensor-wide)
  std::string detail;
};

// The floor of written tensor `name` of `call`; `oracle`: the oracle's result of the same call.
using FloorFn = std::function<double(const Call& call, std::string_view name, const Call* oracle)>;

struct RuleOptions {
  // The faithful model's precision profile (reference/precision_profile.hpp), for the faithful run
  // and the a-priori bound. Without one, the thread's current profile (the compatibility shim of
  // runs.hpp's run_faithful: callers that still set a reference::PrecisionProfileScope).
  std::optional<reference::PrecisionProfile> profile;
  // The floors; empty: the op's documented floors, abs_floor() of floors.hpp.
  FloorFn floor;
};

// The rule on already computed results (all three are runs of `input`); A comes from
// reference::error_bound on `input` (none for an op without bounds), under options.profile.
DifferentialResult rule(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                        const RuleOptions& options = {});
// Runs one call on one implementation and judges it: the backend on a poisoned clone, the oracle,
// the faithful model under options.profile, then the rule. Throws what the runs throw
// (BackendUnsupported included).
DifferentialResult run_and_judge(const Call& call, const Backend& backend, const RuleOptions& options = {});

}  // namespace kparity::judging
