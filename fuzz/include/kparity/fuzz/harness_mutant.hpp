#pragma once
// The harness mutants live with the rule they break (kparity/judge/harness_mutant.hpp); the fuzz
// harness's own (shrink, replay) branch on the same switch.
#include "kparity/judge/harness_mutant.hpp"

namespace kparity::fuzz {
using judging::active_harness_mutant;
using judging::harness_mutant;
using judging::harness_mutants;
using judging::HarnessMutant;
using judging::HarnessMutantInfo;
}  // namespace kparity::fuzz
