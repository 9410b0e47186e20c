#pragma once
// What the fuzzer adds to a call (kparity/judge/call.hpp): the generators' knobs, the edge buckets a
// case hits, the recorded input of the case being run.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/judge/call.hpp"

namespace kparity::fuzz {

struct ShapePreset;  // generators/presets.hpp
struct ShapePins;    // generators/pins.hpp

using judging::Call;  // kparity/judge/call.hpp: the call the rule runs and judges

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
