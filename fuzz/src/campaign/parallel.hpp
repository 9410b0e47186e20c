#pragma once
// Private to the campaign: what its sequential loop (campaign.cpp) and its worker processes
// (parallel.cpp) share.
#include <functional>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "kparity/fuzz/campaign/campaign.hpp"

namespace kparity::fuzz {

// How a failure's shrunk call reaches the corpus.
struct FailedCall {
  bool recorded = false;              // the property recorded its call (record_call)
  std::function<std::string()> save;  // saves it and returns the path; throws with the reason
};

// The corpus file name (without .safetensors) and the kparity.* metadata of a failure's dump.
std::string corpus_stem(const PropertyOutcome& o);
std::map<std::string, std::string> corpus_info(const PropertyOutcome& o);
// The run's seed, case budget, RapidCheck settings and shard chunks; the time share is the caller's.
PropertyBudget property_budget(const CampaignOptions& opt);

// The explain step on a failed outcome's shrunk call, when its property has a check and the
// options a budget (campaign.hpp): fills o.explain, where the shrunk call is (this process or a
// worker), before the call is saved or dropped.
void explain_outcome(const Property& p, PropertyOutcome& o, const CampaignOptions& opt);

// Runs `props` in opt.jobs worker processes: with a case budget one task per chunk (results equal
// to one process's), with a time budget one task per property. `finish` sees each property's
// outcome in property order, as soon as all of its chunks up to its first failure are back.
std::vector<PropertyOutcome> run_in_workers(const std::vector<Property>& props, const CampaignOptions& opt,
                                            std::ostream& log,
                                            const std::function<void(PropertyOutcome&, const FailedCall&)>& finish);

}  // namespace kparity::fuzz
