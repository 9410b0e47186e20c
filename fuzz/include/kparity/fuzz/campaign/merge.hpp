#pragma once
// `kparity fuzz merge`: the reports of the n shards of one campaign (shard.hpp) put back together.
// With a case budget the result is what one unsharded run with the same seed and budget reports:
// per property the same cases, discards, verdict, buckets, worst errors and repro line.
#include <vector>

#include "kparity/fuzz/campaign/campaign.hpp"

namespace kparity::fuzz {

// Throws std::invalid_argument naming what does not fit: another seed, budget or shard count, a
// shard missing or given twice, a property one shard ran and another did not (their backends
// differ).
CampaignResult merge_shards(const std::vector<CampaignResult>& shards);

}  // namespace kparity::fuzz
