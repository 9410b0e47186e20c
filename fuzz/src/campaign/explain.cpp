// The explain step after shrinking (campaign/explain.hpp): the knobs of the shrunk call tried one
// value at a time, round-robin (every knob gets its nearest value before any gets its second), so
// a budget that runs out leaves the far values untried rather than whole knobs.
#include "kparity/fuzz/campaign/explain.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "kparity/fuzz/backends/findings.hpp"

namespace kparity::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string joined(const std::vector<std::string>& xs, std::string_view sep) {
  std::string s;
  for (const auto& x : xs) s += (s.empty() ? "" : std::string(sep)) + x;
  return s;
}

std::string display(const CallVerdict& v) {
  std::string s(failure_class_name(v.cls));
  if (!v.tensor.empty()) s += " in `" + v.tensor + "`";
  if (!v.message.empty()) s += ": " + v.message;
  return s;
}

// The knob's verdict from what its trials gave, and the sentence for people. A single passing
// variant does not make a knob needed: a variant can hide a slip without removing it (a +inf sink
// zeroes every output, a larger D drowns one key's weight). Needed: every value tried passed (an
// unordered knob), or the values split at a threshold next to the shrunk call's value, all passing
// on one side and all failing on the other (an ordered one). Free: the failure held for most.
void settle(KnobResult& k, const Knob& knob) {
  std::vector<std::string> pass, fail;
  for (const auto& t : k.tried) {
    if (t.outcome == "passes") pass.push_back(t.value);
    else if (t.outcome == "fails") fail.push_back(t.value);
  }
  if (k.tried.empty()) {
    k.verdict = "unreached";
    return;
  }
  if (!pass.empty() && knob.ordered) {
    // Each side of the shrunk value on its own: a clean split (every passing value beyond every
    // failing one) is a threshold. The far side may pass again for another reason (a slip that
    // drops one of n keys weighs 1/n, and the bound grows with n), which does not undo it.
    const double x = knob.numeric;
    struct Side {
      bool clean = false;
      double pass = 0, fail = 0;
    };
    const auto side = [&](int dir) {
      Side sd;
      double near_pass = dir < 0 ? -INFINITY : INFINITY, far_fail = dir < 0 ? INFINITY : -INFINITY;
      for (const auto& p : pass) {
        const double v = std::stod(p);
        if ((v - x) * dir > 0 && std::fabs(v - x) < std::fabs(near_pass - x)) near_pass = v;
      }
      if (std::isinf(near_pass)) return sd;
      double threshold = x;  // the failing value nearest the passing ones, on this side
      bool clean = true;
      for (const auto& f : fail) {
        const double v = std::stod(f);
        if ((v - x) * dir <= 0) continue;
        if (std::fabs(v - x) > std::fabs(near_pass - x)) clean = false;
        else if (std::fabs(v - x) > std::fabs(threshold - x)) threshold = v;
      }
      for (const auto& p : pass) {
        const double v = std::stod(p);
        if ((v - x) * dir > 0 && std::fabs(v - x) < std::fabs(threshold - x)) clean = false;
      }
      (void)far_fail;
      sd.clean = clean;
      sd.pass = near_pass;
      sd.fail = threshold;
      return sd;
    };
    const Side lo = side(-1), hi = side(1);
    if (lo.clean || hi.clean) {
      // Both sides clean: the lower threshold ("keys >= 5"), the upper one said too. A slip's
      // effect that shrinks as a size grows (one of n keys weighs 1/n) passes again far above;
      // a failure only below a size ("D <= 15") has no clean lower side.
      const bool use_lo = lo.clean;
      const Side& sd = use_lo ? lo : hi;
      k.verdict = "needed";
      k.nearest_pass = fmt::format("{:g}", sd.pass);
      k.says = fmt::format("{} {} {:g} (passes with {}{})", k.name, use_lo ? ">=" : "<=", sd.fail, k.nearest_pass,
                           use_lo && hi.clean ? fmt::format("; passes again from {:g}", hi.pass) : "");
      return;
    }
  } else if (!pass.empty() && fail.empty()) {
    k.verdict = "needed";
    k.nearest_pass = pass.front();
    k.says = fmt::format("{} = {} (passes with {})", k.name, k.value, joined(pass, ", "));
    return;
  }
  k.nearest_pass.clear();
  if (!fail.empty() && fail.size() >= pass.size()) {
    k.verdict = "free";
    k.says = fmt::format("{}: fails with {}, {}", k.name, k.value, joined(fail, ", "));
    if (!pass.empty()) k.says += " (passes with " + joined(pass, ", ") + ", which hides it)";
    return;
  }
  k.verdict = "unclear";
  k.says = k.name + (pass.empty() ? ": no variant failed the same way or passed" : ": passes with " + joined(pass, ", ") + ", fails with " + (fail.empty() ? std::string("no other value") : joined(fail, ", ")));
}

