// Several findings per run of an implementation property (findings.hpp).
#include "kparity/fuzz/backends/findings.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <chrono>
#include <ostream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "../campaign/parallel.hpp"
#include "kparity/core/random.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"

namespace kparity::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Value failures: where (tensor) and under which conditions (edges) say which slip it is.
bool value_class(FailureClass c) {
  return c == FailureClass::wrong_values || c == FailureClass::not_deterministic ||
         c == FailureClass::wrote_outside_outputs;
}

void keep_worst(ErrorStat& s, const ErrorStat& e) {
  s.backend = std::max(s.backend, e.backend);
  s.faithful = std::max(s.faithful, e.faithful);
  s.bound = std::max(s.bound, e.bound);
  s.ratio = std::max(s.ratio, e.ratio);
}

}  // namespace

// ---- signatures ------------------------------------------------------------------------------

std::string FindingSignature::text() const {
  std::string e;
  for (const auto& x : edges) e += (e.empty() ? "" : ",") + x;
  return fmt::format("{}|{}|{}|{}|{}", failure_class_name(cls), tensor, kind, e, message);
}

std::string FindingSignature::id() const {
  std::uint64_t h = 1469598103934665603ull;
  const std::string failure = fmt::format("{}|{}|{}|{}", failure_class_name(cls), tensor, kind, message);
  for (unsigned char ch : failure) h = (h ^ ch) * 1099511628211ull;
  return fmt::format("{:08x}", static_cast<std::uint32_t>((h >> 32) ^ h));
}

std::string FindingSignature::display() const {
  std::string s(failure_class_name(cls));
  if (!tensor.empty()) s += " in `" + tensor + "`";
  if (kind == "values") s += " (beyond the bound)";
  if (kind == "class") s += " (NaN/Inf class)";
  if (!message.empty()) s += ": " + message;
  if (value_class(cls)) {
    std::string e;
    for (const auto& x : edges) e += (e.empty() ? "" : ", ") + x;
    s += e.empty() ? " on plain calls" : " with " + e;
  }
  return s;
}

std::optional<FindingSignature> FindingSignature::parse(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t at = 0;
  for (int i = 0; i < 4; ++i) {
    const std::size_t bar = text.find('|', at);
    if (bar == std::string_view::npos) return std::nullopt;
    parts.push_back(text.substr(at, bar - at));
    at = bar + 1;
  }
  parts.push_back(text.substr(at));
  const auto cls = parse_failure_class(parts[0]);
  if (!cls) return std::nullopt;
  FindingSignature s;
  s.cls = *cls;
  s.tensor = std::string(parts[1]);
  s.kind = std::string(parts[2]);
  for (std::size_t b = 0; b < parts[3].size();) {
    const std::size_t comma = std::min(parts[3].find(',', b), parts[3].size());
    s.edges.emplace_back(parts[3].substr(b, comma - b));
    b = comma + 1;
  }
  std::sort(s.edges.begin(), s.edges.end());
  s.message = std::string(parts[4]);
  return s;
}

bool FindingSignature::same_failure(const FindingSignature& f) const {
  return cls == f.cls && tensor == f.tensor && kind == f.kind && message == f.message;
}

bool FindingSignature::covers(const FindingSignature& f) const {
  return same_failure(f) && std::includes(f.edges.begin(), f.edges.end(), edges.begin(), edges.end());
}

bool is_edge_bucket(std::string_view b) {
  if (b.empty() || b.front() == kCounterPrefix) return false;
  // Descriptions: dtypes, sizes and tile positions, value modes, the plain forms of options. What
  // is left names a condition a slip may need (empty, sentinel, padding, special value, strided,
  // absent tensor, forced flush, ...).
  static const std::set<std::string_view> plain = {
      "bf16", "f16", "T=1", "T>1", "H=1", "N=1", "N>1", "B=1", "B>1", "K=V", "K!=V", "HV>12", "HV<=12", "D=1",
      "D=512", "D-tail", "H=tile", "H=tile±1", "list-len=tile±1", "int-values", "wide-values", "lse", "no-lse",
      "layout=compact", "tensors=compact", "layout=dense", "layout=varlen", "l2norm=on", "l2norm=off",
      "gate=softplus", "gate=bounded", "gate=in-kernel", "beta=logits", "beta=probs", "beta=through-b", "beta=fp32",
      "beta=sigmoid-in-kernel", "a=2d", "a=3d", "dt_bias=1d", "dt_bias=2d", "sink=0", "window", "all-rows",
      "i64-index", "append-row", "cursor=mid", "force=absent", "special-values"};
  if (plain.count(b)) return false;
  for (std::string_view p : {"values=", "gqa=", "K=", "V=", "L=", "act=", "gate_dt=", "params=", "state=", "ring=",
                             "final=", "indices=", "cu_seqlens=", "seqlen=", "chunk_size="})
    if (starts_with(b, p)) return false;
  return true;
}

