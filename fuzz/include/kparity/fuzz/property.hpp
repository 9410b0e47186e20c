#pragma once
// Named RapidCheck properties and the campaign that runs them with explicit seeds and budgets, so
// a failure prints a one-line repro (property name + seed + cases) and the shrunk counterexample
// is saved to the corpus.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kparity/core/tensor_view.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/fuzz/backend.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/differential.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::fuzz {

struct Property {
  std::string name;  // "<op>/<relation>", e.g. "kda/replayssm_decode/equals-packed-decode"
  std::string kind;  // metamorphic | hostile | differential | ...
  std::function<void()> body;  // draws with *gen, asserts with RC_ASSERT
  std::string op;       // empty: derived from the name (see op_of)
  std::string backend;  // empty: "reference" (a CPU property); "cuda" for kernel properties
  // Every bucket the property can note, reported with a zero count when never hit (coverage
  // gaps). Empty: the buckets of its op's spec, when the op has one.
  std::vector<std::string> buckets;
};

// The op a property is about: `op` if set, else the name's first two components when they name
// an op with a contract ("kda/packed_decode/..." -> "kda/packed_decode"), else "" (a property
// about every op, like the catalog-wide hostile ones).
std::string op_of(const Property& p);
std::string backend_of(const Property& p);

std::vector<Property> kda_properties();
std::vector<Property> sparse_properties();
std::vector<Property> hostile_properties();

// "<op>/differential/<backend>" (finite inputs) and "<op>/differential-special-values/<backend>"
// (NaN, +-Inf, -0 and subnormals among the inputs) for one op and one backend: draws with
// spec.draw, applies the shared rule (differential.hpp), records the call and notes the errors.
// Kernel backends ("cuda") draw kernel-sized shapes (GenConfig::large).
Property differential_property(const OpFuzzSpec& spec, const Backend& backend, bool special_values);
// Both variants for every op each backend implements, in op_specs() order.
std::vector<Property> differential_properties(const std::vector<Backend>& backends,
                                              const std::vector<OpFuzzSpec>& specs);

// The reference-side properties (metamorphic, hostile, registered extras): the "reference" backend.
std::vector<Property> cpu_properties();
// The kernel launchers' answer to rejected calls (fuzz/cuda/rejected_launch.cpp): backend "cuda"
// with a device, "launcher" (host memory labelled cuda:0) without one; empty when kernels are not built.
std::vector<Property> launcher_properties();
// cpu_properties() plus the differential properties of every available CUDA backend.
std::vector<Property> all_properties();
void register_properties(std::vector<Property> extra);

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
  int discarded = 0;
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
// One RapidCheck check of max_success cases (the budget form with `cases` set).
PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink);

struct CampaignOptions {
  std::uint64_t seed = kDefaultSeed;
  std::vector<std::string> ops;  // empty: all; else op names ("kda/packed_decode") or families ("kda")
  std::string backend = "all";   // reference | cuda | all
  std::string property;          // non-empty: exactly this property
  std::optional<int> cases;      // passing cases per property
  std::optional<double> seconds;  // wall-clock budget of the whole campaign, split across properties
  int max_size = 100;
  bool shrink = true;
  bool progress = false;           // a TTY: one line rewritten with \r while a property runs
  std::string corpus_dir = "fuzz/corpus";  // failing calls are saved here; empty: not saved
  std::string report_path;                 // JSON report (report.hpp); empty: none
};

struct BackendStatus {
  std::string name;    // "reference", "cuda"
  bool available = false;
  std::string reason;  // why not available
};

struct CampaignResult {
  CampaignOptions options;
  std::vector<BackendStatus> backends;
  std::vector<PropertyOutcome> properties;
  double seconds = 0.0;
  bool passed() const;  // every property that ran held
};

// The properties the options select (ops, backend, property name); throws std::invalid_argument
// naming the known values when --op or --property match nothing.
std::vector<Property> select_properties(const std::vector<Property>& all, const CampaignOptions& o);
// Runs `props` (already selected): one line per property, then the summary table and the backend
// lines; saves failing calls to the corpus and writes the report when asked.
CampaignResult run_campaign(const std::vector<Property>& props, const CampaignOptions& o,
                            std::vector<BackendStatus> backends, std::ostream& log);
// all_properties() with the CUDA backend's availability: what `kparity fuzz` runs.
CampaignResult run_campaign(const CampaignOptions& o, std::ostream& log);
// The repro command of a failed outcome.
std::string repro_command(const PropertyOutcome& o, const CampaignOptions& options);

// The reference of `op` run on arguments by name: the op table's dispatch (ops/op_table.hpp).
using ops::run_reference;

// |a - b| <= atol + rtol * |b| elementwise over equal shapes; on failure returns a description of
// the worst element (index, both values, the bound), else an empty string.
std::string compare_close(const TensorView& actual, const TensorView& expected, double atol, double rtol);
bool all_finite(const TensorView& v);

}  // namespace kparity::fuzz
