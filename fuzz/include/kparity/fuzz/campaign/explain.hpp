#pragma once
// The explain step after shrinking (issue 33). Starting from a finding's shrunk call, vary one
// thing at a time (a knob: a shape parameter of the op's call description, a dtype, a layout, a
// flag, a value family), re-run the implementation and the rule on each variant, and sort every
// knob into
//   needed: a variant passed (the failure went away); the nearest passing value is said,
//   free:   every variant tried failed the same way (the values tried are the range),
//   unclear: the variants failed otherwise (another failure) or could not be run,
//   unreached: the budget ran out before any variant of it ran.
// Then the first bad element of the failing tensor with its provenance (explain_provenance.cpp).
//
// The variants are built from the shrunk call alone (never from RapidCheck's draws), each with
// fresh values from a seed derived from the call's content, so the step is deterministic for a
// seed as long as the trial cap (not the time budget) ends it. Each variant runs through the same
// CallCheck as the property (the backend with its isolation and time limit, the rule), so a crash
// or hang costs one trial, not the campaign.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/failure.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::fuzz {

struct FindingSignature;  // backends/findings.hpp

// One run of a call on the implementation under test, judged as the property judges it.
struct CallVerdict {
  bool failed = false;
  FailureClass cls = FailureClass::wrong_values;  // when failed
  std::string tensor, kind, message;              // as FindingSignature has them (edges aside)
  std::string skipped;  // non-empty: not judged (outside the domain, declined, an invalid variant)
  std::string detail;   // the rule's line, or the failure's message
  // For a differential verdict: the three runs (the provenance step reads them).
  std::optional<Call> oracle, faithful, backend;
};
using CallCheck = std::function<CallVerdict(const Call&)>;

// One value of a knob: the variant call (nullopt: this value does not apply to the call).
struct Trial {
  std::string value;
  std::function<std::optional<Call>()> make;
};

// One thing to vary. `trials` are nearest first: the first passing one is the nearest passing value.
struct Knob {
  std::string name;   // as the call description names it: "keys", "H", "D", "T", "dtype", "q layout", "sink", ...
  std::string value;  // the shrunk call's
  bool ordered = false;  // numeric: the explanation says "keys >= 5" when the passing values lie on one side
  double numeric = 0;    // the shrunk call's value when ordered
  std::vector<Trial> trials;
  // The first variant of this knob that fails the same way is located too (provenance "at"): a
  // longer KDA sequence shows which chunk of it goes bad, which the shrunk call's one token cannot.
  bool locate = false;
};

// The knobs of an op's call (explain_sparse.cpp; explain_generic.cpp for the others), around the
// first bad element that `provenance` (below) found.
std::vector<Knob> knobs_for(const Call& call, std::uint64_t seed, const nlohmann::json& provenance);

struct ExplainOptions {
  double seconds = 3.0;  // wall-clock budget of one finding's explain step (<= 0: no explain step)
  int max_trials = 64;   // variants run at most (this, not the clock, ends the step on small calls)
};

struct KnobResult {
  std::string name, value;
  bool ordered = false;
  std::string verdict;  // "needed", "free", "unclear", "unreached"
  struct Tried {
    std::string value;
    std::string outcome;  // "fails", "passes", "fails otherwise: <display>", "skipped: <why>"
  };
  std::vector<Tried> tried;
  std::string nearest_pass;  // needed: the passing value nearest the shrunk call's
  std::string says;          // for people: "keys >= 5 (passes with 4)", "sink=+inf (passes with finite)"
  nlohmann::json to_json() const;
};

struct Explanation {
  bool ran = false;
  std::vector<KnobResult> knobs;  // in the order tried
  nlohmann::json provenance;      // the first bad element and where the bad elements are (may be null)
  std::string first_bad;          // one line of it
  int trials = 0;
  double seconds = 0.0;
  double provenance_seconds = 0.0;  // of `seconds`: locating the bad elements (the rule, no implementation run)
  bool out_of_budget = false;
  std::vector<std::string> needed_names() const;
  // What merging compares: every needed knob with its nearest passing value, sorted; "" if none.
  std::string needed_key() const;
  // One line: "needs keys >= 5 (passes with 4); free: H, D, T, dtype, layout".
  std::string line() const;
  // {"needed": [...], "free": [...], "unclear": [...], "unreached": [...], "line", "first_bad",
  //  "provenance", "trials", "seconds", "provenance_seconds", "out_of_budget"} (README, "The explain object").
  nlohmann::json to_json() const;
};

// Whether two findings' explanations name one bug (findings.hpp merges them). A variant can hide a
// slip without removing it, so a knob one explanation calls needed is dropped when the other's
// evidence contradicts it (the other call fails at that knob's passing value, or is that value);
// the two are one bug when what is left of both shares a knob passing at the same value (a slip
// met in two calls can carry a knob the other call's evidence cannot rule out).
bool same_bug(const Explanation& a, const Explanation& b);

// `other` explains another call of the same bug (merged into this finding): a knob `e` calls needed
// that `other`'s evidence contradicts is free after all (its passing variant hid the slip).
void refine(Explanation& e, const Explanation& other);

// Whether verdict v is the finding's failure again (same class, tensor, kind and message).
bool same_failure(const CallVerdict& v, const FindingSignature& f);

// The explain step on one finding (`check` judges a call as the property does; `shrunk` failed
// with `failure`). `seed`: where the variants' fresh values come from.
Explanation explain_finding(const Call& shrunk, const FindingSignature& failure, const CallCheck& check,
                            const ExplainOptions& options, std::uint64_t seed);

// The explain step on a failing call whose failure is not known beforehand (kparity's own campaign,
// campaign.hpp: its properties keep no signature): the failure is what `shrunk` fails with when it
// is run once more, and the explanation says so when it does not fail again.
Explanation explain_failure(const Call& shrunk, const CallCheck& check, const ExplainOptions& options,
                            std::uint64_t seed);

// The first bad element of `tensor` and where the bad ones are, from the three runs of `call`
// (explain_provenance.cpp): token/head/channel and the selected keys for sparse ops; sequence,
// position and chunk for KDA. Null when nothing is bad or the runs are missing. `by_chunk` (a
// located variant, Knob::locate): for kda/recurrent and kda/chunk, past the first bad element each
// chunk of each sequence is judged whole (which chunks are bad, in a few judgements; the count is
// then approximate).
nlohmann::json provenance(const Call& call, const CallVerdict& verdict, std::string& line, bool by_chunk = false);

// The check of a differential or determinism property of an implementation (explain_check.cpp):
// runs `backend` on the call (its isolation and time limit), then the rule under `profile` (none:
// the thread's current profile when the check runs, as kparity's own differential properties judge).
// `adapt` and `supports` (optional) as in ImplPropertyOptions: a variant outside them is skipped.
struct OpFuzzSpec;
CallCheck implementation_check(const OpFuzzSpec& spec, const Backend& backend, const std::string& kind,
                               std::optional<reference::PrecisionProfile> profile, std::function<bool(Call&)> adapt,
                               std::function<std::string(const Call&)> supports);

}  // namespace kparity::fuzz
