// kparity-fuzz: the default fuzz campaign (the README's main job) and one-property repros.
#include <CLI/CLI.hpp>
#include <iostream>

#include "kparity/fuzz/property.hpp"

int main(int argc, char** argv) {
  CLI::App app{"kparity-fuzz: property-based fuzzing of the kparity references, contracts and kernels"};
  kparity::fuzz::CampaignOptions o;
  std::uint64_t property_seed = 0;
  bool list = false;
  app.add_option("--seed", o.seed, "campaign seed (each property derives its own)");
  app.add_option("--cases", o.max_success, "passing cases each property needs");
  app.add_option("--max-size", o.max_size, "RapidCheck's final size parameter");
  app.add_option("--filter", o.filter, "run the properties whose name contains this");
  app.add_option("--property-seed", property_seed, "replay one property with exactly this seed (from a FAIL line)");
  app.add_flag("--no-shrink", [&](std::int64_t) { o.shrink = false; }, "report the first failing case as drawn");
  app.add_flag("--list", list, "list the properties and exit");
  CLI11_PARSE(app, argc, argv);
  if (list) {
    for (const auto& p : kparity::fuzz::all_properties()) std::cout << p.kind << "\t" << p.name << "\n";
    return 0;
  }
  if (property_seed != 0) {
    int failed = 0;
    for (const auto& p : kparity::fuzz::all_properties()) {
      if (!o.filter.empty() && p.name.find(o.filter) == std::string::npos) continue;
      auto r = kparity::fuzz::run_property(p, property_seed, o.max_success, o.max_size, o.shrink);
      std::cout << (r.passed ? "PASS " : "FAIL ") << p.name << " (" << r.cases << " cases)\n" << r.message;
      failed += r.passed ? 0 : 1;
    }
    return failed == 0 ? 0 : 1;
  }
  const auto outcomes = kparity::fuzz::run_campaign(o, std::cout);
  for (const auto& r : outcomes)
    if (!r.passed) return 1;
  return 0;
}
