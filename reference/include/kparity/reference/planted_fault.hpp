#pragma once
// TEST-ONLY fault injection, for `kparity fuzz --self-test` (fuzz/src/campaign/selftest.cpp): the self-test
// turns a copy of the reference into a fake kernel with one known bug and shows that the shared
// differential rule catches it. Bugs that can be reproduced by transforming a call's inputs or
// outputs are planted that way, outside the reference; only the bugs that live inside a loop have a
// switch here, each checked at exactly one place (grep for its name).
//
// The switch is per thread and off unless a PlantedFaultScope is alive on that thread, so the
// oracle and faithful runs the rule compares against never see a fault.
namespace kparity::reference {

enum class PlantedFault {
  none,
  // kda/replayssm_decode, faithful mode, B.2.4: W_i = exp(sum_{i' >= i} g_i'), i.e. ring entry i
  // decayed by its own gate too (an inclusive instead of an exclusive suffix).
  inclusive_suffix_decay,
  // kda/replayssm_decode, B.2.3 item 3: the replay folds ring positions 0..c instead of 0..c-1
  // (the cursor read one too far: the stale entry at the cursor leaks in).
  ring_read_past_cursor,
  // sparse ops, C.4: the sink's weight exp(sigma - M) is added to every channel of the numerator
  // as well as to the denominator (the sink treated as a key whose value is all ones).
  sink_in_numerator,
  // Every op, oracle mode: oracle_sum (accumulate.hpp) adds its products in plain fp64, in index
  // order, instead of exactly (the harness mutant "oracle-not-exact", fuzz/harness_mutant.hpp).
  oracle_plain_sums,
  // Every op, oracle mode, fast paths only: the lane kernels' sums (exact_lanes.hpp lanes::finish)
  // taken as their running fp64 sum p, the error terms dropped, instead of certified (the harness
  // mutant "oracle-fast-path-inexact"). Invisible to the rule (last-bit fp64 errors); the oracle
  // property against the long accumulator must see it.
  oracle_lanes_uncompensated,
};

namespace detail {
// constinit: oracle_sum (accumulate.hpp) reads it on every reduction, without a TLS wrapper call.
extern constinit thread_local PlantedFault t_planted_fault;
}  // namespace detail
inline PlantedFault planted_fault() noexcept { return detail::t_planted_fault; }

class PlantedFaultScope {
 public:
  explicit PlantedFaultScope(PlantedFault f) noexcept;
  ~PlantedFaultScope();
  PlantedFaultScope(const PlantedFaultScope&) = delete;
  PlantedFaultScope& operator=(const PlantedFaultScope&) = delete;

 private:
  PlantedFault previous_;
};

}  // namespace kparity::reference
