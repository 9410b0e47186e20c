// The harness mutants' names and, in the test-only build, the switch (harness_mutant.hpp).
#include "kparity/judge/harness_mutant.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kparity::judging {

const std::vector<HarnessMutantInfo>& harness_mutants() {
  using M = HarnessMutant;
  static const std::vector<HarnessMutantInfo> all = {
      {M::oracle_is_faithful, "oracle-is-faithful", "the oracle replaced by the faithful fp32 model"},
      {M::rule_factor_one, "rule-factor-one", "bound = max(err_f, floor) instead of max(2 err_f, floor)"},
      {M::rule_no_floor, "rule-no-floor", "bound = 2 err_f, the floor dropped"},
      {M::rule_floor_x100, "rule-floor-x100", "the floor 100 times too wide"},
      {M::classes_merged, "classes-merged", "NaN, +Inf and -Inf all agree with one another"},
      {M::classes_split, "classes-split", "NaN no longer agrees with an infinity"},
      {M::guard_band_off, "guard-band-off", "an overwritten guard band is not reported"},
      {M::write_set_off, "write-set-off", "a changed input or padding byte is not reported"},
      {M::poison_off, "poison-off", "pure outputs are not NaN-poisoned before the backend runs"},
      {M::shrink_returns_original, "shrink-returns-original", "failures are not shrunk"},
      {M::replay_ignores_expected, "replay-ignores-expected", "replay does not compare the oracle with expected.*"},
      {M::oracle_not_exact, "oracle-not-exact", "the oracle's sums in plain fp64 (index order) instead of exact"},
      {M::oracle_fast_path_inexact, "oracle-fast-path-inexact",
       "the oracle's SIMD lane sums taken as their plain fp64 running sum (error terms dropped, no certificate)"},
  };
  return all;
}

#ifdef KPARITY_HARNESS_MUTANTS
HarnessMutant active_harness_mutant() {
  static const HarnessMutant active = [] {
    const char* env = std::getenv("KPARITY_HARNESS_MUTANT");
    if (env == nullptr || *env == '\0' || std::string(env) == "none") return HarnessMutant::none;
    for (const auto& m : harness_mutants())
      if (m.name == env) return m.id;
    std::fprintf(stderr, "KPARITY_HARNESS_MUTANT=%s: unknown; known:", env);
    for (const auto& m : harness_mutants()) std::fprintf(stderr, " %.*s", static_cast<int>(m.name.size()), m.name.data());
    std::fprintf(stderr, "\n");
    std::abort();
  }();
  return active;
}
#endif

}  // namespace kparity::judging
