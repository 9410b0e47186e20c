#pragma once
// What a campaign tells people and machines: the summary table printed at the end of every run and
// the JSON report of `kparity fuzz --report out.json`.
//
// Report layout (one object):
//   seed        the campaign seed, "0x..." (hex string: JSON numbers lose 64-bit integers)
//   budget      {"cases": N} or {"seconds": S}, plus "max_size"
//   backends    [{"name", "available", "reason"}]
//   totals      {"properties", "passed", "failed", "cases", "seconds"}
//   properties  [{"name", "op", "kind", "backend", "cases", "discarded", "passed", "seed",
//                 "seconds", "cases_per_minute", "buckets": {bucket: count, zero counts included},
//                 "max_errors": {tensor: {"backend", "faithful", "bound", "ratio"}},
//                 and for a failure "message", "repro", "saved"}]
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "kparity/fuzz/campaign/campaign.hpp"

namespace kparity::fuzz {

nlohmann::json report_json(const CampaignResult& r);
// Writes report_json(r) to `path` (indented); throws std::runtime_error when it cannot.
void write_report(const CampaignResult& r, const std::string& path);

// One line per property (plain; the campaign prints them as it goes).
std::string outcome_line(const PropertyOutcome& o);
// The table, then one line per unavailable backend ("cuda: skipped, no CUDA device"), then the
// verdict line.
void print_summary(const CampaignResult& r, std::ostream& out);

}  // namespace kparity::fuzz
