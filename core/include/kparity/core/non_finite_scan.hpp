#pragma once
// The first NaN or infinity of a view, in row-major index order (issue 25). The deep validation of
// every call scans q (sparse) or every float input (KDA) for non-finite values; element by element
// through TensorView::load that scan was 12-16% of the oracle's time on kernel-sized sparse calls
// (16.7 M elements of q). This reads the bits a run of the innermost dimension at a time: a float is
// non-finite exactly when its exponent field is all ones, in every float dtype.
#include <cstdint>
#include <optional>
#include <vector>

#include "kparity/core/tensor_view.hpp"

namespace kparity {

// The multi-index of the first element of `v` (in the order for_each_index visits) whose value is
// NaN or +-inf, or nullopt when there is none. Integer and bool views hold none. Reads v's memory as
// host memory whatever its device label (the deep checks' convention: launchers pass host mirrors).
std::optional<std::vector<std::int64_t>> find_non_finite(const TensorView& v);

}  // namespace kparity