std::string mask_numbers(std::string_view t) {
  std::string out;
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t i = 0; i < t.size();) {
    if (!digit(t[i]) || (i > 0 && word(t[i - 1]))) {
      out += t[i++];
      continue;
    }
    if (t[i] == '0' && i + 1 < t.size() && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
      i += 2;
      while (i < t.size() && std::isxdigit(static_cast<unsigned char>(t[i]))) ++i;
    } else {
      while (i < t.size() && digit(t[i])) ++i;
      if (i + 1 < t.size() && t[i] == '.' && digit(t[i + 1]))
        for (++i; i < t.size() && digit(t[i]);) ++i;
      if (i + 1 < t.size() && (t[i] == 'e' || t[i] == 'E')) {
        std::size_t j = i + 1;
        if (j < t.size() && (t[j] == '+' || t[j] == '-')) ++j;
        if (j < t.size() && digit(t[j])) {
          i = j;
          while (i < t.size() && digit(t[i])) ++i;
        }
      }
    }
    out += '#';
  }
  return out;
}

std::string FindingLedger::covering(const FindingSignature& f) const {
  for (const auto& e : excluded)
    if (e.covers(f)) return e.id();
  const std::string id = f.id(), text = f.text();
  for (const auto& k : known)
    if (k == id || k == text) return id;
  return "";
}

std::string readable_message(const Finding& f) {
  // RapidCheck's text: "Falsifiable after ..." lines, the failure (RC_FAIL's message, starting
  // with the class tag), the logged lines (the call's description, the rule's line), then the
  // drawn values. The tagged line is the verdict.
  const std::string& raw = f.outcome.message;
  std::string verdict;
  std::istringstream lines(raw);
  for (std::string line; std::getline(lines, line);) {
    const std::size_t at = line.find("[" + std::string(failure_class_name(f.found_as.cls)) + "] ");
    if (at != std::string::npos) {
      verdict = line.substr(at);
      break;
    }
  }
  if (verdict.empty()) return raw;
  std::string out = verdict;
  if (!f.call.empty()) out += "\ncall: " + f.call;
  if (!f.explanation.first_bad.empty()) out += "\n" + f.explanation.first_bad;
  return out;
}

// ---- counters --------------------------------------------------------------------------------

std::int64_t FindingCounters::outside_total() const {
  std::int64_t n = 0;
  for (const auto& [r, k] : outside) n += k;
  return n;
}

double FindingCounters::coverage() const {
  return drawn > 0 ? static_cast<double>(drawn - outside_total()) / static_cast<double>(drawn) : 1.0;
}

void FindingCounters::add(const FindingCounters& o) {
  drawn += o.drawn;
  judged += o.judged;
  declined += o.declined;
  for (const auto& [r, k] : o.outside) outside[r] += k;
  for (const auto& [r, k] : o.known_hits) known_hits[r] += k;
}

nlohmann::json FindingCounters::to_json() const {
  return {{"drawn", drawn}, {"inside", drawn - outside_total()}, {"outside", outside_total()},
          {"share", coverage()}, {"outside_reasons", outside}, {"judged", judged}, {"declined", declined},
          {"known_hits", known_hits}};
}

FindingCounters strip_counters(PropertyOutcome& o) {
  FindingCounters c;
  for (auto it = o.buckets.begin(); it != o.buckets.end();) {
    const std::string& b = it->first;
    if (b.empty() || b.front() != kCounterPrefix) {
      ++it;
      continue;
    }
    const std::int64_t n = it->second;
    if (b == "@drawn") c.drawn += n;
    else if (b == "@judged") c.judged += n;
    else if (b == "@declined") c.declined += n;
    else if (starts_with(b, "@outside:")) c.outside[b.substr(9)] += n;
    else if (starts_with(b, "@known:")) c.known_hits[b.substr(7)] += n;
    it = o.buckets.erase(it);
  }
  return c;
}

