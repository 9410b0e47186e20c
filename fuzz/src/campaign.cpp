// Running properties: chunked RapidCheck checks under a case or wall-clock budget, per-case bucket
// and error collection, and the campaign around them (selection, progress, corpus, report).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <ostream>
#include <rapidcheck.h>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kparity/fuzz/corpus.hpp"
#include "kparity/fuzz/property.hpp"
#include "kparity/fuzz/report.hpp"

namespace kparity::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<Property>& extra_properties() {
  static std::vector<Property> v;
  return v;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Collects what each searched case noted. Only passing cases of the search count: shrink attempts
// re-run the body on smaller inputs and would skew the coverage, so their notes are dropped.
class CaseCollector : public rc::detail::TestListener {
 public:
  explicit CaseCollector(PropertyOutcome& out) : out_(out) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& d) override {
    auto buckets = take_buckets();
    auto errors = take_noted_errors();
    if (d.result.type == rc::detail::CaseResult::Type::Discard) ++out_.discarded;
    if (d.result.type != rc::detail::CaseResult::Type::Success) return;
    for (auto& b : buckets) ++out_.buckets[b];
    for (const auto& [name, e] : errors) {
      ErrorStat& s = out_.max_errors[name];
      s.backend = std::max(s.backend, e.backend);
      s.faithful = std::max(s.faithful, e.faithful);
      s.bound = std::max(s.bound, e.bound);
      s.ratio = std::max(s.ratio, e.ratio);
    }
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {
    take_buckets();
    take_noted_errors();
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  PropertyOutcome& out_;
};

// One RapidCheck check (one chunk). Returns true when it passed; on failure fills the message.
bool run_chunk(const Property& p, std::uint64_t seed, int cases, int max_size, bool shrink, PropertyOutcome& o) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = cases;
  params.maxSize = max_size;
  params.disableShrinking = !shrink;
  rc::detail::TestMetadata meta;
  meta.id = p.name;
  meta.description = p.name;
  CaseCollector listener(o);
  take_buckets();
  take_noted_errors();
  take_recorded_call();
  // An empty reproduce map: RC_PARAMS in the environment must not redirect a campaign.
  const auto result = rc::detail::checkProperty(rc::detail::toProperty(p.body), meta, params, listener, {});
  rc::detail::SuccessResult ok;
  rc::detail::FailureResult fail;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error err;
  std::ostringstream msg;
  if (result.match(ok)) {
    o.cases += ok.numSuccess;
    return true;
  }
  if (result.match(fail)) {
    o.cases += fail.numSuccess;
    msg << fail.description << "\n";
    // The values drawn with *gen, as RapidCheck shows them; the RC_LOG lines above already
    // describe the call, so a long tail of them adds little.
    constexpr std::size_t kShown = 12;
    for (std::size_t i = 0; i < fail.counterExample.size() && i < kShown; ++i)
      msg << "  " << fail.counterExample[i].first << ": " << fail.counterExample[i].second << "\n";
    if (fail.counterExample.size() > kShown)
      msg << "  ... " << fail.counterExample.size() - kShown << " more drawn values\n";
    // RapidCheck ran the minimal counterexample last, so the recorded call is the shrunk input.
    o.failing_call = take_recorded_call();
  } else if (result.match(gave_up)) {
    o.cases += gave_up.numSuccess;
    msg << "gave up after " << gave_up.numSuccess << " passing cases (too many discards): " << gave_up.description
        << "\n";
  } else if (result.match(err)) {
    msg << "error: " << err.description << "\n";
  }
  take_buckets();
  take_noted_errors();
  o.message = msg.str();
  return false;
}

// The chunk sizes of a time budget: small first, so a slow property still checks its budget
// early, then RapidCheck's default of 100.
int time_chunk(int k) {
  static constexpr int ladder[] = {1, 2, 5, 10, 20, 50};
  return k < 6 ? ladder[k] : 100;
}

PropertyOutcome run_property_impl(const Property& p, const PropertyBudget& b,
                                  const std::function<void(const PropertyOutcome&, double)>& on_chunk) {
  PropertyOutcome o;
  o.name = p.name;
  o.op = op_of(p);
  o.kind = p.kind;
  o.backend = backend_of(p);
  o.seed = b.seed;
  for (const auto& bucket : p.buckets) o.buckets[bucket] = 0;
  if (p.buckets.empty() && !o.op.empty()) {
    try {
      for (const auto& bucket : spec_for(o.op).buckets) o.buckets[bucket] = 0;
    } catch (const std::invalid_argument&) {
      // An op without a fuzz spec: only the noted buckets are reported.
    }
  }
  const auto t0 = Clock::now();
  const int total = b.cases.value_or(b.seconds ? 0 : 100);
  o.passed = true;
  for (int k = 0;; ++k) {
    int n;
    if (b.seconds) {
      const double used = since(t0), left = *b.seconds - used;
      if (k > 0 && left <= 0) break;
      n = time_chunk(k);
      // Never plan a chunk much longer than the time left (at the pace seen so far), so the
      // budget is overrun by about one case, not one chunk.
      if (const int run = o.cases + o.discarded; run > 0 && used > 0)
        n = std::clamp(static_cast<int>(left / (used / run)), 1, n);
    } else {
      n = std::min(total - o.cases, 100);
      if (n <= 0) break;
    }
    const std::uint64_t seed = chunk_seed(b.seed, k);
    if (!run_chunk(p, seed, n, b.max_size, b.shrink, o)) {
      o.passed = false;
      o.seed = seed;
      o.repro_cases = n;
      break;
    }
    if (on_chunk) on_chunk(o, since(t0));
  }
  o.seconds = since(t0);
  return o;
}

std::string hex(std::uint64_t v) { return fmt::format("0x{:x}", v); }

bool matches_op(const std::string& op, const std::vector<std::string>& wanted) {
  if (wanted.empty()) return true;
  for (const auto& w : wanted)
    if (op == w || (!op.empty() && op.rfind(w + "/", 0) == 0)) return true;
  return false;
}

std::string file_stem(const PropertyOutcome& o) {
  std::string s = o.name;
  for (char& c : s)
    if (c == '/' || c == ' ') c = '.';
  return s + "-" + fmt::format("{:016x}", o.seed);
}

// Keeps the progress line to one terminal row.
std::string progress_line(std::size_t i, std::size_t n, const PropertyOutcome& o, double s) {
  std::string line = fmt::format("[{}/{}] {}  {} cases  {:.1f} s", i, n, o.name, o.cases, s);
  if (line.size() > 110) line.resize(110);
  return line;
}

}  // namespace

