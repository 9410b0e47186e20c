#pragma once
// Named RapidCheck properties and the campaign that runs them with explicit seeds and budgets, so
// a failure prints a one-line repro (property name + seed) and the minimal counterexample.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "kparity/core/tensor_view.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::fuzz {

struct Property {
  std::string name;  // "<op>/<relation>", e.g. "kda/replayssm_decode/equals-packed-decode"
  std::string kind;  // metamorphic | hostile | kernel
  std::function<void()> body;  // draws with *gen, asserts with RC_ASSERT
};

std::vector<Property> kda_properties();
std::vector<Property> sparse_properties();
std::vector<Property> hostile_properties();
// Every CPU property (the default campaign), plus kernel-vs-reference ones when registered.
std::vector<Property> all_properties();
void register_properties(std::vector<Property> extra);

struct CampaignOptions {
  std::uint64_t seed = 0x6b70617269747931ull;
  int max_success = 100;
  int max_size = 100;
  std::string filter;  // substring of the property name; empty = all
  bool shrink = true;
};

struct PropertyOutcome {
  std::string name;
  bool passed = false;
  int cases = 0;
  std::uint64_t seed = 0;
  std::string message;  // failure description and counterexample
};

// Runs the matching properties; prints one line per property and a summary table.
std::vector<PropertyOutcome> run_campaign(const CampaignOptions& o, std::ostream& log);
PropertyOutcome run_property(const Property& p, std::uint64_t seed, int max_success, int max_size, bool shrink);

// The reference of `op` run on arguments by name (throws what the reference throws).
void run_reference(std::string_view op, const ArgBag& bag, reference::Precision p, const ValidateOptions& o);

// |a - b| <= atol + rtol * |b| elementwise over equal shapes; on failure returns a description of
// the worst element (index, both values, the bound), else an empty string.
std::string compare_close(const TensorView& actual, const TensorView& expected, double atol, double rtol);
bool all_finite(const TensorView& v);

}  // namespace kparity::fuzz
