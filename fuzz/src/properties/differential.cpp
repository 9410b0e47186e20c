// The differential properties (differential.hpp); the rule itself is kparity/judge/rule.hpp.
#include "kparity/fuzz/properties/differential.hpp"

#include <algorithm>
#include <rapidcheck.h>

#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/judge/kernel_ops.hpp"

namespace kparity::fuzz {
namespace {

thread_local std::map<std::string, ErrorStat> t_errors;

// A spec's floors as the rule takes them: a spec without floors (a test's) has none, floor 0.
judging::RuleOptions spec_options(const OpFuzzSpec& spec) {
  judging::RuleOptions o;
  o.floor = spec.abs_floor ? spec.abs_floor : [](const Call&, std::string_view, const Call*) { return 0.0; };
  return o;
}

}  // namespace

DifferentialResult judge(const Call& input, const Call& oracle, const Call& faithful, const Call& backend,
                         const OpFuzzSpec& spec) {
  return judging::rule(input, oracle, faithful, backend, spec_options(spec));
}

DifferentialResult differential(const Call& call, const Backend& backend, const OpFuzzSpec& spec) {
  return judging::run_and_judge(call, backend, spec_options(spec));
}

void note_errors(const DifferentialResult& r) {
  for (const auto& e : r.tensors) {
    ErrorStat& s = t_errors[e.name];
    s.backend = std::max(s.backend, e.backend);
    s.faithful = std::max(s.faithful, e.faithful);
    s.bound = std::max(s.bound, e.bound);
    s.ratio = std::max(s.ratio, e.ratio);
  }
}

std::map<std::string, ErrorStat> take_noted_errors() {
  std::map<std::string, ErrorStat> out;
  out.swap(t_errors);
  return out;
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
  // The campaign's explain step judges a finding's variants as the body does: the backend, then
  // the rule under the thread's profile (no declared domain: every valid call of the op is in it).
  p.check = implementation_check(spec, backend, "differential", std::nullopt, {}, {});
  return p;
}

std::vector<Property> differential_properties(const std::vector<Backend>& backends,
                                              const std::vector<OpFuzzSpec>& specs) {
  std::vector<Property> out;
  for (const auto& b : backends)
    for (const auto& s : specs) {
      if (!b.implements(s.op)) continue;
      // An op whose kernel this build lacks (kda/chunk without KPARITY_CHUNK_KERNEL): listed and
      // reported as skipped, with the reason, rather than drawn and discarded case after case.
      const std::string missing = b.name == "cuda" ? judging::kernel_not_built(s.op) : std::string();
      for (const bool special : {false, true}) {
        out.push_back(differential_property(s, b, special));
        if (!missing.empty()) out.back().skipped = missing, out.back().body = nullptr;
      }
    }
  return out;
}

}  // namespace kparity::fuzz