// The next trial of a knob (nullopt: nothing left worth trying). Unordered knobs: the values in
// order until one fails. Ordered ones: the neighbours of the shrunk call's value and the extremes first, then a
// bisection on each side between the nearest passing value and the failing ones, so a threshold
// far from the shrunk value (15 keys, failing from 5) is found in a few trials.
std::optional<std::size_t> next_trial(const Knob& k, const std::vector<std::string>& outcome) {
  const std::size_t n = k.trials.size();
  const auto untried = [&](std::size_t j) { return outcome[j].empty(); };
  if (!k.ordered) {
    // One value that still fails shows the knob is not needed: the rest would only widen the range.
    for (std::size_t j = 0; j < n; ++j)
      if (outcome[j] == "fails") return std::nullopt;
    for (std::size_t j = 0; j < n; ++j)
      if (untried(j)) return j;
    return std::nullopt;
  }
  std::vector<double> v(n);
  for (std::size_t j = 0; j < n; ++j) v[j] = std::stod(k.trials[j].value);
  const double x = k.numeric;
  std::optional<std::size_t> below, above, lo, hi;
  for (std::size_t j = 0; j < n; ++j) {
    if (v[j] < x && (!below || v[j] > v[*below])) below = j;
    if (v[j] > x && (!above || v[j] < v[*above])) above = j;
    if (!lo || v[j] < v[*lo]) lo = j;
    if (!hi || v[j] > v[*hi]) hi = j;
  }
  for (const auto& j : {below, above, lo, hi})
    if (j && untried(*j)) return *j;
  // Each side: between the passing value nearest x and the failing value nearest it toward x.
  for (const int side : {-1, 1}) {
    double pass = side < 0 ? -INFINITY : INFINITY, fail = x;
    for (std::size_t j = 0; j < n; ++j)
      if (outcome[j] == "passes" && (side < 0 ? v[j] < x && v[j] > pass : v[j] > x && v[j] < pass)) pass = v[j];
    if (std::isinf(pass)) continue;
    for (std::size_t j = 0; j < n; ++j)
      if (outcome[j] == "fails" && (side < 0 ? v[j] > pass && v[j] < fail : v[j] < pass && v[j] > fail)) fail = v[j];
    std::vector<std::size_t> between;
    for (std::size_t j = 0; j < n; ++j)
      if (untried(j) && v[j] > std::min(pass, fail) && v[j] < std::max(pass, fail)) between.push_back(j);
    std::sort(between.begin(), between.end(), [&](std::size_t a, std::size_t b) { return v[a] < v[b]; });
    if (!between.empty()) return between[between.size() / 2];
  }
  return std::nullopt;
}

}  // namespace

bool same_failure(const CallVerdict& v, const FindingSignature& f) {
  return v.failed && v.cls == f.cls && v.tensor == f.tensor && v.kind == f.kind && v.message == f.message;
}

