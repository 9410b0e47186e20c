// `kparity fuzz`: the campaign (the README's main job), one-property repros, the planted-bug
// self-test and corpus replay.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>

#include "commands.hpp"
#include "fuzz_impl_campaign.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/merge.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/campaign/selftest.hpp"
#include "kparity/fuzz/campaign/workers.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#ifdef KPARITY_FUZZ_PLUGINS
#include "kparity/fuzz/backends/external.hpp"
#endif

namespace kparity::cli {
namespace {

namespace fz = kparity::fuzz;

std::uint64_t parse_seed(const std::string& s) {
  std::size_t used = 0;
  const std::uint64_t v = std::stoull(s, &used, 0);  // base 0: decimal, or 0x hex as printed by repros
  if (used != s.size()) throw std::invalid_argument("trailing characters");
  return v;
}

// What the campaign with these options would run; a property that cannot run here ends with
// "skipped: <why>".
int list(const FuzzOptions& o) {
  fz::CampaignOptions c;
  c.ops = o.ops;
  c.backend = o.backend;
  c.property = o.property;
  std::vector<fz::BackendStatus> backends;
  for (const auto& p : fz::campaign_properties(c, backends)) {
    const std::string op = fz::op_of(p);
    std::printf("%-13s %-10s %-22s %s%s\n", p.kind.c_str(), fz::backend_of(p).c_str(), op.empty() ? "-" : op.c_str(),
                p.name.c_str(), p.skipped.empty() ? "" : ("  skipped: " + p.skipped).c_str());
  }
  for (const auto& b : backends)
    if (!b.available) std::printf("%s: skipped, %s\n", b.name.c_str(), b.reason.c_str());
  return kExitOk;
}

// KPARITY_FUZZ_PROFILE, when set: the precision profile (reference/precision_profile.hpp) the
// faithful model runs under; false (after a message) when it names none.
bool env_profile(std::optional<reference::PrecisionProfile>& out) {
  const char* p = std::getenv("KPARITY_FUZZ_PROFILE");
  if (p == nullptr) return true;
  out = reference::parse_profile(p);
  if (!out)
    std::fprintf(stderr, "error: KPARITY_FUZZ_PROFILE=%s is not a precision profile (faithful, tf32-dot or its alias "
                         "sglang-triton, fla-chunk, kparity-chunk)\n", p);
  return out.has_value();
}

int replay(const FuzzOptions& o) {
  // A saved upstream output (expected.*) is judged with the rule's faithful model under the
  // kernel's profile, as the campaign that found it judged it.
  std::optional<reference::PrecisionProfile> profile;
  if (!env_profile(profile)) return kExitBadInput;
  reference::PrecisionProfileScope scope(profile.value_or(reference::precision_profile()));
  std::string why;
  const auto backends = fz::cuda_backends(why);
  if (backends.empty()) std::printf("cuda: skipped, %s (replay checks the references only)\n", why.c_str());
  std::fflush(stdout);
  return fz::replay_corpus(o.replay, backends, std::cout) == 0 ? kExitOk : kExitMismatch;
}

int self_test(const FuzzOptions& o, std::uint64_t seed) {
  fz::SelfTestOptions st;
  st.seed = seed;
  if (o.cases) st.max_cases = *o.cases;
  return fz::run_self_test(std::cout, st) == 0 ? kExitOk : kExitMismatch;
}

#ifdef KPARITY_FUZZ_PLUGINS
// `--impl lib.so`: the plugin's implementation properties (external.hpp) instead of kparity's own;
// the contract property runs only when --property names it (a kernel may skip checks on purpose).
// KPARITY_FUZZ_CASE_TIMEOUT sets the per-call time limit in seconds (default 30), KPARITY_FUZZ_PROFILE
// the precision profile of the faithful model (reference/precision_profile.hpp; default faithful).
int fuzz_impl(const FuzzOptions& o, fz::CampaignOptions c) {
  std::shared_ptr<const abi::Plugin> plugin;
  try {
    plugin = abi::Plugin::load(o.impl);
  } catch (const abi::PluginError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
  if (plugin->device().is_cuda()) {
    std::string why;
    // With workers the device is probed in a child: a forked worker cannot use a CUDA context this
    // process made (the campaign's own probe does the same, campaign_properties).
    if (fz::cuda_backends(fz::probe_cuda(c.jobs > 1), why).empty()) {
      std::fprintf(stderr, "error: %s is a CUDA plugin and this machine cannot run it: %s\n", plugin->name().c_str(),
                   why.empty() ? "kparity was built without its CUDA kernels" : why.c_str());
      return kExitBadInput;
    }
  }
  fz::ExternalOptions eo;
  if (const char* t = std::getenv("KPARITY_FUZZ_CASE_TIMEOUT")) {
    char* end = nullptr;
    eo.case_timeout = std::strtod(t, &end);
    if (end == t || *end != '\0' || !(eo.case_timeout > 0)) {
      std::fprintf(stderr, "error: KPARITY_FUZZ_CASE_TIMEOUT=%s is not a positive number of seconds\n", t);
      return kExitBadInput;
    }
  }
  const fz::Backend backend = fz::plugin_backend(plugin, eo);
  fz::ImplPropertyOptions po;
  po.large = po.on_device = plugin->device().is_cuda();
  po.kinds.push_back("contract");
  std::optional<reference::PrecisionProfile> profile;
  if (!env_profile(profile)) return kExitBadInput;
  if (profile) po.profile = *profile;
  if (!apply_impl_campaign_options(po)) return kExitBadInput;  // --preset, --max-findings, --known
  std::vector<fz::Property> props;
  for (auto& p : fz::implementation_properties(backend, fz::op_specs(), po))
    if (p.kind != "hostile" || p.name == c.property) props.push_back(std::move(p));
  c.backend = "all";
  c.repro_args = "--impl " + o.impl;
  props = fz::select_properties(props, c);
  std::printf("implementation: %s (%s, %s), ops: ", plugin->name().c_str(), o.impl.c_str(),
              plugin->device().str().c_str());
  for (std::size_t i = 0; i < plugin->ops().size(); ++i) std::printf("%s%s", i ? ", " : "", plugin->ops()[i].c_str());
  std::printf("\n");
  std::fflush(stdout);
  return run_impl_campaign(props, po, c, backend.name);
}

#else
int fuzz_impl(const FuzzOptions&, fz::CampaignOptions) {
  std::fprintf(stderr, "error: --impl is unavailable: this kparity was built without DLPack's header "
                       "(install libdlpack-dev and rebuild)\n");
  return kExitBadInput;
}
#endif

}  // namespace

int fuzz(const FuzzOptions& o) {
  std::uint64_t seed = fz::kDefaultSeed;
  if (!o.seed.empty()) {
    try {
      seed = parse_seed(o.seed);
    } catch (const std::exception&) {
      std::fprintf(stderr, "error: --seed %s is not a decimal or 0x hex 64-bit number\n", o.seed.c_str());
      return kExitBadInput;
    }
  }
  try {
    if (o.list) return list(o);
    if (!o.replay.empty()) return replay(o);
    if (o.self_test) return self_test(o, seed);

    fz::CampaignOptions c;
    c.seed = seed;
    c.ops = o.ops;
    c.backend = o.backend;
    c.property = o.property;
    c.cases = o.cases;
    c.seconds = o.seconds;
    if (!c.cases && !c.seconds) c.seconds = kDefaultFuzzSeconds;
    c.max_size = o.max_size;
    c.shrink = !o.no_shrink;
    c.progress = isatty(STDOUT_FILENO) != 0;
    c.corpus_dir = o.corpus;
    c.report_path = o.report;
    c.jobs = o.jobs.value_or(fz::default_jobs());
    if (!o.shard.empty()) c.shard = fz::parse_shard(o.shard);
    if (impl_campaign_options().explain_seconds >= 0) c.explain.seconds = impl_campaign_options().explain_seconds;
    if (!o.impl.empty()) return fuzz_impl(o, c);
    const fz::CampaignResult r = fz::run_campaign(c, std::cout);
    return r.passed() ? kExitOk : kExitMismatch;
  } catch (const std::invalid_argument& e) {  // --op / --property that match nothing, a bad --shard
    std::fflush(stdout);
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
}

int fuzz_merge(const FuzzMergeOptions& o) {
  std::vector<fz::CampaignResult> shards;
  fz::CampaignResult merged;
  try {
    for (const auto& path : o.reports) shards.push_back(fz::read_report(path));
    merged = fz::merge_shards(shards);
  } catch (const std::exception& e) {  // unreadable reports, shards that do not fit together
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
  std::printf("kparity fuzz merge: %zu shard reports, seed 0x%llx\n", shards.size(),
              static_cast<unsigned long long>(merged.options.seed));
  for (const auto& p : merged.properties) std::printf("%s\n", fz::outcome_line(p).c_str());
  std::fflush(stdout);
  fz::print_summary(merged, std::cout);
  if (!o.output.empty()) {
    try {
      fz::write_report(merged, o.output);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "error: %s\n", e.what());
      return kExitBadInput;
    }
    std::cout << "report: " << o.output << "\n";
  }
  return merged.passed() ? kExitOk : kExitMismatch;
}

}  // namespace kparity::cli
