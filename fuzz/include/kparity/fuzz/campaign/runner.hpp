#pragma once
// One property under a budget: chunked RapidCheck checks with explicit seeds, so a failure comes
// with a one-line repro (property name + chunk seed + chunk size), per-case bucket and error
// collection, and the shrunk counterexample when the property recorded its call.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

inline constexpr std::uint64_t kDefaultSeed = 0x6b70617269747931ull;

// How long one property runs: `cases` passing cases, or `seconds` of wall-clock time (whichever is
// set; neither: 100 cases). Cases run in chunks (RapidCheck checks) so that a time budget is
// checked between chunks; chunk k of a property draws with chunk_seed(seed, k), and a failing
// chunk is reproduced exactly by `--seed chunk_seed(seed, k) --cases <that chunk's size>`.
//
// A run may cover only some of the chunks, so that workers and shards can split a property and
// their outcomes merge into the whole run's (merge_chunk_runs): with `cases`, chunk k holds
// min(100, cases - 100k) cases and the run covers chunks [first_chunk, end_chunk) of the
// ceil(cases / 100) (end_chunk < 0: to the last); with `seconds`, the run's j-th chunk is chunk
// first_chunk + j * chunk_stride.
struct PropertyBudget {
  std::uint64_t seed = kDefaultSeed;
  std::optional<int> cases;
  std::optional<double> seconds;
  int max_size = 100;
  bool shrink = true;
  int first_chunk = 0;
  int end_chunk = -1;
  int chunk_stride = 1;
};
inline constexpr int kChunkCases = 100;  // RapidCheck's default number of cases per check
std::uint64_t chunk_seed(std::uint64_t seed, int chunk);  // chunk_seed(s, 0) == s
int chunk_count(int cases);                                // the chunks of a case budget

struct PropertyOutcome {
  std::string name;
  bool passed = false;
  int cases = 0;           // passing cases run (before the failure, for a failed property)
  std::uint64_t seed = 0;  // the seed that reproduces: the failing chunk's, else the budget's
  std::string message;     // failure description and counterexample (RC_LOG lines)

  std::string op, kind, backend;
  int discarded = 0;      // cases not checked: RC_DISCARDed ones plus early_returns
  int early_returns = 0;  // passing cases whose body returned before checking (note_early_return)
  // discarded / (cases + RC_DISCARDed): the share of drawn cases left unchecked.
  double discard_share() const;
  int repro_cases = 0;  // --cases of the repro: the failing chunk's size
  std::string skipped;  // the property could not run here: why (Property::skipped); passed, 0 cases
  double seconds = 0.0;
  double shrink_seconds = 0.0;  // a failed run: from its failing case's end to the shrunk call (the shrink)
  std::map<std::string, std::int64_t> buckets;  // every bucket of the op's spec (0 if never hit) + any noted
  std::map<std::string, ErrorStat> max_errors;  // differential properties: per written tensor
  std::optional<Call> failing_call;             // the shrunk input, when the property recorded one
  std::string repro;                            // one-line command (failures)
  std::string saved;                            // corpus dump written for the failure
  // The explain step on the shrunk call (campaign/explain.hpp, Explanation::to_json plus
  // round_seconds and shrink_seconds), for a failed property whose Property::check is set; null: none.
  nlohmann::json explain;
  // A run with several findings (backends/findings.hpp): the fields it adds to the report's entry
  // (findings, coverage, rounds, stopped: PropertyFindings::to_json); null for a plain run.
  nlohmann::json findings;
  // The chunks the run covered: chunks_run of them from first_chunk on, chunk_stride apart; a
  // failed run's last one failed.
  int first_chunk = 0;
  int chunks_run = 0;
  int chunk_stride = 1;
  double cases_per_minute() const;
  int failed_chunk() const { return first_chunk + (chunks_run - 1) * chunk_stride; }
};

PropertyOutcome run_property(const Property& p, const PropertyBudget& budget);
// The same, calling `on_chunk` after every passing chunk with the outcome so far and the seconds
// spent (a progress display).
PropertyOutcome run_property(const Property& p, const PropertyBudget& budget,
                             const std::function<void(const PropertyOutcome&, double)>& on_chunk);
// One RapidCheck check of max_success cases (the budget form with `cases` set).
PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink);

// One property's outcome from runs that covered parts of its chunks (any order). Runs of
// consecutive chunks (a case budget) are taken in chunk order up to the first that failed, which
// gives the property's failure; later ones are dropped, since a single run stops at its first
// failing chunk: so the merge equals one run over all the chunks. Strided runs (time budgets)
// interleave and are all summed; the lowest failing chunk gives the failure.
PropertyOutcome merge_chunk_runs(std::vector<PropertyOutcome> runs);

}  // namespace kparity::fuzz