namespace {

// Whether b's evidence contradicts knob k of a being needed: b's call fails at k's passing value.
bool contradicts(const KnobResult& k, const Explanation& b) {
  for (const auto& o : b.knobs) {
    if (o.name != k.name) continue;
    if (o.value == k.nearest_pass) return true;  // b's own call fails there
    for (const auto& t : o.tried)
      if (t.value == k.nearest_pass && t.outcome == "fails") return true;
  }
  return false;
}

// a's needed knobs that b's evidence does not contradict, as "name|nearest pass", sorted.
std::vector<std::string> core(const Explanation& a, const Explanation& b) {
  std::vector<std::string> out;
  for (const auto& k : a.knobs) {
    if (k.verdict == "needed" && !contradicts(k, b)) out.push_back(k.name + "|" + k.nearest_pass);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

void refine(Explanation& e, const Explanation& other) {
  if (!e.ran || !other.ran) return;
  for (auto& k : e.knobs)
    if (k.verdict == "needed" && contradicts(k, other)) {
      k.verdict = "free";
      k.says += fmt::format("; but another call of this bug fails with {} = {}", k.name, k.nearest_pass);
      k.nearest_pass.clear();
    }
}

bool same_bug(const Explanation& a, const Explanation& b) {
  if (!a.ran || !b.ran) return false;
  const auto ca = core(a, b), cb = core(b, a);
  std::vector<std::string> both;
  std::set_intersection(ca.begin(), ca.end(), cb.begin(), cb.end(), std::back_inserter(both));
  return !both.empty();
}

nlohmann::json KnobResult::to_json() const {
  nlohmann::json tried_j = nlohmann::json::array();
  for (const auto& t : tried) tried_j.push_back({{"value", t.value}, {"outcome", t.outcome}});
  nlohmann::json j = {{"name", name}, {"value", value}, {"tried", tried_j}, {"says", says}};
  if (!nearest_pass.empty()) j["nearest_pass"] = nearest_pass;
  return j;
}

std::vector<std::string> Explanation::needed_names() const {
  std::vector<std::string> n;
  for (const auto& k : knobs)
    if (k.verdict == "needed") n.push_back(k.name);
  return n;
}

std::string Explanation::needed_key() const {
  std::vector<std::string> n;
  for (const auto& k : knobs)
    if (k.verdict == "needed") n.push_back(k.name + "|" + k.nearest_pass);
  std::sort(n.begin(), n.end());
  return joined(n, ";");
}

std::string Explanation::line() const {
  if (!ran) return "";
  std::vector<std::string> needed, free, unreached;
  for (const auto& k : knobs) {
    if (k.verdict == "needed") needed.push_back(k.says);
    else if (k.verdict == "free") free.push_back(k.name);
    else if (k.verdict == "unreached") unreached.push_back(k.name);
  }
  std::string s = needed.empty() ? "no single change made it pass" : "needs " + joined(needed, ", ");
  if (!free.empty()) s += "; free: " + joined(free, ", ");
  if (!unreached.empty()) s += "; budget ran out before " + joined(unreached, ", ");
  return s;
}

nlohmann::json Explanation::to_json() const {
  nlohmann::json j = {{"needed", nlohmann::json::array()}, {"free", nlohmann::json::array()},
                      {"unclear", nlohmann::json::array()}, {"unreached", nlohmann::json::array()}};
  for (const auto& k : knobs) j[k.verdict].push_back(k.to_json());
  j["line"] = line();
  j["first_bad"] = first_bad;
  j["provenance"] = provenance;
  j["trials"] = trials;
  j["seconds"] = seconds;
  j["provenance_seconds"] = provenance_seconds;
  j["out_of_budget"] = out_of_budget;
  return j;
}

namespace {

// The bad elements of a failing variant (Knob::locate), beside the shrunk call's: provenance "at"
// {knob, value, provenance}, and its "where" appended to the first-bad line.
void locate_variant(Explanation& ex, const std::string& knob, const std::string& value, const Call& variant,
                    const CallVerdict& v) {
  if (!ex.provenance.is_object() || ex.provenance.contains("at")) return;
  std::string line;
  nlohmann::json p;
  const auto t0 = Clock::now();
  try {
    p = provenance(variant, v, line, /*by_chunk=*/true);
  } catch (const std::exception&) {
    p = nullptr;  // the shrunk call's provenance stands alone
  }
  ex.provenance_seconds += since(t0);
  if (!p.is_object()) return;
  ex.provenance["at"] = {{"knob", knob}, {"value", value}, {"provenance", p}};
  ex.first_bad += fmt::format("; with {} {}: {}", knob, value, p.value("where", std::string("?")));
}

}  // namespace

namespace {

// The step itself. `known`: the failure the finding was found with; null: the one the shrunk call
// shows when it is run once more here.
Explanation explain_run(const Call& shrunk, const FindingSignature* known, const CallCheck& check,
                        const ExplainOptions& options, std::uint64_t seed) {
  Explanation ex;
  if (options.seconds <= 0 || !check) return ex;
  ex.ran = true;
  const auto t0 = Clock::now();
  // The shrunk call once more: the three runs the provenance reads, and a check that the failure
  // still shows outside RapidCheck (a flaky one cannot be explained by variants).
  CallVerdict base;
  try {
    base = check(shrunk);
  } catch (const std::exception& e) {
    base.skipped = std::string("not judged: ") + e.what();
  }
  ++ex.trials;
  if (base.failed && base.oracle) {
    const auto p0 = Clock::now();
    try {
      ex.provenance = provenance(shrunk, base, ex.first_bad);
    } catch (const std::exception& e) {
      ex.first_bad = std::string("no provenance: ") + e.what();
    }
    ex.provenance_seconds = since(p0);
  }
  FindingSignature failure;
  if (known) failure = *known;
  else failure.cls = base.cls, failure.tensor = base.tensor, failure.kind = base.kind, failure.message = base.message;
  if (!same_failure(base, failure)) {
    ex.first_bad = ex.first_bad.empty() ? "the shrunk call did not fail the same way when run again" : ex.first_bad;
    ex.seconds = since(t0);
    return ex;
  }
  std::vector<Knob> knobs;
  try {
    knobs = knobs_for(shrunk, seed, ex.provenance);
  } catch (const std::exception& e) {
    ex.first_bad += (ex.first_bad.empty() ? "" : "; ") + std::string("no knobs: ") + e.what();
  }
  ex.knobs.resize(knobs.size());
  for (std::size_t i = 0; i < knobs.size(); ++i)
    ex.knobs[i].name = knobs[i].name, ex.knobs[i].value = knobs[i].value, ex.knobs[i].ordered = knobs[i].ordered;
  // Round-robin over the knobs, one trial each per round, until each knob has no value left worth
  // trying (next_trial) or the budget is spent.
  std::vector<std::vector<std::string>> outcome(knobs.size());
  for (std::size_t i = 0; i < knobs.size(); ++i) outcome[i].resize(knobs[i].trials.size());
  std::vector<bool> done(knobs.size(), false);
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t i = 0; i < knobs.size(); ++i) {
      if (done[i]) continue;
      const std::optional<std::size_t> pick = next_trial(knobs[i], outcome[i]);
      if (!pick) {
        done[i] = true;
        continue;
      }
      if (ex.trials >= options.max_trials || since(t0) >= options.seconds) {
        ex.out_of_budget = true;
        break;
      }
      const Trial& t = knobs[i].trials[*pick];
      progress = true;
      KnobResult::Tried tried{t.value, ""};
      std::optional<Call> variant;
      try {
        variant = t.make();
      } catch (const std::exception& e) {
        tried.outcome = std::string("skipped: ") + e.what();
      }
      if (tried.outcome.empty() && !variant) {
        outcome[i][*pick] = "n/a";  // this value does not apply here
        continue;
      }
      if (tried.outcome.empty()) {
        ++ex.trials;
        CallVerdict v;
        try {
          v = check(*variant);
        } catch (const std::exception& e) {  // the references refused the variant: not a call to judge
          v.skipped = std::string("not judged: ") + e.what();
        }
        if (!v.skipped.empty()) tried.outcome = "skipped: " + v.skipped;
        else if (!v.failed) tried.outcome = "passes";
        else if (same_failure(v, failure)) tried.outcome = "fails";
        else tried.outcome = "fails otherwise: " + display(v);
        if (knobs[i].locate && tried.outcome == "fails" && v.oracle) locate_variant(ex, knobs[i].name, t.value, *variant, v);
      }
      outcome[i][*pick] = tried.outcome;
      ex.knobs[i].tried.push_back(tried);
    }
    if (ex.out_of_budget) break;
  }
  std::vector<std::size_t> next(knobs.size(), 0);
  for (std::size_t i = 0; i < knobs.size(); ++i)
    for (const auto& o : outcome[i]) next[i] += o.empty() ? 0 : 1;
  for (std::size_t i = 0; i < knobs.size(); ++i) settle(ex.knobs[i], knobs[i]);
  // Knobs without a value to try (nothing applied) say nothing: dropped.
  std::vector<KnobResult> kept;
  for (std::size_t i = 0; i < knobs.size(); ++i)
    if (!ex.knobs[i].tried.empty() || (ex.out_of_budget && next[i] < knobs[i].trials.size()))
      kept.push_back(std::move(ex.knobs[i]));
  ex.knobs = std::move(kept);
  ex.seconds = since(t0);
  return ex;
}

}  // namespace

Explanation explain_finding(const Call& shrunk, const FindingSignature& failure, const CallCheck& check,
                            const ExplainOptions& options, std::uint64_t seed) {
  return explain_run(shrunk, &failure, check, options, seed);
}

Explanation explain_failure(const Call& shrunk, const CallCheck& check, const ExplainOptions& options,
                            std::uint64_t seed) {
  return explain_run(shrunk, nullptr, check, options, seed);
}

}  // namespace kparity::fuzz
