#pragma once
// The references as the differential rule runs them (rule.hpp): the oracle and
// the faithful model on clones of a call, a backend under test on a poisoned clone, and the
// faithful model seen as a backend (the self-test's planted bugs start from it).
#include <optional>
#include <string>
#include <vector>

#include "kparity/judge/backend.hpp"
#include "kparity/judge/call.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/planted_fault.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::judging {

// The oracle run of `call` on a clone (written bf16/f16 tensors widened to fp32 when the op's
// contract accepts that, as `kparity run --out-dtype f32` does). Throws what the reference throws.
Call run_oracle(const Call& call);
// The planted fault a harness mutant (harness_mutant.hpp) puts into the oracle, if any: run_oracle
// runs under it, and so does the oracle property's shipped evaluation (oracle_properties.cpp).
std::optional<reference::PlantedFault> oracle_mutant_fault();

// The faithful run of `call` on a clone, in the call's dtypes, under precision profile `profile`
// (reference/precision_profile.hpp). Without one, the thread's current profile: the compatibility
// shim for callers that still set it with a reference::PrecisionProfileScope (the references read
// the profile from that thread-local at their rounding points; run_faithful sets it around the run).
Call run_faithful(const Call& call, std::optional<reference::PrecisionProfile> profile = std::nullopt);
// `backend` run on a clone of `call` whose pure outputs are poisoned with NaN first.
Call run_backend(const Call& call, const Backend& backend);

// run_oracle and run_faithful as the rule reads them: the returned Call holds the written tensors
// only (the same values as run_oracle's and run_faithful's), and the references read the inputs
// through views of `call`'s instead of copies (issue 32 (3): copying a kernel-sized call's inputs
// twice a case, with the pages the copies map, was a few percent of its host time). The references
// never write an input; a backend under test runs on a full clone (run_backend).
Call run_oracle_written(const Call& call);
// run_oracle_written; where the op's oracle and bound share their work (reference::
// has_oracle_and_bound) and no test fault or harness mutant touches the oracle, also the call's
// a-priori bounds from the same pass into `bounds` (reference::error_bound's, under `profile` as
// the rule takes them); else `bounds` is left empty.
Call run_oracle_written(const Call& call, std::optional<reference::ErrorBounds>& bounds,
                        std::optional<reference::PrecisionProfile> profile);
Call run_faithful_written(const Call& call, std::optional<reference::PrecisionProfile> profile = std::nullopt);

// The faithful reference seen as a backend under test: it passes the rule by construction
// (err_b = err_f), so the self-test's planted bugs start from it and the harness tests use it.
Backend faithful_backend(std::vector<std::string> ops);

// Controls (issue 19 item 2): "control/<accumulation>", the faithful reference under a control
// accumulation of kparity/reference/accumulate.hpp (reversed, pairwise, tile16, fma, fp64). Each is
// a correct fp32 kernel whose error differs from the faithful model's, as a real kernel's does, so
// the rule passing it is a measurement (no false alarm), not a tautology. `kparity fuzz --backend
// control` runs their differential properties through the campaign; the self-test runs them too.
Backend control_backend(reference::Accumulation a, std::vector<std::string> ops);
// One control backend per control accumulation, each implementing `ops`.
std::vector<Backend> control_backends(const std::vector<std::string>& ops);

}  // namespace kparity::judging