std::string op_of(const Property& p) {
  if (!p.op.empty()) return p.op;
  const auto a = p.name.find('/');
  if (a == std::string::npos) return {};
  const auto b = p.name.find('/', a + 1);
  const std::string head = p.name.substr(0, b);
  return find_op_contract(head) != nullptr ? head : std::string();
}

std::string backend_of(const Property& p) { return p.backend.empty() ? std::string("reference") : p.backend; }

std::uint64_t chunk_seed(std::uint64_t seed, int chunk) {
  return chunk == 0 ? seed : splitmix64(seed ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(chunk)));
}

double PropertyOutcome::cases_per_minute() const { return seconds > 0 ? cases * 60.0 / seconds : 0.0; }

PropertyOutcome run_property(const Property& p, const PropertyBudget& budget) {
  return run_property_impl(p, budget, {});
}

PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink) {
  PropertyBudget b;
  b.seed = seed;
  b.cases = max_success;
  b.max_size = max_size;
  b.shrink = shrink;
  return run_property(p, b);
}

Property differential_property(const OpFuzzSpec& spec, const Backend& backend, bool special_values) {
  GenConfig cfg;
  cfg.special_values = special_values;
  // Kernels reject the small shapes the CPU tiers use (head dims below 16, say); drawing
  // kernel-sized ones keeps discards rare.
  cfg.large = backend.name == "cuda";
  Property p;
  p.name = spec.op + (special_values ? "/differential-special-values/" : "/differential/") + backend.name;
  p.kind = "differential";
  p.op = spec.op;
  p.backend = backend.name;
  p.buckets = spec.buckets;
  p.body = [spec, backend, cfg] {
    Call c = spec.draw(cfg);
    // Non-finite inputs are data that kparity's deep checks reject even where upstream accepts
    // them (a NaN in a selected row must propagate, not be refused).
    if (cfg.special_values) c.options.deep = false;
    record_call(c);
    RC_LOG() << (c.description.empty() ? c.op : c.description) << "\n";
    DifferentialResult r;
    try {
      r = differential(c, backend, spec);
    } catch (const BackendUnsupported& e) {
      RC_DISCARD(std::string("unsupported by ") + backend.name + ": " + e.what());
    }
    note_errors(r);
    RC_LOG() << r.detail << "\n";
    if (!r.pass) RC_FAIL(backend.name + " breaks the differential rule: " + r.detail);
  };
  return p;
}

std::vector<Property> differential_properties(const std::vector<Backend>& backends,
                                              const std::vector<OpFuzzSpec>& specs) {
  std::vector<Property> out;
  for (const auto& b : backends)
    for (const auto& s : specs) {
      if (!b.implements(s.op)) continue;
      out.push_back(differential_property(s, b, false));
      out.push_back(differential_property(s, b, true));
    }
  return out;
}