// ---- one property, several findings ----------------------------------------------------------

std::uint64_t finding_round_seed(std::uint64_t seed, int round) {
  if (round == 0) return seed;
  std::uint64_t x = seed + 0xd1b54a32d192ed03ull * static_cast<std::uint64_t>(round);
  return splitmix64(x);
}

int max_finding_rounds(const FindingRunOptions& o) { return 3 * o.max_findings + 1; }

namespace {

nlohmann::json finding_json(const Finding& f) {
  nlohmann::json j = {{"signature", f.signature.text()},
                      {"id", f.signature.id()},
                      {"display", f.signature.display()},
                      {"found_as", f.found_as.text()},
                      {"class", std::string(failure_class_name(f.signature.cls))},
                      {"tensor", f.signature.tensor},
                      {"edges", f.signature.edges},
                      {"message", readable_message(f)},
                      {"debug", f.outcome.message},
                      {"seed", hex(f.outcome.seed)},
                      {"repro_cases", std::max(f.outcome.repro_cases, 1)},
                      {"cases_before", f.outcome.cases},
                      {"excluded_before", f.excluded_before},
                      {"round", f.round},
                      {"saved", f.saved}};
  nlohmann::json ex = nlohmann::json::array();
  for (const auto& e : f.examples) ex.push_back(finding_json(e));
  j["examples"] = ex;
  if (f.explanation.ran) {
    j["explain"] = f.explanation.to_json();
    j["explain"]["round_seconds"] = f.outcome.seconds;          // the search and the shrink it followed
    j["explain"]["shrink_seconds"] = f.outcome.shrink_seconds;  // the shrink alone
  }
  return j;
}

}  // namespace

nlohmann::json PropertyFindings::to_json() const {
  nlohmann::json fs = nlohmann::json::array();
  for (const auto& f : findings) fs.push_back(finding_json(f));
  nlohmann::json j = counters.to_json();
  return {{"findings", fs}, {"coverage", j}, {"rounds", rounds}, {"stopped", stopped}};
}

