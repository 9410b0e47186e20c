#pragma once
// `kparity fuzz --self-test`: the harness tested on known bugs (issue 7). Each planted bug is a fake
// kernel made from the faithful reference, run through the shared differential rule
// (differential.hpp) on calls drawn from its op's generator; the self-test reports after how many
// cases each bug was caught. The controls (backends/reference.hpp: correct fp32 kernels that
// accumulate in other orders, with fma, or in fp64) run each op's differential properties through
// the campaign's runner and must never be flagged, so a rule that flags everything, or one too
// tight for a real kernel's rounding, cannot pass either.
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"

namespace kparity::fuzz {

struct PlantedBug {
  std::string name;  // "inclusive-suffix-decay"; the backend is "selftest/<name>"
  std::string op;    // the op it is planted in
  std::string what;  // one line: the bug
  Backend backend;
};

// The eight bugs, in its order.
std::vector<PlantedBug> planted_bugs();

// Planted bugs the shared rule cannot see as the references stand, each with the reason and what
// would make it visible (the known-failure ledger of the testing guide, 2.9). Such a bug that stays
// uncaught is an expected miss; one that gets caught fails the self-test until its entry is removed.
struct BlindSpot {
  std::string bug;
  std::string reason;
};
const std::vector<BlindSpot>& blind_spots();

struct SelfTestOptions {
  std::uint64_t seed = 0x6b70617269747931ull;
  int max_cases = 500;           // per planted bug, and per op for its controls (split among them)
  std::vector<std::string> bugs;  // names (with or without "selftest/"); empty: all
};

struct SelfTestOutcome {
  std::string backend;  // "selftest/<bug>", or "control/<accumulation>[ (special values)]" for a control
  std::string op;
  bool control = false;
  bool flagged = false;  // the rule (or an exception from the backend) failed a case
  bool threw = false;    // flagged through an exception rather than a mismatch
  int cases = 0;         // flagged: the 1-based number of the first failing case; else cases run
  int unsupported = 0;   // cases the backend declined (BackendUnsupported), not counted in `cases`;
                         // for a control: the property's unchecked cases (discards, early returns)
  std::string detail;    // the rule's one-line verdict (or the exception) for the first failure
  std::string blind;     // a ledgered blind spot: its reason (blind_spots())
  // The bug was caught by the rule (or, for a ledgered blind spot, still not flagged at all), or
  // the control stayed clean.
  bool ok() const {
    if (control || !blind.empty()) return !flagged;
    return flagged && !threw;
  }
};

// Every selected bug over its op's case sequence (case i of an op is the same call for every bug),
// then the controls of every op of the selected bugs, each property on the same seed. Throws std::invalid_argument for
// an unknown bug name.
std::vector<SelfTestOutcome> self_test(const SelfTestOptions& o, std::ostream& log);
// self_test() plus the summary table; 0 only if every bug outside the ledger was caught by the
// rule, no ledgered one was, and every control stayed clean; else 1.
int run_self_test(std::ostream& log, const SelfTestOptions& o);

}  // namespace kparity::fuzz
