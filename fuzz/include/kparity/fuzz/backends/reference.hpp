#pragma once
// The oracle, faithful and backend runs of the rule (kparity/judge/runs.hpp), named for the fuzz harness.
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/judge/runs.hpp"

namespace kparity::fuzz {
using judging::control_backend;
using judging::control_backends;
using judging::faithful_backend;
using judging::oracle_mutant_fault;
using judging::run_backend;
using judging::run_faithful;
using judging::run_faithful_written;
using judging::run_oracle;
using judging::run_oracle_written;
}  // namespace kparity::fuzz
