#pragma once
// The campaign: the selected properties one after the other under a shared budget, a line per
// property, the summary table, failing calls saved to the corpus, the JSON report (report.hpp).
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/campaign/shard.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

struct CampaignOptions {
  std::uint64_t seed = kDefaultSeed;
  std::vector<std::string> ops;  // empty: all; else op names ("kda/packed_decode") or families ("kda")
  // reference | cuda | launcher | control[/<accumulation>] | selftest[/<bug>] | all
  std::string backend = "all";
  std::string property;          // non-empty: exactly this property
  std::optional<int> cases;      // passing cases per property
  std::optional<double> seconds;  // wall-clock budget of the whole campaign, split across properties
  int max_size = 100;
  bool shrink = true;
  bool progress = false;           // a TTY: one line rewritten with \r while a property runs
  std::string corpus_dir = "fuzz/corpus";  // failing calls are saved here; empty: not saved
  std::string report_path;                 // JSON report (report.hpp); empty: none
  // Worker processes (workers.hpp); 1 runs everything in this process. With a case budget the
  // result is the same for every value; with a time budget each worker runs whole properties.
  int jobs = 1;
  Shard shard;  // this run's share of every property's chunks (shard.hpp)
  std::string repro_args;                  // appended to every repro line (`--impl lib.so`)
  // The explain step after a failed property's shrink (explain.hpp), for properties with a check
  // (Property::check: the differential properties of a backend under test); seconds <= 0: none.
  ExplainOptions explain;
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
  int shards = 0;       // a merge of this many shard reports (merge.hpp); 0: a run
  bool passed() const;  // every property that ran held
};

// The properties the options select (ops, backend, property name); throws std::invalid_argument
// naming the known values when --op or --property match nothing.
std::vector<Property> select_properties(const std::vector<Property>& all, const CampaignOptions& o);
// Runs `props` (already selected): one line per property, then the summary table and the backend
// lines; saves failing calls to the corpus and writes the report when asked.
CampaignResult run_campaign(const std::vector<Property>& props, const CampaignOptions& o,
                            std::vector<BackendStatus> backends, std::ostream& log);
// What `kparity fuzz` runs for `o`, selected, and the backends' status: the CPU properties, the CUDA
// backend's (skipped, with the probe's reason, without a device) and the launchers' (skipped without
// kernels), as o.backend asks; the controls' (backends/reference.hpp) only for --backend control[/x]
// or a --property naming one; the self-test's planted bugs' (selftest.hpp: wrong fake kernels
// without a device) only for --backend selftest[/<bug>] or a --property naming one. With jobs > 1 the CUDA probe runs in a child process, so that the
// workers can use the device.
std::vector<Property> campaign_properties(const CampaignOptions& o, std::vector<BackendStatus>& backends);
// run_campaign(campaign_properties(o), ...).
CampaignResult run_campaign(const CampaignOptions& o, std::ostream& log);
// The repro command of a failed outcome.
std::string repro_command(const PropertyOutcome& o, const CampaignOptions& options);

}  // namespace kparity::fuzz
