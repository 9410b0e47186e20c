// Running one property: chunked RapidCheck checks under a case or wall-clock budget, with per-case
// bucket and error collection (runner.hpp).
#include "kparity/fuzz/campaign/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <rapidcheck.h>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/core/random.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/harness_mutant.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace kparity::fuzz {
namespace {

// A campaign allocates and frees buffers of the same sizes case after case (the call's tensors, the
// oracle's and the faithful model's outputs, the a-priori bounds, the references' scratch). glibc
// serves a block above its mmap threshold (dynamic, from 128 KiB) with a fresh mapping and returns it
// on free, and trims the heap's free top above its trim threshold: each case paid the page faults of
// its large buffers again (5-6% of a kernel-sized sparse case's host time, issue 32). Once per
// process: blocks up to 32 MiB (glibc's largest threshold) come from the heap, and the heap keeps up
// to 1 GiB of free top. Left alone where the user tuned malloc (GLIBC_TUNABLES naming glibc.malloc).
void keep_freed_pages() {
#if defined(__GLIBC__)
  static std::once_flag once;
  std::call_once(once, [] {
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    if (tunables && std::strstr(tunables, "glibc.malloc")) return;
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  });
#endif
}

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Each field the larger of the two: the worst a property saw over its cases.
void keep_worst(ErrorStat& s, const ErrorStat& e) {
  s.backend = std::max(s.backend, e.backend);
  s.faithful = std::max(s.faithful, e.faithful);
  s.bound = std::max(s.bound, e.bound);
  s.ratio = std::max(s.ratio, e.ratio);
}

// Collects what each searched case noted. Only passing cases of the search count: shrink attempts
// re-run the body on smaller inputs and would skew the coverage, so their notes are dropped.
class CaseCollector : public rc::detail::TestListener {
 public:
  explicit CaseCollector(PropertyOutcome& out) : out_(out) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& d) override {
    if (d.result.type == rc::detail::CaseResult::Type::Failure && !failed_at) failed_at = Clock::now();
    auto buckets = take_buckets();
    auto errors = take_noted_errors();
    const int early = take_early_returns();
    if (d.result.type == rc::detail::CaseResult::Type::Discard) ++out_.discarded;
    if (d.result.type != rc::detail::CaseResult::Type::Success) return;
    if (early > 0) ++out_.early_returns, ++out_.discarded;
    for (auto& b : buckets) ++out_.buckets[b];
    for (const auto& [name, e] : errors) keep_worst(out_.max_errors[name], e);
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {
    take_early_returns();
    take_buckets();
    take_noted_errors();
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
  std::optional<Clock::time_point> failed_at;  // when the search's failing case ended: shrinking starts

 private:
  PropertyOutcome& out_;
};

// One RapidCheck check (one chunk). Returns true when it passed; on failure fills the message.
bool run_chunk(const Property& p, std::uint64_t seed, int cases, int max_size, bool shrink, PropertyOutcome& o) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = cases;
  params.maxSize = max_size;
  params.disableShrinking = !shrink || harness_mutant(HarnessMutant::shrink_returns_original);
  rc::detail::TestMetadata meta;
  meta.id = p.name;
  meta.description = p.name;
  CaseCollector listener(o);
  take_buckets();
  take_noted_errors();
  take_early_returns();
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
    if (listener.failed_at) o.shrink_seconds = since(*listener.failed_at);
  } else if (result.match(gave_up)) {
    o.cases += gave_up.numSuccess;
    msg << "gave up after " << gave_up.numSuccess << " passing cases (too many discards): " << gave_up.description
        << "\n";
  } else if (result.match(err)) {
    msg << "error: " << err.description << "\n";
  }
  take_buckets();
  take_noted_errors();
  take_early_returns();
  o.message = msg.str();
  return false;
}

// The chunk sizes of a time budget: small first, so a slow property still checks its budget
// early, then RapidCheck's default of 100.
int time_chunk(int k) {
  static constexpr int ladder[] = {1, 2, 5, 10, 20, 50};
  return k < 6 ? ladder[k] : 100;
}

}  // namespace

