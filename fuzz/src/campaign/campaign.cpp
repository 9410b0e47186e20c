// The campaign around the runner: selection, progress, corpus, report (campaign.hpp).
#include "kparity/fuzz/campaign/campaign.hpp"

#include "parallel.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <ostream>
#include <tuple>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/campaign/selftest.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

bool matches_op(const std::string& op, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return true;
  for (const auto& w : wanted)
    if (op == w || (!op.empty() && op.rfind(w + "/", 0) == 0)) return true;
  return false;
}

// One property's line, and for a failure its message, repro line and corpus dump.
void finish(PropertyOutcome& o, const CampaignOptions& opt, const FailedCall& call, std::ostream& log) {
  log << outcome_line(o) << "\n";
  // The explain step's lines as the campaign with findings prints them under a finding.
  if (o.explain.is_object()) {
    log << "    explain: " << o.explain.value("line", std::string()) << "\n";
    if (const std::string bad = o.explain.value("first_bad", std::string()); !bad.empty()) log << "    " << bad << "\n";
  }
  if (!o.passed) {
    o.repro = repro_command(o, opt);
    // The message as people read it (the first bad element is among the explain lines above).
    std::istringstream lines(readable_message(o, false));
    for (std::string line; std::getline(lines, line);) log << "    " << line << "\n";
    log << "  repro: " << o.repro << "\n";
    if (call.recorded && !opt.corpus_dir.empty()) {
      try {
        o.saved = call.save();
        log << "  saved: " << o.saved << " (replay: kparity run " << o.saved << "; kparity fuzz --replay " << o.saved
            << ")\n";
      } catch (const std::exception& e) {
        log << "  not saved: " << e.what() << "\n";
      }
    } else if (!call.recorded) {
      log << "  not saved: the property recorded no call (record_call)\n";
    }
  }
  log.flush();
}

