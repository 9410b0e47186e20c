// The campaign's summary table and JSON report (layout in report.hpp).
#include "kparity/fuzz/campaign/report.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include <fmt/format.h>

namespace kparity::fuzz {
namespace {

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

std::pair<std::size_t, std::size_t> buckets_hit(const PropertyOutcome& o) {
  std::size_t hit = 0;
  for (const auto& [name, n] : o.buckets) hit += n > 0 ? 1 : 0;
  return {hit, o.buckets.size()};
}

// The tensor that used the largest share of its bound, as "out 41%".
std::string worst_error(const PropertyOutcome& o) {
  const std::pair<const std::string, ErrorStat>* worst = nullptr;
  for (const auto& e : o.max_errors)
    if (!worst || e.second.ratio > worst->second.ratio) worst = &e;
  if (!worst) return "-";
  return fmt::format("{} {:.0f}%", worst->first, 100.0 * worst->second.ratio);
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// A drawn value as runner.cpp lists it: "  <type>: <value>" or "  ... N more drawn values".
bool drawn_line(const std::string& l) {
  if (l.size() < 3 || !starts_with(l, "  ") || l[2] == ' ') return false;
  return l.find(": ") != std::string::npos || (starts_with(l, "  ... ") && l.ends_with(" more drawn values"));
}

}  // namespace

std::string readable_message(const PropertyOutcome& o, bool first_bad) {
  std::vector<std::string> lines;
  {
    std::string line;
    for (char c : o.message) {
      if (c == '\n') lines.push_back(std::move(line)), line.clear();
      else line += c;
    }
    if (!line.empty()) lines.push_back(std::move(line));
  }
  const auto log = std::find(lines.begin(), lines.end(), "Log:");
  if (log == lines.end()) return o.message;  // not a RapidCheck counterexample (gave up, an error)
  // RapidCheck's form: "<file>:<line>:", the macro ("RC_FAIL(...)"), a blank line, the failure's
  // description, "Log:" and the logged lines (the call's description first), then the drawn values.
  std::vector<std::string> head(lines.begin(), log), logged;
  for (auto it = log + 1; it != lines.end() && !drawn_line(*it); ++it)
    if (!it->empty()) logged.push_back(*it);
  std::size_t from = 0;
  if (!head.empty() && head[0].ends_with(":") && head[0].find(':') < head[0].size() - 1) ++from;  // file:line:
  if (from < head.size() && starts_with(head[from], "RC_")) ++from;
  std::string out;
  for (std::size_t i = from; i < head.size(); ++i) {
    if (head[i].empty() && out.empty()) continue;
    out += head[i] + "\n";
  }
  while (out.ends_with("\n\n")) out.pop_back();
  if (!logged.empty()) out += "call: " + logged[0] + "\n";
  for (std::size_t i = 1; i < logged.size(); ++i)
    if (out.find(logged[i]) == std::string::npos) out += logged[i] + "\n";  // the rule's line is in the verdict
  if (first_bad && o.explain.is_object())
    if (const std::string bad = o.explain.value("first_bad", std::string()); !bad.empty()) out += bad + "\n";
  return out;
}

std::string outcome_line(const PropertyOutcome& o) {
  if (!o.skipped.empty()) return fmt::format("SKIP {}  ({})", o.name, o.skipped);
  std::string line = fmt::format("{} {}  {} cases  {:.1f} s  {:.0f}/min", o.passed ? "PASS" : "FAIL", o.name, o.cases,
                                 o.seconds, o.cases_per_minute());
  if (o.discarded > 0)
    line += fmt::format("  {} unchecked ({} early returns, share {:.2f})", o.discarded, o.early_returns, o.discard_share());
  if (auto [hit, all] = buckets_hit(o); all > 0) line += fmt::format("  buckets {}/{}", hit, all);
  if (!o.max_errors.empty()) line += "  worst error/bound: " + worst_error(o);
  return line;
}

void print_summary(const CampaignResult& r, std::ostream& out) {
  if (r.properties.empty()) {
    out << "\nno property ran\n";
    for (const auto& b : r.backends)
      if (!b.available) out << b.name << ": skipped, " << b.reason << "\n";
    return;
  }
  std::size_t width = 8, bwidth = 7;
  for (const auto& o : r.properties) width = std::max(width, o.name.size()), bwidth = std::max(bwidth, o.backend.size());
  out << "\n"
      << fmt::format("| {:<{}} | {:<{}} | {:>8} | {:>9} | {:>7} | {:>16} | {:<6} |\n", "property", width, "backend",
                     bwidth, "cases", "cases/min", "buckets", "err/bound", "result")
      << fmt::format("|{:-<{}}|{:-<{}}|{:-<10}|{:-<11}|{:-<9}|{:-<18}|{:-<8}|\n", "", width + 2, "", bwidth + 2, "", "",
                     "", "", "");
  std::size_t held = 0, skipped = 0;
  std::int64_t cases = 0;
  std::map<std::string, std::size_t> skip_reasons;  // reason -> properties skipped for it
  for (const auto& o : r.properties) {
    auto [hit, all] = buckets_hit(o);
    const char* result = !o.skipped.empty() ? "skip" : o.passed ? "pass" : "FAIL";
    out << fmt::format("| {:<{}} | {:<{}} | {:>8} | {:>9.0f} | {:>7} | {:>16} | {:<6} |\n", o.name, width, o.backend,
                       bwidth, o.cases, o.cases_per_minute(), all ? fmt::format("{}/{}", hit, all) : "-",
                       worst_error(o), result);
    if (!o.skipped.empty()) ++skipped, ++skip_reasons[o.backend + ": " + o.skipped];
    else held += o.passed ? 1 : 0;
    cases += o.cases;
  }
  out << "\n";
  for (const auto& b : r.backends)
    if (!b.available) out << b.name << ": skipped, " << b.reason << "\n";
  for (const auto& [reason, n] : skip_reasons) out << fmt::format("{} properties skipped ({})\n", n, reason);
  out << fmt::format("{} of {} properties held{}, {} cases in {:.1f} s (seed {})\n", held, r.properties.size() - skipped,
                     skipped ? fmt::format(" ({} more skipped)", skipped) : "", cases, r.seconds, hex(r.options.seed));
  for (const auto& o : r.properties)
    if (!o.passed) out << "FAILED " << o.name << "  repro: " << o.repro << "\n";
}

nlohmann::json outcome_json(const PropertyOutcome& o) {
  using nlohmann::json;
  json buckets = json::object();
  for (const auto& [name, n] : o.buckets) buckets[name] = n;
  json errors = json::object();
  for (const auto& [name, e] : o.max_errors)
    errors[name] = {{"backend", e.backend}, {"faithful", e.faithful}, {"bound", e.bound}, {"ratio", e.ratio}};
  json p = {{"name", o.name},
            {"op", o.op},
            {"kind", o.kind},
            {"backend", o.backend},
            {"cases", o.cases},
            {"discarded", o.discarded},
            {"early_returns", o.early_returns},
            {"passed", o.passed},
            {"seed", hex(o.seed)},
            {"seconds", o.seconds},
            {"cases_per_minute", o.cases_per_minute()},
            {"buckets", buckets},
            {"max_errors", errors},
            {"chunks", {{"first", o.first_chunk}, {"run", o.chunks_run}, {"stride", o.chunk_stride}}}};
  if (!o.skipped.empty()) p["skipped"] = o.skipped;
  if (!o.passed) {
    p["message"] = readable_message(o);
    p["debug"] = o.message;
    p["repro"] = o.repro;
    p["repro_cases"] = o.repro_cases;
    p["saved"] = o.saved;
  }
  if (!o.explain.is_null()) p["explain"] = o.explain;
  if (o.findings.is_object())
    for (const auto& [k, v] : o.findings.items()) p[k] = v;
  return p;
}

PropertyOutcome outcome_from_json(const nlohmann::json& j) {
  // JSON has no infinities: a report stores them (and NaN) as null.
  const auto number = [](const nlohmann::json& v) { return v.is_null() ? INFINITY : v.get<double>(); };
  PropertyOutcome o;
  o.name = j.at("name").get<std::string>();
  o.op = j.at("op").get<std::string>();
  o.kind = j.at("kind").get<std::string>();
  o.backend = j.at("backend").get<std::string>();
  o.cases = j.at("cases").get<int>();
  o.discarded = j.at("discarded").get<int>();
  o.early_returns = j.value("early_returns", 0);
  o.passed = j.at("passed").get<bool>();
  o.skipped = j.value("skipped", "");
  o.seed = std::stoull(j.at("seed").get<std::string>(), nullptr, 0);
  o.seconds = number(j.at("seconds"));
  for (const auto& [name, n] : j.at("buckets").items()) o.buckets[name] = n.get<std::int64_t>();
  for (const auto& [name, e] : j.at("max_errors").items())
    o.max_errors[name] = {number(e.at("backend")), number(e.at("faithful")), number(e.at("bound")), number(e.at("ratio"))};
  if (const auto c = j.find("chunks"); c != j.end()) {
    o.first_chunk = c->at("first").get<int>();
    o.chunks_run = c->at("run").get<int>();
    o.chunk_stride = c->at("stride").get<int>();
  }
  if (!o.passed) {
    o.message = j.value("debug", j.value("message", std::string()));
    o.repro = j.value("repro", "");
    o.repro_cases = j.value("repro_cases", 0);
    o.saved = j.value("saved", "");
  }
  if (const auto e = j.find("explain"); e != j.end()) o.explain = *e;
  // A run with several findings: its fields come back together (a worker's result, a shard's report).
  if (j.contains("findings")) {
    o.findings = nlohmann::json::object();
    for (const char* k : {"findings", "coverage", "rounds", "stopped"})
      if (const auto f = j.find(k); f != j.end()) o.findings[k] = *f;
  }
  return o;
}

nlohmann::json report_json(const CampaignResult& r) {
  using nlohmann::json;
  json budget = json::object();
  if (r.options.seconds)
    budget["seconds"] = *r.options.seconds;
  else
    budget["cases"] = r.options.cases.value_or(100);
  budget["max_size"] = r.options.max_size;

  json backends = json::array();
  for (const auto& b : r.backends) backends.push_back({{"name", b.name}, {"available", b.available}, {"reason", b.reason}});

  json props = json::array();
  std::int64_t cases = 0;
  std::size_t passed = 0, skipped = 0;
  for (const auto& o : r.properties) {
    props.push_back(outcome_json(o));
    cases += o.cases;
    passed += o.passed && o.skipped.empty() ? 1 : 0;
    skipped += o.skipped.empty() ? 0 : 1;
  }
  json out = {{"seed", hex(r.options.seed)}, {"budget", budget}, {"jobs", r.options.jobs}};
  if (r.shards > 0)
    out["shards"] = r.shards;
  else if (r.options.shard.count > 1)
    out["shard"] = {{"index", r.options.shard.index}, {"count", r.options.shard.count}};
  out["backends"] = backends;
  out["totals"] = {{"properties", r.properties.size()},
                   {"passed", passed},
                   {"skipped", skipped},
                   {"failed", r.properties.size() - passed - skipped},
                   {"cases", cases},
                   {"seconds", r.seconds}};
  out["properties"] = props;
  return out;
}

void write_report(const CampaignResult& r, const std::string& path) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot write the report to " + path);
  f << report_json(r).dump(2) << "\n";
  if (!f) throw std::runtime_error("cannot write the report to " + path);
}

CampaignResult read_report(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read the report " + path);
  try {
    const nlohmann::json j = nlohmann::json::parse(f);
    CampaignResult r;
    r.options.seed = std::stoull(j.at("seed").get<std::string>(), nullptr, 0);
    const auto& budget = j.at("budget");
    if (budget.contains("seconds")) r.options.seconds = budget.at("seconds").get<double>();
    else r.options.cases = budget.at("cases").get<int>();
    r.options.max_size = budget.at("max_size").get<int>();
    r.options.jobs = j.value("jobs", 1);
    if (const auto s = j.find("shard"); s != j.end())
      r.options.shard = {s->at("index").get<int>(), s->at("count").get<int>()};
    r.shards = j.value("shards", 0);
    for (const auto& b : j.at("backends"))
      r.backends.push_back({b.at("name").get<std::string>(), b.at("available").get<bool>(), b.at("reason").get<std::string>()});
    for (const auto& p : j.at("properties")) r.properties.push_back(outcome_from_json(p));
    const auto& seconds = j.at("totals").at("seconds");
    r.seconds = seconds.is_null() ? 0.0 : seconds.get<double>();
    return r;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a kparity fuzz report (" + e.what() + ")");
  }
}

}  // namespace kparity::fuzz
