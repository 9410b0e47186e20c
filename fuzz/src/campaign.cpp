#include <iomanip>
#include <ostream>
#include <rapidcheck.h>
#include <sstream>

#include "kparity/fuzz/property.hpp"

namespace kparity::fuzz {
namespace {

std::vector<Property>& extra_properties() {
  static std::vector<Property> v;
  return v;
}

// FNV-1a: each property gets its own stream from the campaign seed, stable across builds.
std::uint64_t mix(std::uint64_t seed, const std::string& name) {
  std::uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char ch : name) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace

#ifdef KPARITY_FUZZ_KERNELS
std::vector<Property> kernel_properties();  // fuzz/cuda: empty when no device is present
#endif

void register_properties(std::vector<Property> extra) {
  for (auto& p : extra) extra_properties().push_back(std::move(p));
}

std::vector<Property> all_properties() {
  std::vector<Property> all;
#ifdef KPARITY_FUZZ_KERNELS
  static const std::vector<Property> kernels = kernel_properties();
#else
  static const std::vector<Property> kernels;
#endif
  for (auto&& group : {kda_properties(), sparse_properties(), hostile_properties(), kernels, extra_properties()})
    for (const auto& p : group) all.push_back(p);
  return all;
}

PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink) {
  rc::detail::TestParams params;
  params.seed = seed;
  params.maxSuccess = max_success;
  params.maxSize = max_size;
  params.disableShrinking = !shrink;
  rc::detail::TestMetadata meta;
  meta.id = p.name;
  meta.description = p.name;
  const auto result = rc::detail::checkTestable(p.body, meta, params);
  PropertyOutcome o{p.name, false, 0, seed, {}};
  rc::detail::SuccessResult ok;
  rc::detail::FailureResult fail;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error err;
  std::ostringstream msg;
  if (result.match(ok)) {
    o.passed = true;
    o.cases = ok.numSuccess;
  } else if (result.match(fail)) {
    o.cases = fail.numSuccess;
    msg << fail.description << "\n";
    for (const auto& [type, value] : fail.counterExample) msg << "  " << type << ": " << value << "\n";
  } else if (result.match(gave_up)) {
    o.cases = gave_up.numSuccess;
    msg << "gave up after " << gave_up.numSuccess << " cases: " << gave_up.description;
  } else if (result.match(err)) {
    msg << "error: " << err.description;
  }
  o.message = msg.str();
  return o;
}

std::vector<PropertyOutcome> run_campaign(const CampaignOptions& opt, std::ostream& log) {
  std::vector<PropertyOutcome> outcomes;
  log << "kparity fuzz campaign: seed=0x" << std::hex << opt.seed << std::dec << " max_success=" << opt.max_success
      << " max_size=" << opt.max_size << "\n";
  for (const auto& p : all_properties()) {
    if (!opt.filter.empty() && p.name.find(opt.filter) == std::string::npos) continue;
    const std::uint64_t seed = mix(opt.seed, p.name);
    auto o = run_property(p, seed, opt.max_success, opt.max_size, opt.shrink);
    log << (o.passed ? "PASS " : "FAIL ") << p.name << " (" << o.cases << " cases, seed " << seed << ")\n";
    if (!o.passed) {
      log << o.message << "  repro: kparity-fuzz --filter '" << p.name << "' --property-seed " << seed << " --cases "
          << opt.max_success << "\n";
    }
    outcomes.push_back(std::move(o));
  }
  int failed = 0;
  log << "\n| property | kind | cases | result |\n|---|---|---|---|\n";
  const auto props = all_properties();
  for (const auto& o : outcomes) {
    std::string kind;
    for (const auto& p : props)
      if (p.name == o.name) kind = p.kind;
    log << "| " << o.name << " | " << kind << " | " << o.cases << " | " << (o.passed ? "pass" : "FAIL") << " |\n";
    failed += o.passed ? 0 : 1;
  }
  log << "\n" << outcomes.size() - static_cast<std::size_t>(failed) << " of " << outcomes.size() << " properties passed\n";
  return outcomes;
}

}  // namespace kparity::fuzz
