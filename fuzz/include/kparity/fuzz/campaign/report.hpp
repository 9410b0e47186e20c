#pragma once
// What a campaign tells people and machines: the summary table printed at the end of every run and
// the JSON report of `kparity fuzz --report out.json`.
//
// Report layout (one object):
//   seed        the campaign seed, "0x..." (hex string: JSON numbers lose 64-bit integers)
//   budget      {"cases": N} or {"seconds": S}, plus "max_size"
//   jobs        worker processes
//   shard       {"index", "count"}: this run's shard (shard.hpp); a merge has "shards": n instead
//   backends    [{"name", "available", "reason"}]
//   totals      {"properties", "passed", "skipped", "failed", "cases", "seconds"}
//   properties  [{"name", "op", "kind", "backend", "cases", "discarded", "passed", "seed",
//                 "seconds", "cases_per_minute", "buckets": {bucket: count, zero counts included},
//                 "max_errors": {tensor: {"backend", "faithful", "bound", "ratio"}},
//                 "chunks": {"first", "run", "stride"} (the chunks covered, runner.hpp),
//                 "skipped": why, for a property that could not run here (0 cases, passed),
//                 and for a failure "message" (readable_message below), "debug" (RapidCheck's
//                 full text, drawn values included), "repro", "repro_cases", "saved",
//                 "explain": the explain step's object (explain.hpp, README), when it ran;
//                 a run with several findings (backends/findings.hpp) adds "findings",
//                 "coverage", "rounds", "stopped" to every property}]
// A property's "seconds" add up the time of the workers that ran it, so "cases_per_minute" is the
// pace of one worker; "totals.seconds" is the campaign's wall-clock time.
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "kparity/fuzz/campaign/campaign.hpp"

namespace kparity::fuzz {

nlohmann::json report_json(const CampaignResult& r);
// Writes report_json(r) to `path` (indented); throws std::runtime_error when it cannot.
void write_report(const CampaignResult& r, const std::string& path);
// One entry of "properties", and back (failing_call is not part of it).
nlohmann::json outcome_json(const PropertyOutcome& o);
PropertyOutcome outcome_from_json(const nlohmann::json& j);
// A failed property's message as people read it (issue 33): RapidCheck's text (PropertyOutcome::
// message, kept whole in the report's "debug") without the failing macro's file and line and
// without the drawn values; the call's description, the log's first line, as "call: ..."; and,
// with `first_bad`, the explain step's first bad element. A text of another form comes back as is.
std::string readable_message(const PropertyOutcome& o, bool first_bad = true);
// A report read back; throws std::runtime_error naming the file and what is wrong.
CampaignResult read_report(const std::string& path);

// One line per property (plain; the campaign prints them as it goes).
std::string outcome_line(const PropertyOutcome& o);
// The table (skipped properties with the result "skip"), then one line per unavailable backend
// ("cuda: skipped, no CUDA device") and per skip reason ("10 properties skipped (cuda: no CUDA
// device)"), then the verdict line ("N of M properties held (K more skipped)").
void print_summary(const CampaignResult& r, std::ostream& out);

}  // namespace kparity::fuzz
