#pragma once
// The metamorphic properties of kda/chunk (properties/kda_chunk_properties.cpp), listed by
// kda_properties(): it equals kda/recurrent on the equivalent call, its sequences are independent,
// and a sequence split into two calls through final/initial state gives the same result.
#include <vector>

#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

std::vector<Property> kda_chunk_properties();

}  // namespace kparity::fuzz
