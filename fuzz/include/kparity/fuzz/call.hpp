#pragma once
// One op call as the fuzzer sees it: the op's arguments by upstream name, owned, so a call can be
// cloned, mutated, run on any backend, saved as a `kparity run` dump and replayed.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/checker.hpp"

namespace kparity::fuzz {

struct ShapePreset;  // generators/presets.hpp
struct ShapePins;    // generators/pins.hpp

struct Call {
  std::string op;  // "kda/replayssm_decode", ... (the name every layer uses)
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
  std::map<std::string, bool> flags;
  // Tensors the op writes (outputs and in-place state, rings): compared by the differential rule,
  // poisoned before a run when they are pure outputs.
  std::vector<std::string> written;
  std::vector<std::string> pure_outputs;  // subset of `written` whose old contents are never read
  std::string description;                // one line: the drawn shape and knobs, for logs and reports
  // How the references (and the CUDA launchers, with the kernel entry) validate this call. Calls
  // with NaN/Inf where upstream accepts them but kparity's data checks do not (a non-finite value
  // in a selected row) run with `deep` off; the special-values differential properties do that.
  ValidateOptions options = ValidateOptions::strict(Entry::reference);

  // Views into this call's tensors (invalidated when `tensors` is modified).
  ArgBag bag() const;
  // Throw std::out_of_range naming the op and the missing tensor.
  Tensor& at(const std::string& name);
  const Tensor& at(const std::string& name) const;
};

// Knobs a property passes to a generator.
struct GenConfig {
  bool special_values = false;  // NaN, +-Inf, -0, subnormals among the finite values
  bool large = false;           // kernel-sized shapes (tile edges up to 128/256); default: small, fast shapes
  // A real model's shapes (generators/presets.hpp) where the preset has them for the op; nullptr:
  // the generator's own (small or large).
  const ShapePreset* preset = nullptr;
  // The compile-relevant sizes and dtypes held to a few values (generators/pins.hpp); nullptr: free.
  const ShapePins* pins = nullptr;
};

// Edge buckets hit by the current case: generators call note_bucket() while drawing; the campaign
// collects them per property for the report (and RC_TAG is not needed). Thread-local.
void note_bucket(std::string bucket);
std::vector<std::string> take_buckets();  // the buckets noted since the last take, cleared

// The input of the case being run, kept so that a failing property can be saved to the corpus:
// RapidCheck re-runs the minimal counterexample last, so after a failed check the recorded call
// is the shrunk one. A property records its call before it runs or asserts anything (the
// differential properties do; metamorphic properties should, to get their failures saved).
// Thread-local; take_recorded_call() clears the slot.
void record_call(const Call& call);
std::optional<Call> take_recorded_call();

}  // namespace kparity::fuzz
