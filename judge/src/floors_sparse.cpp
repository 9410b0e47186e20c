// The sparse-attention ops' floors of the differential rule (floors.hpp).
#include <cmath>
#include <stdexcept>
#include <string>

#include "kparity/judge/floors.hpp"
#include "kparity/judge/sparse_reading.hpp"
#include "rule_serial.hpp"

namespace kparity::judging {

using namespace sparse_reading;

// The absolute floor of the shared differential rule for `out` and `lse` (rule.hpp). Both
// cover the one case the 2 * err_faithful term cannot: a faithful model that happens to be exact
// (integer values, all logits equal), where a correct kernel still differs from the oracle by its
// own rounding.
namespace {

// magnitudes(call), once per rule() for its written tensors (rule_serial.hpp); a caller outside the
// rule (oracle null) always gets them afresh.
const Magnitudes& magnitudes_of(const Call& call, const Call* oracle) {
  thread_local std::uint64_t serial = 0;
  thread_local const Call* of = nullptr;
  thread_local Magnitudes m;
  const std::uint64_t now = oracle != nullptr ? detail::rule_serial() : 0;
  if (now == 0 || now != serial || of != &call) m = magnitudes(call);
  serial = now, of = &call;
  return m;
}

}  // namespace

double sparse_abs_floor(const Call& call, std::string_view name, const Call* oracle) {
  // The bounds need only the inputs; `oracle` marks a call from within rule() (see magnitudes_of).
  const Magnitudes& m = magnitudes_of(call, oracle);
  const double n = static_cast<double>(m.max_keys);
  if (name == "out") {
    // |out| <= max selected |value| (a convex combination; the sink only shrinks it). Oracle and
    // kernel each round their value once into the storage dtype, so they can sit on either side of
    // one rounding boundary: one storage ulp at the largest |out|, eps * max. The kernel's own value
    // carries fp32 accumulation of n weighted rows and one division: (n + 1) * 2^-24 * max. The
    // smallest subnormal is the ulp near zero.
    const DType dt = call.at("q").dtype();
    return (dtype_eps(dt) + (n + 1.0) * 0x1p-24) * m.max_selected + dtype_min_subnormal(dt);
  }
  if (name == "lse") {
    // lse = M + ln Z in fp32 (C.1 item 8). With exact logits (the only way the faithful model is
    // exact), the kernel's error is Z's: n + 1 fp32 exponentials within 2 ulp each and their sum,
    // (n + 2) * 2^-22 in ln Z, plus rounding M + ln Z and the oracle's own fp32 store, each half an
    // ulp of the largest |lse| the inputs allow: 2^-23 * (max |logit| + ln(n + 1)).
    return 0x1p-23 * (m.max_logit + std::log(n + 1.0)) + (n + 2.0) * 0x1p-22;
  }
  throw std::invalid_argument("sparse abs_floor: '" + std::string(name) + "' is not an output of " + call.op);
}

}  // namespace kparity::judging