PropertyFindings run_property_findings(const Property& p, FindingLedger& ledger, const PropertyBudget& budget,
                                       const FindingRunOptions& options, const std::string& corpus_dir) {
  for (const auto& k : options.known) {
    if (auto s = FindingSignature::parse(k)) ledger.excluded.push_back(std::move(*s));
    else ledger.known.push_back(k);
  }
  ledger.steer_shrinking = true;
  PropertyFindings out;
  PropertyOutcome& total = out.outcome;
  const auto t0 = Clock::now();
  const int wanted = budget.cases.value_or(budget.seconds ? 0 : kChunkCases);
  bool first = true;
  std::int64_t ran = 0;  // RapidCheck's passing cases over the rounds: judged ones and known hits
  const int max_rounds = max_finding_rounds(options);
  for (int r = 0;; ++r) {
    if (r == max_rounds) {
      out.stopped = fmt::format("{} rounds (each found a finding or an example of one, or topped the budget up)", r);
      break;
    }
    PropertyBudget b = budget;
    b.seed = finding_round_seed(budget.seed, r);
    if (budget.seconds) {
      b.seconds = *budget.seconds - since(t0);
      if (r > 0 && *b.seconds <= 0) break;
    } else {
      const std::int64_t left = wanted - out.counters.judged;
      if (r > 0 && left <= 0) break;
      // Cases that recur a known finding pass unjudged: ask for enough cases that the judged ones
      // reach the budget at the share seen so far (at least one in ten).
      const double share = ran > 0 ? std::max(0.1, static_cast<double>(out.counters.judged) / ran) : 1.0;
      b.cases = static_cast<int>(std::clamp<double>(std::ceil(static_cast<double>(left) / share), 1.0, 10.0 * wanted));
      b.first_chunk = 0;
      b.end_chunk = -1;
    }
    ledger.target.reset();
    ledger.last.reset();
    ledger.discarded_cases = {};
    const std::int64_t judged_before = out.counters.judged;
    PropertyOutcome o = run_property(p, b);
    ++out.rounds;
    out.counters.add(strip_counters(o));
    out.counters.add(ledger.discarded_cases);
    if (first) {
      total = o;
      total.failing_call.reset();
      total.cases = total.discarded = total.early_returns = 0;
      total.seconds = 0;
      total.buckets.clear();
      total.max_errors.clear();
      total.passed = true;
      total.message.clear();
      total.seed = budget.seed;
      first = false;
    }
    ran += o.cases;
    total.discarded += o.discarded;
    total.early_returns += o.early_returns;
    total.chunks_run += o.chunks_run;
    for (const auto& [k, n] : o.buckets) total.buckets[k] += n;
    for (const auto& [t, e] : o.max_errors) keep_worst(total.max_errors[t], e);
    if (o.passed) {
      if (budget.seconds || out.counters.judged >= wanted) break;
      if (out.counters.judged == judged_before) {  // nothing left to judge: every case recurred a finding
        out.stopped = "every case of the last round recurred a known finding";
        break;
      }
      continue;  // known hits took part of the budget: top it up
    }
    if (!ledger.last || !o.failing_call) {
      // No finding to exclude: the check gave up (nothing in the domain to run), or the body
      // failed outside a case. Reported as the property's failure; the run cannot go on.
      out.stopped = o.message.substr(0, o.message.find('\n'));
      total.passed = false;
      total.message = o.message;
      total.seed = o.seed;
      total.repro_cases = o.repro_cases;
      break;
    }
    FindingSignature sig = *ledger.last;
    Finding f;
    f.signature = sig;
    f.found_as = sig;
    for (const auto& e : ledger.excluded) f.excluded_before.push_back(e.text());
    f.round = r;
    f.outcome = std::move(o);
    if (!corpus_dir.empty() && f.outcome.failing_call) {
      try {
        f.saved = save_call(*f.outcome.failing_call, corpus_dir, corpus_stem(f.outcome), corpus_info(f.outcome));
      } catch (const std::exception&) {
        f.saved.clear();  // the report says "not saved" by its absence
      }
    }
    if (f.outcome.failing_call) f.call = f.outcome.failing_call->description;
    if (ledger.check && f.outcome.failing_call && options.explain.seconds > 0)
      f.explanation = explain_finding(*f.outcome.failing_call, sig, ledger.check, options.explain,
                                      finding_round_seed(f.outcome.seed, 1));
    f.outcome.failing_call.reset();
    // The same failure (class, tensor, kind, message) again, unless the explain step tells the two
    // apart (needed sets that name different bugs: campaign/explain.hpp, same_bug).
    const bool told_apart = !f.explanation.needed_names().empty();
    const auto same = std::find_if(out.findings.begin(), out.findings.end(), [&](const Finding& g) {
      return g.signature.same_failure(sig) &&
             (!told_apart || g.explanation.needed_names().empty() || same_bug(g.explanation, f.explanation));
    });
    // One bug, one finding: another failure that needs what an earlier finding needs is that
    // finding met again, in another tensor or class.
    const auto met = same != out.findings.end()
                         ? same
                         : std::find_if(out.findings.begin(), out.findings.end(),
                                        [&](const Finding& g) { return same_bug(g.explanation, f.explanation); });
    if (met != out.findings.end()) refine(met->explanation, f.explanation);
    if (same == out.findings.end() && met != out.findings.end()) {
      ledger.excluded.push_back(sig);
      met->examples.push_back(std::move(f));
      continue;
    }
    if (same != out.findings.end()) {
      // The same failure under other conditions: the conditions both shrunk calls have are what
      // it needs (shrinking removed the rest from each); the finding generalises to them.
      FindingSignature general = same->signature;
      general.edges.clear();
      std::set_intersection(same->signature.edges.begin(), same->signature.edges.end(), sig.edges.begin(),
                            sig.edges.end(), std::back_inserter(general.edges));
      for (auto& e : ledger.excluded)
        if (e.text() == same->signature.text()) e = general;
      same->signature = general;
      same->examples.push_back(std::move(f));
      continue;
    }
    ledger.excluded.push_back(sig);
    if (total.passed) {  // the first finding is the property's failure in report.hpp's fields
      total.passed = false;
      total.message = f.outcome.message;
      total.seed = f.outcome.seed;
      total.repro_cases = f.outcome.repro_cases;
      total.saved = f.saved;
    }
    out.findings.push_back(std::move(f));
    if (static_cast<int>(out.findings.size()) >= options.max_findings) {
      out.stopped = fmt::format("{} findings (max_findings)", out.findings.size());
      break;
    }
  }
  total.cases = static_cast<int>(out.counters.judged);
  total.seconds = since(t0);
  return out;
}

}  // namespace kparity::fuzz
