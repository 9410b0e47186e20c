#pragma once
// The RapidCheck draw of a KDA decode shape, shared by the reference and the kernel properties.
#include <cstdint>
#include <vector>

#include "kparity/fuzz/kda_case.hpp"

namespace kparity::fuzz {

// K and V from head_dims, B in [1, max_batch]; everything else (GQA ratio, ring length, slot
// padding, dtypes, gate form, norm, forced flushes, padding rows) drawn over its whole range.
KdaDecodeShape draw_kda_decode_shape(const std::vector<std::int64_t>& head_dims, std::int64_t max_batch);

}  // namespace kparity::fuzz
