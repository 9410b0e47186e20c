#pragma once
// Several findings per run of an implementation property (issue 24 item 2). When a property fails
// and RapidCheck has shrunk the call, the run goes on with a fresh sub-seed and excludes the
// finding's signature, so that the next distinct failure can show; up to max_findings are kept,
// each shrunk, with its own seed, repro and saved call. Known findings (given by the caller) are
// excluded from the start; one that recurs is counted, not reported.
//
// A signature says what failed, not where: the failure class; for value failures (wrong-values,
// not-deterministic, wrote-outside-outputs) the tensor, the kind of disagreement ("values": beyond
// the bound, "class": NaN/Inf class mismatch) and the shrunk call's edge buckets (the conditions it
// needed: T=0, a sentinel, a -inf sink, NaN in q, ...; descriptive buckets such as dtypes and sizes
// are left out, is_edge_bucket); for raising failures (rejected-valid-call, crashed, bad-return,
// ...) the exception type and message with every number masked ("#"). A failure is a known finding
// again when class, tensor, kind and message agree and the failing call has every edge bucket of the
// finding's shrunk call (shrinking removed everything the failure did not need, so a call with those
// conditions that fails the same way is presumed the same slip).
//
// A case that recurs an excluded finding is counted (FindingCounters::known_hits) and passes
// unjudged, and the run tops its budget up with more cases until the judged ones reach it: a
// wrapper's own rejection of valid calls, once reported, is not reported again and the numerics
// are still tested on the calls it accepts. Calls outside a declared domain
// (ImplPropertyOptions::supports) and calls the implementation declines are redrawn inside the
// case before they count. Everything a case does is a function of its drawn values and of the
// excluded findings, which stay fixed during a check: RapidCheck evaluates a case again while it
// shrinks, and must see the same outcome.
//
// Limitation: two slips that fail the same tensor in the same way on the same minimal call
// cannot be told apart by a signature; the second then counts as the first's recurrence.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/fuzz/backends/failure.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/campaign/runner.hpp"

namespace kparity::fuzz {

struct FindingSignature {
  FailureClass cls = FailureClass::wrong_values;
  std::string tensor;              // value classes: the (first failing) written tensor
  std::string kind;                // wrong-values: "values" or "class"
  std::string message;             // raising classes: "<Type>: <message>", numbers masked
  std::vector<std::string> edges;  // value classes: the call's edge buckets, sorted

