// The campaign of implementation properties with several findings each (backends/findings.hpp,
// run_finding_campaign): in this process or in worker processes, whole or one shard of it.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/campaign/workers.hpp"
#include "parallel.hpp"

namespace kparity::fuzz {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One shell word: single quotes, each ' inside written '\''.
std::string shell_quoted(std::string_view s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A property's lines in the log: its outcome line with the coverage, then each finding with its
// explanation, the examples it was also met as, its readable message, repro and dump.
std::string property_log(const PropertyFindings& pf, const CampaignOptions& opt) {
  const PropertyOutcome& o = pf.outcome;
  std::ostringstream log;
  log << outcome_line(o) << fmt::format("  coverage {:.0f}% of {} drawn", 100.0 * pf.counters.coverage(), pf.counters.drawn);
  if (pf.counters.declined) log << "  declined " << pf.counters.declined;
  std::int64_t hits = 0;
  for (const auto& [id, n] : pf.counters.known_hits) hits += n;
  if (hits) log << "  known hits " << hits;
  log << "\n";
  for (std::size_t k = 0; k < pf.findings.size(); ++k) {
    const Finding& f = pf.findings[k];
    log << fmt::format("  finding {} [{}] {}\n", k + 1, f.signature.id(), f.signature.display());
    if (f.explanation.ran) log << "    explain: " << f.explanation.line() << "\n";
    for (const auto& e : f.examples) log << fmt::format("    also met as [{}] {}\n", e.found_as.id(), e.found_as.display());
    std::istringstream lines(readable_message(f));
    int shown = 0;
    for (std::string line; std::getline(lines, line) && shown < 6; ++shown) log << "    " << line << "\n";
    std::string cmd = repro_command(f.outcome, opt);
    for (const auto& e : f.excluded_before) cmd += " --known " + shell_quoted(e);
    log << "    repro: " << cmd << "\n";
    if (!f.saved.empty()) log << "    saved: " << f.saved << "\n";
  }
  if (pf.findings.empty() && !o.passed) {
    std::istringstream lines(o.message);
    for (std::string line; std::getline(lines, line);) log << "    " << line << "\n";
  }
  return log.str();
}

// One property's run: its outcome, carrying the report's finding fields, and its log lines.
struct PropertyRun {
  PropertyOutcome outcome;
  std::string log;
};

PropertyRun run_one(const Property& p, const std::map<std::string, std::shared_ptr<FindingLedger>>& ledgers,
                    const PropertyBudget& b, const FindingRunOptions& findings, const CampaignOptions& opt) {
  const auto it = ledgers.find(p.name);
  FindingLedger scratch;
  FindingLedger& ledger = it != ledgers.end() && it->second ? *it->second : scratch;
  PropertyFindings pf = run_property_findings(p, ledger, b, findings, opt.corpus_dir);
  PropertyOutcome& o = pf.outcome;
  if (!o.passed) o.repro = repro_command(o, opt);
  PropertyRun r{o, property_log(pf, opt)};
  r.outcome.findings = pf.to_json();
  return r;
}

// An outcome of `p` with nothing run yet.
PropertyOutcome named(const Property& p) {
  PropertyOutcome o;
  o.name = p.name;
  o.op = op_of(p);
  o.kind = p.kind;
  o.backend = backend_of(p);
  return o;
}

// A property another shard runs: reported skipped here, so that the merge takes that shard's run.
PropertyRun elsewhere(const Property& p, int shard, int count) {
  PropertyOutcome o = named(p);
  o.passed = true;
  o.skipped = fmt::format("run by shard {}/{}", shard, count);
  return {o, outcome_line(o) + "\n"};
}

}  // namespace

nlohmann::json FindingCampaign::report() const { return report_json(result); }

FindingCampaign run_finding_campaign(const std::vector<Property>& props,
                                     const std::map<std::string, std::shared_ptr<FindingLedger>>& ledgers,
                                     const CampaignOptions& opt, const FindingRunOptions& findings,
                                     std::vector<BackendStatus> backends, std::ostream& log) {
  FindingCampaign fc;
  CampaignResult& r = fc.result;
  r.options = opt;
  r.backends = std::move(backends);
  const auto t0 = Clock::now();
  // A property is run whole, by one shard: its rounds start at chunk 0, one chunk after the other.
  PropertyBudget base = property_budget(opt);
  base.first_chunk = 0;
  base.end_chunk = -1;
  base.chunk_stride = 1;
  std::vector<std::size_t> mine;  // the properties this shard runs
  std::vector<std::optional<PropertyRun>> runs(props.size());
  for (std::size_t i = 0; i < props.size(); ++i) {
    const int owner = static_cast<int>(i % static_cast<std::size_t>(opt.shard.count));
    if (owner == opt.shard.index) mine.push_back(i);
    else runs[i] = elsewhere(props[i], owner, opt.shard.count);
  }
  const bool workers = opt.jobs > 1 && mine.size() > 1;
  log << "kparity fuzz: seed " << fmt::format("0x{:x}", opt.seed) << ", "
      << (opt.seconds ? fmt::format("{:g} s in all", *opt.seconds) : fmt::format("{} cases per property", opt.cases.value_or(100)))
      << ", " << props.size() << " properties, up to " << findings.max_findings << " findings each";
  if (opt.shard.count > 1) log << "; shard " << opt.shard.index << "/" << opt.shard.count;
  if (workers) log << "; " << opt.jobs << " workers";
  log << "\n";
  log.flush();
  // The time left, shared by the properties not started yet (`at_once` of them run side by side).
  const auto seconds_for = [&](std::size_t started, int at_once) {
    const double left = std::max(0.0, *opt.seconds - since(t0));
    return left / std::ceil(static_cast<double>(mine.size() - started) / at_once);
  };
  std::size_t printed = 0;
  const auto publish = [&] {  // finished properties, in property order
    for (; printed < runs.size() && runs[printed]; ++printed) log << runs[printed]->log;
    log.flush();
  };
  if (!workers) {
    for (std::size_t n = 0; n < mine.size(); ++n) {
      const std::size_t i = mine[n];
      PropertyBudget b = base;
      if (opt.seconds) b.seconds = seconds_for(n, 1);
      if (opt.progress) log << "\r\x1b[2K" << fmt::format("[{}/{}] {}", n + 1, mine.size(), props[i].name) << std::flush;
      runs[i] = run_one(props[i], ledgers, b, findings, opt);
      if (opt.progress) log << "\r\x1b[2K";
      publish();
    }
  } else {
    // One task per property: its index and time share. A worker returns the outcome (with the
    // findings' report fields) and the log lines, which the parent prints in property order.
    std::size_t next = 0;
    WorkerCallbacks cb;
    cb.next = [&]() -> std::optional<std::string> {
      if (next == mine.size()) return std::nullopt;
      const double s = opt.seconds ? seconds_for(next, opt.jobs) : 0.0;
      return nlohmann::json{{"prop", mine[next++]}, {"seconds", s}}.dump();
    };
    cb.work = [&](const std::string& task) {
      const nlohmann::json t = nlohmann::json::parse(task);
      const std::size_t i = t.at("prop").get<std::size_t>();
      PropertyBudget b = base;
      if (opt.seconds) b.seconds = t.at("seconds").get<double>();
      const PropertyRun run = run_one(props[i], ledgers, b, findings, opt);
      return nlohmann::json{{"outcome", outcome_json(run.outcome)}, {"log", run.log}}.dump();
    };
    cb.done = [&](const std::string& task, const std::string& result) {
      const nlohmann::json j = nlohmann::json::parse(result);
      const std::size_t i = nlohmann::json::parse(task).at("prop").get<std::size_t>();
      runs[i] = PropertyRun{outcome_from_json(j.at("outcome")), j.at("log").get<std::string>()};
      publish();
    };
    cb.lost = [&](const std::string& task, const std::string& why) {
      // The worker died without a verdict (a crash outside the plugin's isolation): the property
      // fails with the reason; its repro line replays it in one process.
      const std::size_t i = nlohmann::json::parse(task).at("prop").get<std::size_t>();
      PropertyOutcome o = named(props[i]);
      o.passed = false;
      o.seed = opt.seed;
      o.repro_cases = opt.cases.value_or(kChunkCases);
      o.message = "no verdict: " + why + "\n";
      o.repro = repro_command(o, opt);
      runs[i] = PropertyRun{o, outcome_line(o) + "\n    " + o.message};
      publish();
    };
    log.flush();
    std::fflush(nullptr);  // a forked worker must not inherit unwritten output
    run_workers(opt.jobs, cb);
  }
  publish();
  for (auto& run : runs) {
    if (!run) throw std::logic_error("run_finding_campaign: a property never completed");
    r.properties.push_back(std::move(run->outcome));
  }
  r.seconds = since(t0);
  print_summary(r, log);
  return fc;
}

}  // namespace kparity::fuzz