void register_properties(std::vector<Property> extra) {
  for (auto& p : extra) extra_properties().push_back(std::move(p));
}

std::vector<Property> cpu_properties() {
  std::vector<Property> all;
  for (auto&& group : {kda_properties(), sparse_properties(), hostile_properties(), extra_properties()})
    for (const auto& p : group) all.push_back(p);
  return all;
}

std::vector<Property> all_properties() {
  std::vector<Property> all = cpu_properties();
  std::string why;
  for (auto& p : differential_properties(cuda_backends(why), op_specs())) all.push_back(std::move(p));
  for (auto& p : launcher_properties()) all.push_back(std::move(p));
  return all;
}

std::vector<Property> select_properties(const std::vector<Property>& all, const CampaignOptions& o) {
  std::vector<Property> out;
  for (const auto& p : all) {
    if (!o.property.empty() && p.name != o.property) continue;
    if (o.backend != "all" && backend_of(p) != o.backend) continue;
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
      << " properties; backends: " << names << "\n";
  log.flush();

  for (std::size_t i = 0; i < props.size(); ++i) {
    const Property& p = props[i];
    PropertyBudget b;
    b.seed = opt.seed;
    b.cases = opt.cases;
    b.max_size = opt.max_size;
    b.shrink = opt.shrink;
    if (opt.seconds) {
      // What is left, shared by the properties still to run: time a failing property did not use
      // goes to the others.
      const double left = std::max(0.0, *opt.seconds - since(t0));
      b.seconds = left / static_cast<double>(props.size() - i);
    }
    std::function<void(const PropertyOutcome&, double)> on_chunk;
    if (opt.progress) {
      // A terminal redraw per chunk would be thousands per second for the fast properties.
      on_chunk = [&, i, last = -1.0](const PropertyOutcome& o, double s) mutable {
        if (last >= 0 && s - last < 0.1) return;
        last = s;
        log << "\r\x1b[2K" << progress_line(i + 1, props.size(), o, s) << std::flush;
      };
      log << "\r\x1b[2K" << fmt::format("[{}/{}] {}", i + 1, props.size(), p.name) << std::flush;
    }
    PropertyOutcome o = run_property_impl(p, b, on_chunk);
    if (opt.progress) log << "\r\x1b[2K";
    log << outcome_line(o) << "\n";
    if (!o.passed) {
      o.repro = repro_command(o, opt);
      std::istringstream lines(o.message);
      for (std::string line; std::getline(lines, line);) log << "    " << line << "\n";
      log << "  repro: " << o.repro << "\n";
      if (o.failing_call && !opt.corpus_dir.empty()) {
        try {
          o.saved = save_call(*o.failing_call, opt.corpus_dir, file_stem(o),
                              {{"property", o.name}, {"seed", hex(o.seed)}, {"cases", std::to_string(o.repro_cases)}});
          log << "  saved: " << o.saved << " (replay: kparity run " << o.saved << "; kparity fuzz --replay "
              << o.saved << ")\n";
        } catch (const std::exception& e) {
          log << "  not saved: " << e.what() << "\n";
        }
      } else if (!o.failing_call) {
        log << "  not saved: the property recorded no call (record_call)\n";
      }
    }
    log.flush();
    r.properties.push_back(std::move(o));
  }
  r.seconds = since(t0);
  print_summary(r, log);
  if (!opt.report_path.empty()) {
    write_report(r, opt.report_path);
    log << "report: " << opt.report_path << "\n";
  }
  return r;
}

CampaignResult run_campaign(const CampaignOptions& o, std::ostream& log) {
  std::vector<BackendStatus> backends{{"reference", true, ""}};
  std::string why;
  std::vector<Backend> cuda;
  if (o.backend != "reference") {
    cuda = cuda_backends(why);
    backends.push_back({"cuda", !cuda.empty(), why});
  }
  std::vector<Property> all = o.backend == "cuda" ? std::vector<Property>{} : cpu_properties();
  for (auto& p : differential_properties(cuda, op_specs())) all.push_back(std::move(p));
  for (auto& p : launcher_properties())
    if (o.backend == "all" || o.backend == p.backend) all.push_back(std::move(p));
  // Only the CUDA backend was asked for and it is unavailable: nothing runs, and the summary's
  // skip line says why (like the GPU tests, a visible skip rather than a failure).
  std::vector<Property> props = all.empty() ? all : select_properties(all, o);
  return run_campaign(props, o, std::move(backends), log);
}

}  // namespace kparity::fuzz