  // Canonical and parseable: "<class>|<tensor>|<kind>|<edge>,<edge>|<message>".
  std::string text() const;
  // 8 hex digits of the FNV-1a hash of the failure (class, tensor, kind, message; not the edges):
  // the short form reports print and known= accepts. A run keeps one finding per failure (later
  // rounds that shrink to it under other conditions become its examples), so the id names the
  // finding, and known=<id> accepts the failure under any conditions.
  std::string id() const;
  // One line for people: "wrong-values in out (values) when sentinel, sink=-inf".
  std::string display() const;
  static std::optional<FindingSignature> parse(std::string_view text);
  // Same failure (class, tensor, kind, message), edges ignored.
  bool same_failure(const FindingSignature& f) const;
  // f (with the failing call's edge buckets) is this finding again: same failure, and f has
  // every edge bucket of this one.
  bool covers(const FindingSignature& f) const;
};

// Buckets that name a condition of the call (T=0, sentinel, sink=-inf, special:nan, strided-q,
// padding-row, ...) rather than describe it (dtypes, sizes, value modes, the layout being compact).
bool is_edge_bucket(std::string_view bucket);
// Every number not part of a word replaced by "#" ("must have shape (3,)" -> "must have shape (#,)";
// "int32" and "fp16" stay).
std::string mask_numbers(std::string_view text);

// Counters a property body notes as buckets with this prefix (runner.cpp keeps the notes of
// passing search cases only, as for the edge buckets): @drawn, @outside:<reason>, @declined,
// @known:<id>, @judged. strip_counters moves them out of an outcome's buckets.
inline constexpr char kCounterPrefix = '@';
struct FindingCounters {
  std::int64_t drawn = 0;     // calls the generator drew (inside the domain or not)
  std::int64_t judged = 0;    // cases run and judged (the passing cases of the property)
  std::int64_t declined = 0;  // calls the implementation declined (NotImplementedError, UNSUPPORTED)
  std::map<std::string, std::int64_t> outside;     // calls outside the domain, by reason
  std::map<std::string, std::int64_t> known_hits;  // recurrences of excluded findings, by id
  std::int64_t outside_total() const;
  // Share of drawn calls inside the domain (1 when nothing was drawn).
  double coverage() const;
  void add(const FindingCounters& o);
  nlohmann::json to_json() const;
};
FindingCounters strip_counters(PropertyOutcome& o);

// What one implementation property knows about its findings, shared by its body (which excludes
// and counts) and the run around it (which adds a finding after each failed check).
struct FindingLedger {
  std::vector<FindingSignature> excluded;  // found earlier in this run, or given as known
  std::vector<std::string> known;          // known= entries given as ids (any conditions) or other text
  std::optional<FindingSignature> target;  // the first failure of the current check: shrinking stays on it
  // Set by run_property_findings, which resets `target` before every check: a shrink candidate
  // that fails otherwise than `target` then counts as passing. Off, RapidCheck shrinks as usual.
  bool steer_shrinking = false;
  std::optional<FindingSignature> last;    // the signature of the latest failing case
  // The id of the excluded or known finding that covers f, or "".
  std::string covering(const FindingSignature& f) const;
  // Judges one call as the property does, for the explain step after shrinking (campaign/explain.hpp);
  // empty: the property's findings are not explained (the contract property's hostile calls).
  CallCheck check;
  // What cases counted before RapidCheck discarded them (nothing in the domain to run); the run
  // adds them to its counters.
  FindingCounters discarded_cases;
};

struct FindingRunOptions {
  int max_findings = 5;            // per property
  std::vector<std::string> known;  // signatures (text) or ids of accepted findings
  // The explain step after each finding's shrink (campaign/explain.hpp); seconds <= 0: none. Its
  // needed sets merge findings: one bug, one finding (run_property_findings).
  ExplainOptions explain;
};

struct Finding {
  FindingSignature signature;                // generalised over the examples (below)
  FindingSignature found_as;                 // as its own round found it (what its repro shows)
  PropertyOutcome outcome;                   // the round that found it (seed, repro_cases, message, call)
  std::vector<std::string> excluded_before;  // signatures excluded when it was found (its repro needs them)
  int round = 0;
  std::string saved;                         // the shrunk call's dump, when saved
  // Later rounds whose explain step found the same needed set (issue 33: one bug, one finding,
  // whatever tensor or class it showed in), and later rounds that shrank to the same failure
  // (class, tensor, kind, message) under other conditions when no needed set tells them apart.
  // conditions: each is kept as an example, and the finding's edges become the ones every example
  // has (shrinking removed the rest, so those were incidental). Their own signatures are as found.
  std::vector<Finding> examples;
  Explanation explanation;  // the explain step on the shrunk call (ran = false: none)
  std::string call;         // the shrunk call's description (generators' Call::description)
};

// A finding's message for people: the verdict line, the shrunk call's description and the first
// bad element, without RapidCheck's drawn values (those stay in the report's "debug").
std::string readable_message(const Finding& f);

struct PropertyFindings {
  PropertyOutcome outcome;  // the whole run: cases = judged cases, buckets without counters
  std::vector<Finding> findings;
  FindingCounters counters;
  int rounds = 0;
  std::string stopped;      // why the run ended before its budget ("max findings", "not exercised: ...")
  nlohmann::json to_json() const;  // the extra fields of a report's property entry
};

// Rounds per property at most: each finds a finding or an example of one, or tops the budget up.
int max_finding_rounds(const FindingRunOptions& o);

// The sub-seed of round r (round 0: the seed itself).
std::uint64_t finding_round_seed(std::uint64_t seed, int round);

// One property: rounds of run_property under `budget` (cases: judged cases in all; seconds: the
// rounds share them) until the budget is spent, max_findings are found, or a round fails without
// a finding (gave up: nothing in the domain to check). Saves each finding's call under corpus_dir.
PropertyFindings run_property_findings(const Property& p, FindingLedger& ledger, const PropertyBudget& budget,
                                       const FindingRunOptions& options, const std::string& corpus_dir);

// The campaign of implementation properties with findings (campaign/finding_campaign.cpp): one
// property after the other under the options' budget, a line per property and per finding, the
// summary table, the report (report.hpp's schema, each property with the fields of
// PropertyFindings::to_json, carried in PropertyOutcome::findings). `ledgers` by property name.
// What the plain campaign (campaign.hpp) offers, it offers too:
//   - jobs > 1: the properties in that many worker processes (workers.hpp), one task per property
//     (a property's rounds are sequential: each excludes what the ones before it found), printed
//     in property order; with a case budget the result does not depend on jobs;
//   - a shard i/n: property k is run by shard k % n, and the other shards report it skipped
//     ("run by shard k % n/n"), so that `kparity fuzz merge` takes each property from the shard
//     that ran it (merge.hpp drops skipped runs beside a real one) and the merged report keeps its
//     findings; a shard runs its properties under the whole budget, as a plain shard does.
struct FindingCampaign {
  CampaignResult result;
  nlohmann::json report() const;  // report_json(result): the findings are in its outcomes
};
FindingCampaign run_finding_campaign(const std::vector<Property>& props,
                                     const std::map<std::string, std::shared_ptr<FindingLedger>>& ledgers,
                                     const CampaignOptions& options, const FindingRunOptions& findings,
                                     std::vector<BackendStatus> backends, std::ostream& log);

}  // namespace kparity::fuzz
