// Shard reports merged into the campaign's (merge.hpp).
#include "kparity/fuzz/campaign/merge.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kparity::fuzz {
namespace {

std::string budget_text(const CampaignOptions& o) {
  return o.seconds ? fmt::format("{:g} s", *o.seconds) : fmt::format("{} cases", o.cases.value_or(100));
}

}  // namespace

CampaignResult merge_shards(const std::vector<CampaignResult>& shards) {
  if (shards.empty()) throw std::invalid_argument("no reports to merge");
  const CampaignOptions& first = shards.front().options;
  const int n = first.shard.count;
  std::vector<int> seen(static_cast<std::size_t>(n), 0);
  for (const auto& s : shards) {
    const CampaignOptions& o = s.options;
    if (s.shards > 0) throw std::invalid_argument("a report is already a merge of shards; merge the shard reports");
    if (o.seed != first.seed || o.cases != first.cases || o.seconds != first.seconds || o.max_size != first.max_size)
      throw std::invalid_argument(fmt::format("the reports are of different campaigns: seed 0x{:x}, {}, max size {} "
                                              "against seed 0x{:x}, {}, max size {}",
                                              o.seed, budget_text(o), o.max_size, first.seed, budget_text(first),
                                              first.max_size));
    if (o.shard.count != n)
      throw std::invalid_argument(fmt::format("shard {}/{} and shard {}/{} split the campaign differently",
                                              o.shard.index, o.shard.count, first.shard.index, n));
    ++seen[static_cast<std::size_t>(o.shard.index)];
  }
  std::vector<int> missing, repeated;
  for (int i = 0; i < n; ++i) {
    if (seen[static_cast<std::size_t>(i)] == 0) missing.push_back(i);
    if (seen[static_cast<std::size_t>(i)] > 1) repeated.push_back(i);
  }
  if (!repeated.empty())
    throw std::invalid_argument(fmt::format("shard(s) {} of {} given more than once", fmt::join(repeated, ", "), n));
  if (!missing.empty())
    throw std::invalid_argument(fmt::format("shard(s) {} of {} missing: a merge needs every shard's report",
                                            fmt::join(missing, ", "), n));

  CampaignResult m;
  m.options = first;
  m.options.shard = {};
  m.options.jobs = 0;
  m.shards = n;
  std::map<std::string, std::vector<PropertyOutcome>> runs;
  std::vector<std::string> order;
  for (const auto& p : shards.front().properties) order.push_back(p.name);
  for (const auto& s : shards) {
    m.seconds = std::max(m.seconds, s.seconds);  // the shards ran side by side
    m.options.jobs = std::max(m.options.jobs, s.options.jobs);
    if (s.properties.size() != order.size())
      throw std::invalid_argument(fmt::format("shard {} ran {} properties, shard {} ran {} (do their backends differ?)",
                                              s.options.shard.index, s.properties.size(), first.shard.index,
                                              order.size()));
    for (const auto& p : s.properties) {
      if (std::find(order.begin(), order.end(), p.name) == order.end())
        throw std::invalid_argument(fmt::format("shard {} ran {}, which shard {} did not", s.options.shard.index,
                                                p.name, first.shard.index));
      runs[p.name].push_back(p);
    }
  }
  for (const auto& name : order) m.properties.push_back(merge_chunk_runs(runs.at(name)));
  // A backend counts as available when every shard had it.
  m.backends = shards.front().backends;
  for (const auto& s : shards)
    for (const auto& b : s.backends)
      for (auto& mb : m.backends)
        if (mb.name == b.name && mb.available && !b.available) mb = b;
  return m;
}

}  // namespace kparity::fuzz
