#pragma once
// One property under a budget: chunked RapidCheck checks with explicit seeds, so a failure comes
// with a one-line repro (property name + chunk seed + chunk size), per-case bucket and error
// collection, and the shrunk counterexample when the property recorded its call.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

inline constexpr std::uint64_t kDefaultSeed = 0x6b70617269747931ull;

// How long one property runs: `cases` passing cases, or `seconds` of wall-clock time (whichever is
// set; neither: 100 cases). Cases run in chunks (RapidCheck checks) so that a time budget is
// checked between chunks; chunk k of a property draws with chunk_seed(seed, k), and a failing
// chunk is reproduced exactly by `--seed chunk_seed(seed, k) --cases <that chunk's size>`.
struct PropertyBudget {
  std::uint64_t seed = kDefaultSeed;
  std::optional<int> cases;
  std::optional<double> seconds;
  int max_size = 100;
  bool shrink = true;
};
std::uint64_t chunk_seed(std::uint64_t seed, int chunk);  // chunk_seed(s, 0) == s

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
  double seconds = 0.0;
  std::map<std::string, std::int64_t> buckets;  // every bucket of the op's spec (0 if never hit) + any noted
  std::map<std::string, ErrorStat> max_errors;  // differential properties: per written tensor
  std::optional<Call> failing_call;             // the shrunk input, when the property recorded one
  std::string repro;                            // one-line command (failures)
  std::string saved;                            // corpus dump written for the failure
  double cases_per_minute() const;
};

PropertyOutcome run_property(const Property& p, const PropertyBudget& budget);
// The same, calling `on_chunk` after every passing chunk with the outcome so far and the seconds
// spent (a progress display).
PropertyOutcome run_property(const Property& p, const PropertyBudget& budget,
                             const std::function<void(const PropertyOutcome&, double)>& on_chunk);
// One RapidCheck check of max_success cases (the budget form with `cases` set).
PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink);

}  // namespace kparity::fuzz
