#pragma once
// A number rule() (rule.cpp) takes afresh at each call, before it asks for the floors: a floor may
// keep what it derived from the call's inputs for the other written tensors of that same rule()
// (the call and the oracle are the same objects throughout it; issue 32 B: the sparse floors of out
// and lse each scanned q and every selected row).
#include <cstdint>

namespace kparity::judging::detail {

std::uint64_t& rule_serial();

}  // namespace kparity::judging::detail