// Keeps the progress line to one terminal row.
std::string progress_line(std::size_t i, std::size_t n, const PropertyOutcome& o, double s) {
  std::string line = fmt::format("[{}/{}] {}  {} cases  {:.1f} s", i, n, o.name, o.cases, s);
  if (line.size() > 110) line.resize(110);
  return line;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

void explain_outcome(const Property& p, PropertyOutcome& o, const CampaignOptions& opt) {
  if (o.passed || !o.failing_call || !p.check || opt.explain.seconds <= 0) return;
  // The variants' fresh values from the seed a finding's explain step uses (findings.hpp).
  const Explanation ex = explain_failure(*o.failing_call, p.check, opt.explain, finding_round_seed(o.seed, 1));
  if (!ex.ran) return;
  o.explain = ex.to_json();
  o.explain["round_seconds"] = o.seconds;          // the search and the shrink it followed
  o.explain["shrink_seconds"] = o.shrink_seconds;  // the shrink alone
}

std::string corpus_stem(const PropertyOutcome& o) {
  std::string s = o.name;
  for (char& c : s)
    if (c == '/' || c == ' ') c = '.';
  return s + "-" + fmt::format("{:016x}", o.seed);
}

std::map<std::string, std::string> corpus_info(const PropertyOutcome& o) {
  return {{"property", o.name}, {"seed", hex(o.seed)}, {"cases", std::to_string(o.repro_cases)}};
}

PropertyBudget property_budget(const CampaignOptions& opt) {
  PropertyBudget b;
  b.seed = opt.seed;
  b.cases = opt.cases;
  b.max_size = opt.max_size;
  b.shrink = opt.shrink;
  if (opt.seconds) {
    b.first_chunk = opt.shard.index;
    b.chunk_stride = opt.shard.count;
  } else {
    std::tie(b.first_chunk, b.end_chunk) = shard_chunks(chunk_count(opt.cases.value_or(kChunkCases)), opt.shard);
  }
  return b;
}

std::vector<Property> select_properties(const std::vector<Property>& all, const CampaignOptions& o) {
  std::vector<Property> out;
  for (const auto& p : all) {
    if (!o.property.empty() && p.name != o.property) continue;
    // "control" selects every "control/<accumulation>" backend.
    const std::string b = backend_of(p);
    if (o.backend != "all" && b != o.backend && b.rfind(o.backend + "/", 0) != 0) continue;
    if (!matches_op(op_of(p), o.ops)) continue;
    out.push_back(p);
  }
  if (out.empty() && !o.property.empty() && std::none_of(all.begin(), all.end(), [&](const Property& p) {
        return p.name == o.property;
      })) {
    std::string names;
    for (const auto& p : all) names += "\n  " + p.name;
    throw std::invalid_argument("no property named '" + o.property + "'; the properties are:" + names);
  }
  for (const auto& w : o.ops) {
    const bool known = std::any_of(all.begin(), all.end(), [&](const Property& p) { return matches_op(op_of(p), {w}); });
    if (known) continue;
    std::vector<std::string> ops;
    for (const auto& p : all)
      if (auto op = op_of(p); !op.empty() && std::find(ops.begin(), ops.end(), op) == ops.end()) ops.push_back(op);
    throw std::invalid_argument(fmt::format("no property is about op '{}' (ops with properties: {})", w,
                                            fmt::join(ops, ", ")));
  }
  return out;
}

std::string repro_command(const PropertyOutcome& o, const CampaignOptions& options) {
  std::string cmd = "kparity fuzz";
  if (!o.op.empty()) cmd += " --op " + o.op;
  cmd += " --property " + o.name + " --seed " + hex(o.seed) + " --cases " + std::to_string(std::max(o.repro_cases, 1));
  if (options.max_size != 100) cmd += " --max-size " + std::to_string(options.max_size);
  if (!options.shrink) cmd += " --no-shrink";
  if (!options.repro_args.empty()) cmd += " " + options.repro_args;
  return cmd;
}

bool CampaignResult::passed() const {
  return std::all_of(properties.begin(), properties.end(), [](const PropertyOutcome& o) { return o.passed; });
}

CampaignResult run_campaign(const std::vector<Property>& props, const CampaignOptions& opt,
                            std::vector<BackendStatus> backends, std::ostream& log) {
  CampaignResult r;
  r.options = opt;
  r.backends = std::move(backends);
  const auto t0 = Clock::now();
  std::string budget = opt.seconds ? fmt::format("{:g} s in all", *opt.seconds)
                                   : fmt::format("{} cases per property", opt.cases.value_or(100));
  std::string names;
  for (const auto& b : r.backends)
    names += (names.empty() ? "" : ", ") + b.name + (b.available ? "" : " (skipped)");
  log << "kparity fuzz: seed " << hex(opt.seed) << ", " << budget << ", " << props.size()
      << " properties; backends: " << names;
  if (opt.shard.count > 1) log << "; shard " << opt.shard.index << "/" << opt.shard.count;
  if (opt.jobs > 1) log << "; " << opt.jobs << " workers";
  log << "\n";
  log.flush();

  // Properties that cannot run here are reported as skipped, in their place, and use no budget.
  std::vector<Property> runnable;
  for (const auto& p : props)
    if (p.skipped.empty()) runnable.push_back(p);
  if (opt.jobs > 1 && !runnable.empty()) {
    r.properties = run_in_workers(runnable, opt, log, [&](PropertyOutcome& o, const FailedCall& call) {
      finish(o, opt, call, log);
    });
  } else {
    for (std::size_t i = 0; i < runnable.size(); ++i) {
      const Property& p = runnable[i];
      PropertyBudget b = property_budget(opt);
      if (opt.seconds) {
        // What is left, shared by the properties still to run: time a failing property did not use
        // goes to the others.
        const double left = std::max(0.0, *opt.seconds - since(t0));
        b.seconds = left / static_cast<double>(runnable.size() - i);
      }
      std::function<void(const PropertyOutcome&, double)> on_chunk;
      if (opt.progress) {
        // A terminal redraw per chunk would be thousands per second for the fast properties.
        on_chunk = [&, i, last = -1.0](const PropertyOutcome& o, double s) mutable {
          if (last >= 0 && s - last < 0.1) return;
          last = s;
          log << "\r\x1b[2K" << progress_line(i + 1, runnable.size(), o, s) << std::flush;
        };
        log << "\r\x1b[2K" << fmt::format("[{}/{}] {}", i + 1, runnable.size(), p.name) << std::flush;
      }
      PropertyOutcome o = run_property(p, b, on_chunk);
      if (opt.progress) log << "\r\x1b[2K";
      explain_outcome(p, o, opt);
      FailedCall call;
      if (o.failing_call) {
        call.recorded = true;
        call.save = [&o, &opt] { return save_call(*o.failing_call, opt.corpus_dir, corpus_stem(o), corpus_info(o)); };
      }
      finish(o, opt, call, log);
      r.properties.push_back(std::move(o));
    }
  }
  if (runnable.size() != props.size()) {
    std::vector<PropertyOutcome> ran = std::move(r.properties);
    r.properties.clear();
    std::size_t next = 0;
    for (const auto& p : props) {
      if (p.skipped.empty()) {
        r.properties.push_back(std::move(ran.at(next++)));
        continue;
      }
      PropertyOutcome o = run_property(p, property_budget(opt));  // returns at once: the skip and its reason
      log << outcome_line(o) << "\n";
      r.properties.push_back(std::move(o));
    }
  }
  r.seconds = since(t0);
  print_summary(r, log);
  if (!opt.report_path.empty()) {
    write_report(r, opt.report_path);
    log << "report: " << opt.report_path << "\n";
  }
  return r;
}

std::vector<Property> campaign_properties(const CampaignOptions& o, std::vector<BackendStatus>& backends) {
  // The controls (reference.hpp) are correct fake kernels: they run only when asked for, by
  // backend or by a property name (a repro line has --property and no --backend).
  const bool controls = o.backend == "control" || o.backend.rfind("control/", 0) == 0 ||
                        o.property.find("/control/") != std::string::npos;
  // The self-test's planted bugs (selftest.hpp) likewise: wrong kernels that need no device, so a
  // finding of this campaign (its shrink, explain step, report) can be had and tested on the CPU.
  const bool planted = o.backend == "selftest" || starts_with(o.backend, "selftest/") ||
                       o.property.find("/selftest/") != std::string::npos;
  backends = {{"reference", true, ""}};
  std::string why;
  std::vector<Backend> cuda;
  DeviceProbe probe;
  if (o.backend == "all" || o.backend == "cuda" || o.backend == "launcher") {
    // Workers forked later could not use a device this process had initialised.
    probe = probe_cuda(o.jobs > 1);
    cuda = cuda_backends(probe, why);
    backends.push_back({"cuda", !cuda.empty(), why});
  }
  std::vector<Property> all = o.backend == "cuda" ? std::vector<Property>{} : cpu_properties();
  if (o.backend == "all" || o.backend == "cuda")
    for (auto& p : cuda.empty() ? skipped_cuda_properties(why) : differential_properties(cuda, op_specs()))
      all.push_back(std::move(p));
  if (o.backend == "all" || o.backend == "cuda" || o.backend == "launcher")
    for (auto& p : launcher_properties(probe.available))
      if (o.backend == "all" || o.backend == p.backend) all.push_back(std::move(p));
  if (controls) {
    std::vector<std::string> ops;
    for (const auto& s : op_specs()) ops.push_back(s.op);
    for (auto& p : differential_properties(control_backends(ops), op_specs())) all.push_back(std::move(p));
    backends.push_back({"control", true, ""});
  }
  if (planted) {
    std::vector<Backend> bugs;
    for (auto& b : planted_bugs()) bugs.push_back(std::move(b.backend));
    for (auto& p : differential_properties(bugs, op_specs())) all.push_back(std::move(p));
    backends.push_back({"selftest", true, ""});
  }
  // Without a device the CUDA properties are there, skipped with the reason: --backend cuda then
  // reports every one of them as skipped (like the GPU tests, a visible skip rather than a failure).
  return all.empty() ? all : select_properties(all, o);
}

CampaignResult run_campaign(const CampaignOptions& o, std::ostream& log) {
  std::vector<BackendStatus> backends;
  std::vector<Property> props = campaign_properties(o, backends);
  return run_campaign(props, o, std::move(backends), log);
}

}  // namespace kparity::fuzz
