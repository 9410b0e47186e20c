// `kparity fuzz --impl` campaign options (fuzz_impl_campaign.hpp).
#ifdef KPARITY_HAVE_FUZZ
#include "fuzz_impl_campaign.hpp"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>

#include "commands.hpp"
#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/generators/pins.hpp"
#include "kparity/fuzz/generators/presets.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::cli {

namespace fz = kparity::fuzz;

ImplCampaignOptions& impl_campaign_options() {
  static ImplCampaignOptions o;
  return o;
}

void add_impl_campaign_options(CLI::App& fuzz) {
  ImplCampaignOptions& o = impl_campaign_options();
  std::string names;
  for (const auto& p : fz::shape_presets()) names += "\n  " + p.name + ": " + p.what;
  fuzz.add_option("--preset", o.preset, "With --impl: the shapes to draw:" + names)
      ->check(CLI::IsMember([] {
        std::vector<std::string> v;
        for (const auto& p : fz::shape_presets()) v.push_back(p.name);
        return v;
      }()));
  fuzz.add_option("--pins", o.pins,
                  "With --impl: hold a JIT kernel's compile-relevant sizes, dtypes and layouts to a few values, "
                  "FAMILY:key=value,... with value lists as a|b, e.g. 'kda:K=32,V=32,H=1,HV=2,act=bf16,L=4|17' "
                  "(sparse keys: D, H, dtype, sink; kda keys: H, HV, K, V, L, act, state, params, ring; both: "
                  "layout=compact, every tensor contiguous at offset 0); everything else is drawn as usual");
  fuzz.add_option("--max-findings", o.max_findings,
                  "With --impl: report up to this many distinct findings per property (default 5; each shrunk and "
                  "explained, with its repro); the run goes on after a failure, excluding what it found")
      ->check(CLI::PositiveNumber);
  fuzz.add_option("--explain-seconds", o.explain_seconds,
                  "The explain step's budget per finding in seconds (default 3; 0: off): after each shrink, vary one "
                  "parameter of the call at a time and say which ones the failure needs. For every finding of --impl "
                  "and of the differential properties of kparity's own backends (cuda, control, selftest)")
      ->check(CLI::NonNegativeNumber);
  fuzz.add_option("--known", o.known,
                  "With --impl: an accepted finding (its id or signature as a report prints it), excluded from the "
                  "start; recurrences are counted, not failures (repeatable)");
}

bool apply_impl_campaign_options(fz::ImplPropertyOptions& po) {
  const ImplCampaignOptions& o = impl_campaign_options();
  po.ledgers = std::make_shared<std::map<std::string, std::shared_ptr<fz::FindingLedger>>>();
  if (!o.pins.empty()) {
    static fz::ShapePins pins;  // the options outlive the properties built from them
    const std::size_t colon = o.pins.find(':');
    if (colon == std::string::npos) {
      std::fprintf(stderr, "error: --pins takes FAMILY:key=value,... (sparse: or kda:), got '%s'\n", o.pins.c_str());
      return false;
    }
    try {
      pins = fz::parse_shape_pins(o.pins.substr(colon + 1), o.pins.substr(0, colon) + "/");
    } catch (const std::invalid_argument& e) {
      std::fprintf(stderr, "error: --%s\n", e.what());
      return false;
    }
    if (!o.preset.empty() && o.preset != "small" && o.preset != "large") {
      std::fprintf(stderr, "error: --pins and --preset %s do not go together (the preset fixes the shapes)\n",
                   o.preset.c_str());
      return false;
    }
    po.pins = &pins;
  }
  if (o.preset.empty()) return true;
  if (o.preset == "small" || o.preset == "large") {
    po.large = o.preset == "large";
    return true;
  }
  po.preset = fz::find_shape_preset(o.preset);
  if (!po.preset) {
    std::fprintf(stderr, "error: unknown preset '%s' (known: %s)\n", o.preset.c_str(), fz::shape_preset_names().c_str());
    return false;
  }
  po.large = false;
  return true;
}

int run_impl_campaign(const std::vector<fz::Property>& props, const fz::ImplPropertyOptions& po,
                      const fz::CampaignOptions& c, const std::string& backend) {
  const ImplCampaignOptions& o = impl_campaign_options();
  if (po.preset)
    for (const auto& prop : props)
      if (const std::string why = fz::preset_mismatch(*po.preset, fz::op_of(prop)); !why.empty()) {
        std::fprintf(stderr, "error: %s (select the ops it has shapes for with --op)\n", why.c_str());
        return kExitBadInput;
      }
  fz::CampaignOptions one = c;
  if (!o.preset.empty()) one.repro_args += " --preset " + o.preset;
  if (!o.pins.empty()) one.repro_args += " --pins '" + o.pins + "'";
  // Every finding of a plugin goes through the campaign with findings: shrunk, explained, merged
  // with the findings that need the same thing (one bug, one finding). It has the plain campaign's
  // workers, time budget and shards (backends/findings.hpp), so no plugin run needs the plain one.
  fz::FindingRunOptions fo;
  fo.max_findings = o.max_findings > 0 ? o.max_findings : 5;
  fo.known = o.known;
  fo.explain = c.explain;
  const fz::FindingCampaign r = fz::run_finding_campaign(props, *po.ledgers, one, fo, {{backend, true, ""}}, std::cout);
  if (!c.report_path.empty()) {
    std::ofstream f(c.report_path);
    f << r.report().dump(2) << "\n";
    if (!f) {
      std::fprintf(stderr, "error: cannot write the report to %s\n", c.report_path.c_str());
      return kExitBadInput;
    }
    std::cout << "report: " << c.report_path << "\n";
  }
  return r.result.passed() ? kExitOk : kExitMismatch;
}

}  // namespace kparity::cli
#endif  // KPARITY_HAVE_FUZZ
