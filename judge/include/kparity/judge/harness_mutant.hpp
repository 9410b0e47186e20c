#pragma once
// Harness mutants (issue 19 item 1): deliberate defects in the harness itself, so that its own tests
// can be shown to fail when it breaks. Each is a branch at exactly one place of judge/src or fuzz/src (grep for
// its enumerator), taken only when the libraries are built with KPARITY_HARNESS_MUTANTS (the test-only
// copies tests/fuzz_mutants builds) and the environment names it in KPARITY_HARNESS_MUTANT. In the
// shipped library active_harness_mutant() is a constant `none`, so every branch is compiled out.
//
// Adding a mutant: an enumerator here, a row in harness_mutants() (harness_mutant.cpp), the branch
// where the defect lives, and its row (the tests that must kill it) in tests/fuzz_mutants/CMakeLists.txt.
#include <string_view>
#include <vector>

namespace kparity::judging {

enum class HarnessMutant {
  none,
  oracle_is_faithful,        // run_oracle runs the faithful (fp32) model instead of the oracle
  rule_factor_one,           // the rule's bound is max(1 * err_f, floor)
  rule_no_floor,             // the rule's bound is 2 * err_f alone
  rule_floor_x100,           // the per-tensor floor is 100 times too wide
  classes_merged,            // every non-finite class agrees with every other (+Inf with -Inf)
  classes_split,             // NaN no longer agrees with +-Inf (0 * Inf in one association only)
  guard_band_off,            // check_guard never reports an overwritten guard band
  write_set_off,             // check_untouched never reports a changed input or padding byte
  poison_off,                // run_backend leaves pure outputs as they were instead of NaN
  shrink_returns_original,   // the runner never shrinks: the failing call is the first one found
  replay_ignores_expected,   // corpus replay does not compare today's oracle with expected.*
  oracle_not_exact,          // run_oracle's sums in plain fp64, index order (PlantedFault::oracle_plain_sums)
  oracle_fast_path_inexact,  // the oracle's lane sums uncompensated (PlantedFault::oracle_lanes_uncompensated)
};

struct HarnessMutantInfo {
  HarnessMutant id;
  std::string_view name;  // as KPARITY_HARNESS_MUTANT spells it: "oracle-is-faithful"
  std::string_view what;
};
// Every mutant but `none`, in enum order.
const std::vector<HarnessMutantInfo>& harness_mutants();

#ifdef KPARITY_HARNESS_MUTANTS
// The mutant named by KPARITY_HARNESS_MUTANT (read once); an unknown name aborts with the list.
HarnessMutant active_harness_mutant();
#else
constexpr HarnessMutant active_harness_mutant() { return HarnessMutant::none; }
#endif
inline bool harness_mutant(HarnessMutant m) { return m != HarnessMutant::none && active_harness_mutant() == m; }

}  // namespace kparity::judging
