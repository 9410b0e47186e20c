#pragma once
// Named RapidCheck properties and the lists of them: what `kparity fuzz` can run. A property's body
// draws with *gen and asserts with RC_ASSERT; the campaign (campaign/) runs it under a budget.
//
// Where the lists are defined: kda_properties() in properties/kda_properties.cpp (and its
// special-values half), sparse_properties() in properties/sparse_properties.cpp (likewise),
// hostile_properties() in properties/hostile_properties.cpp, oracle_properties() in
// properties/oracle_properties.cpp, launcher_properties() in
// backends/cuda/rejected_launch.cpp (or backends/no_kernels.cpp), the differential ones in
// properties/differential.hpp.
#include <functional>
#include <string>
#include <vector>

#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

struct CallVerdict;  // campaign/explain.hpp

struct Property {
  std::string name;  // "<op>/<relation>", e.g. "kda/replayssm_decode/equals-packed-decode"
  std::string kind;  // metamorphic | hostile | differential | ...
  std::function<void()> body;  // draws with *gen, asserts with RC_ASSERT
  std::string op;       // empty: derived from the name (see op_of)
  // empty: "reference" (a CPU property); "cuda" for kernel properties on a device; "launcher" for
  // the kernel launchers on host memory (no device needed)
  std::string backend;
  // Every bucket the property can note, reported with a zero count when never hit (coverage
  // gaps). Empty: the buckets of its op's spec, when the op has one.
  std::vector<std::string> buckets;
  // The largest share of drawn cases the property may leave unchecked (RC_DISCARD plus early
  // returns, note_early_return) before its run fails (issue 19 item 3). The default: a property is
  // meant to check what its generator draws; past one case in ten unchecked, the budget it reports
  // overstates what was checked and the checked cases are a filtered subset of the generator, so the
  // generator (or the property) must be fixed. A property allowed more says why in `discard_why`.
  double max_discard_share = 0.10;
  std::string discard_why;
  // Non-empty: the property cannot run in this build or on this machine, and this says why ("no
  // CUDA device", "kernels not built (...)"). It is still listed (`kparity fuzz --list`) and
  // reported (a skipped outcome with the reason, never run), so a campaign without a device shows
  // what it did not check instead of silently checking less (issue 19 item 3). `body` is empty.
  std::string skipped;
  // How the explain step after shrinking (campaign/explain.hpp) judges a variant of a failing call
  // as this property judges its cases: set by the differential properties of a backend under test
  // (properties/differential.hpp), so that the campaign (campaign.hpp) explains their findings.
  // Empty: a failure is reported without the explain step.
  std::function<CallVerdict(const Call&)> check;
};

// A property body that returns without checking what it drew (a call with nothing to duplicate, a
// magnitude outside the relation's domain) notes it first, with the reason; the runner counts the
// case as discarded (an "early return") and against max_discard_share. A body that checks only
// part of what it would (one of two precisions) notes it too: that case is counted the same way.
void note_early_return(const char* why);
// The early returns noted since the last take (thread-local), cleared.
int take_early_returns();

// The op a property is about: `op` if set, else the name's first two components when they name
// an op with a contract ("kda/packed_decode/..." -> "kda/packed_decode"), else "" (a property
// about every op, like the catalog-wide hostile ones).
std::string op_of(const Property& p);
std::string backend_of(const Property& p);

std::vector<Property> kda_properties();
std::vector<Property> sparse_properties();
std::vector<Property> hostile_properties();
// `<op>/oracle/long-accumulator` for every op (properties/oracle_properties.cpp): the shipped oracle
// against its slow long-accumulator evaluation, bit for bit, on plain, cancelling and special-value calls.
std::vector<Property> oracle_properties();

// The reference-side properties (metamorphic, hostile): the "reference" backend.
std::vector<Property> cpu_properties();
// The kernel launchers' answer to rejected calls (backends/cuda/rejected_launch.cpp): backend "cuda"
// with a device, "launcher" (host memory labelled cuda:0) without one; empty when kernels are not built.
std::vector<Property> launcher_properties();
std::vector<Property> launcher_properties(bool on_device);
// The CUDA backend's differential properties, named as on a device, marked skipped with `why`
// (the probe's reason): what a campaign lists and reports in their place without a device.
std::vector<Property> skipped_cuda_properties(const std::string& why);
// cpu_properties() plus the differential properties of the CUDA backend (skipped, with the reason,
// when it is unavailable) and the launcher properties (skipped when the kernels are not built).
std::vector<Property> all_properties();

}  // namespace kparity::fuzz
