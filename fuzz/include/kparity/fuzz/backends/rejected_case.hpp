#pragma once
// What `<op>/rejected-call-never-launches/<backend>` (backends/cuda/rejected_launch.cpp) checks in
// one case: a valid call from the op's generator and one catalog mutation that can be expressed on
// it. Kept apart from the CUDA source so that the draw, and how often it finds nothing to check, can
// be tested on any machine (tests/fuzz/rejected_case_test.cpp).
#include <optional>
#include <string>
#include <vector>

#include "kparity/fuzz/mutator/mutator.hpp"

namespace kparity::fuzz {

// The op's mutations the property may apply: every error (warnings never reject a call); the
// data-dependent ones only `on_device`, because only the device mode runs the launcher's deep pass
// that fires them.
std::vector<Mutation> rejected_call_mutations(const std::string& op, bool on_device);

struct RejectedCase {
  Mutation mutation;
  Mutant mutant;  // the mutated call, every tensor labelled cuda:0
};

// Inside a RapidCheck property: draws a valid call of `op` and a mutation of `mutations` that can
// be expressed on it. A mutation that cannot (a value edit of a tensor the call leaves out, a
// cu_seqlens edit of a call without one) is drawn again for the same call instead of discarding the
// case, so the mutation is uniform over those the call admits. nullopt only when none of them
// applies to the call (then the case is discarded).
std::optional<RejectedCase> draw_rejected_case(const std::string& op, const std::vector<Mutation>& mutations);

}  // namespace kparity::fuzz
