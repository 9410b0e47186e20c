#pragma once
// The differential property of one op for a stand-in kernel under a precision profile, on the fixed
// campaign seed: what the profile tests (profile_test.cpp, fla_chunk_profile_test.cpp) judge.
#include <string>

#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::fuzz::test {

inline PropertyOutcome profiled_differential(const Backend& b, const std::string& op,
                                             reference::PrecisionProfile profile, int cases) {
  ImplPropertyOptions po;
  po.kinds = {"differential"};
  po.profile = profile;
  const auto props = implementation_properties(b, {spec_for(op)}, po);
  return run_property(props.at(0), 0x6b70617269747931ull, cases, 100, true);
}

}  // namespace kparity::fuzz::test