PropertyOutcome run_property(const Property& p, const PropertyBudget& b,
                             const std::function<void(const PropertyOutcome&, double)>& on_chunk) {
  keep_freed_pages();
  PropertyOutcome o;
  o.name = p.name;
  o.op = op_of(p);
  o.kind = p.kind;
  o.backend = backend_of(p);
  o.seed = b.seed;
  if (!p.skipped.empty()) {  // listed and reported, never run (property.hpp)
    o.skipped = p.skipped;
    o.passed = true;
    return o;
  }
  for (const auto& bucket : p.buckets) o.buckets[bucket] = 0;
  if (p.buckets.empty() && !o.op.empty()) {
    try {
      for (const auto& bucket : spec_for(o.op).buckets) o.buckets[bucket] = 0;
    } catch (const std::invalid_argument&) {
      // An op without a fuzz spec: only the noted buckets are reported.
    }
  }
  const auto t0 = Clock::now();
  const int total = b.cases.value_or(b.seconds ? 0 : kChunkCases);
  const int end = b.end_chunk < 0 ? chunk_count(total) : std::min(b.end_chunk, chunk_count(total));
  o.passed = true;
  o.first_chunk = b.first_chunk;
  o.chunk_stride = b.seconds ? b.chunk_stride : 1;
  for (int j = 0;; ++j) {
    int n, k;
    if (b.seconds) {
      const double used = since(t0), left = *b.seconds - used;
      if (j > 0 && left <= 0) break;
      k = b.first_chunk + j * b.chunk_stride;
      n = time_chunk(j);
      // Never plan a chunk much longer than the time left (at the pace seen so far), so the
      // budget is overrun by about one case, not one chunk.
      if (const int run = o.cases + o.discarded - o.early_returns; run > 0 && used > 0)
        n = std::clamp(static_cast<int>(left / (used / run)), 1, n);
    } else {
      k = b.first_chunk + j;
      if (k >= end) break;
      n = std::min(total - kChunkCases * k, kChunkCases);
    }
    const std::uint64_t seed = chunk_seed(b.seed, k);
    ++o.chunks_run;
    if (!run_chunk(p, seed, n, b.max_size, b.shrink, o)) {
      o.passed = false;
      o.seed = seed;
      o.repro_cases = n;
      break;
    }
    if (on_chunk) on_chunk(o, since(t0));
  }
  o.seconds = since(t0);
  // The bounds are set for the CI tier's 100 drawn cases (measured share + 3 sigma there); a shorter
  // run (a 5-case smoke test) is too small a sample to judge, so its share is reported, not failed.
  if (o.passed && o.cases + o.discarded - o.early_returns >= kChunkCases && o.discard_share() > p.max_discard_share) {
    o.passed = false;
    o.repro_cases = 0;
    o.message = fmt::format("{} of {} drawn cases unchecked ({} discarded, {} early returns): share {:.3f} > bound "
                            "{:.2f}{}\n",
                            o.discarded, o.cases + o.discarded - o.early_returns, o.discarded - o.early_returns,
                            o.early_returns, o.discard_share(), p.max_discard_share,
                            p.discard_why.empty() ? "" : " (" + p.discard_why + ")");
  }
  return o;
}

std::uint64_t chunk_seed(std::uint64_t seed, int chunk) {
  if (chunk == 0) return seed;
  std::uint64_t x = seed ^ (0x9e3779b97f4a7c15ull * static_cast<std::uint64_t>(chunk));
  return splitmix64(x);
}

double PropertyOutcome::discard_share() const {
  const int drawn = cases + discarded - early_returns;
  return drawn > 0 ? static_cast<double>(discarded) / drawn : 0.0;
}
int chunk_count(int cases) { return cases <= 0 ? 0 : (cases + kChunkCases - 1) / kChunkCases; }

double PropertyOutcome::cases_per_minute() const { return seconds > 0 ? cases * 60.0 / seconds : 0.0; }

PropertyOutcome run_property(const Property& p, const PropertyBudget& budget) { return run_property(p, budget, {}); }

PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink) {
  PropertyBudget b;
  b.seed = seed;
  b.cases = max_success;
  b.max_size = max_size;
  b.shrink = shrink;
  return run_property(p, b);
}

PropertyOutcome merge_chunk_runs(std::vector<PropertyOutcome> runs) {
  if (runs.empty()) throw std::invalid_argument("merge_chunk_runs: no runs");
  std::stable_sort(runs.begin(), runs.end(),
                   [](const PropertyOutcome& a, const PropertyOutcome& b) { return a.first_chunk < b.first_chunk; });
  const bool strided = std::any_of(runs.begin(), runs.end(), [](const PropertyOutcome& r) { return r.chunk_stride != 1; });
  // A shard that could not run the property (no device there) adds nothing to one that could.
  if (!std::all_of(runs.begin(), runs.end(), [](const PropertyOutcome& r) { return !r.skipped.empty(); }))
    std::erase_if(runs, [](const PropertyOutcome& r) { return !r.skipped.empty(); });
  PropertyOutcome m = runs.front();
  m.cases = m.discarded = m.early_returns = m.chunks_run = 0;
  m.seconds = 0.0;
  m.passed = true;
  m.buckets.clear();
  m.max_errors.clear();
  m.explain = nullptr;
  m.chunk_stride = strided ? 0 : 1;  // 0: interleaved runs, no single stride
  const PropertyOutcome* failure = nullptr;
  for (const auto& r : runs) {
    if (failure && !strided) break;
    m.cases += r.cases;
    m.discarded += r.discarded;
    m.early_returns += r.early_returns;
    m.seconds += r.seconds;
    m.chunks_run += r.chunks_run;
    for (const auto& [b, n] : r.buckets) m.buckets[b] += n;
    for (const auto& [t, e] : r.max_errors) keep_worst(m.max_errors[t], e);
    if (!r.passed && (!failure || r.failed_chunk() < failure->failed_chunk())) failure = &r;
  }
  if (failure) {
    m.passed = false;
    m.seed = failure->seed;
    m.message = failure->message;
    m.repro_cases = failure->repro_cases;
    m.failing_call = failure->failing_call;
    m.repro = failure->repro;
    m.saved = failure->saved;
    m.explain = failure->explain;
  }
  return m;
}

}  // namespace kparity::fuzz
