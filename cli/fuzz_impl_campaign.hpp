#pragma once
// `kparity fuzz --impl` campaign options (issue 24): --preset draws a real model's shapes,
// --max-findings and --known tune the campaign with several findings per property
// (fuzz/backends/findings.hpp) that every plugin run goes through; --explain-seconds sets the
// explain step's budget (issue 33), for --impl and kparity's own campaign alike. Registered on the fuzz subcommand by main.cpp, used by
// fuzz_cmd.cpp's fuzz_impl.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace kparity::fuzz {
struct ImplPropertyOptions;
struct CampaignOptions;
struct Property;
}  // namespace kparity::fuzz

namespace kparity::cli {

struct ImplCampaignOptions {
  std::string preset;              // small, large, deepseek-v4, kimi-linear; empty: the plugin's device decides
  int max_findings = 0;            // findings per property; 0: the default, 5
  std::vector<std::string> known;  // finding ids or signatures accepted
  std::string pins;                // "<family>:<key>=<value>,..." (generators/pins.hpp); empty: none
  double explain_seconds = -1;     // >= 0: the explain step's budget per finding; < 0: the default (3 s)
};

// Adds --preset, --pins, --max-findings, --explain-seconds and --known to `fuzz` (storing into
// impl_campaign_options()).
void add_impl_campaign_options(CLI::App& fuzz);
ImplCampaignOptions& impl_campaign_options();

// Applies --preset and --pins to the plugin's property options and gives them ledgers for the findings;
// false (with the error printed) when the options cannot be applied.
bool apply_impl_campaign_options(fuzz::ImplPropertyOptions& po);
// Runs the selected properties through the campaign with several findings per property, each
// explained under c.explain (po from apply_impl_campaign_options, props built with it).
// A preset without shapes for a selected op exits with status 2 (--op selects the ops it has).
// Returns the exit status.
int run_impl_campaign(const std::vector<fuzz::Property>& props, const fuzz::ImplPropertyOptions& po,
                      const fuzz::CampaignOptions& c, const std::string& backend);

}  // namespace kparity::cli
