#pragma once
// RapidCheck generators of valid sparse-attention calls (sparse/paged_prefill, sparse/paged_decode):
// shapes, dtypes, layouts, CSR index lists with sentinels, duplicates and empty spans, sinks, and in
// special-values mode NaN, +-Inf, -0 and subnormals. Every constraint of the contracts is built in.
// The helpers that read and rewrite such calls are in sparse_case.hpp.
#include <vector>

#include "kparity/fuzz/generators/op_spec.hpp"

namespace kparity::fuzz {

// The specs of sparse/paged_prefill and sparse/paged_decode (op_spec.hpp).
std::vector<OpFuzzSpec> sparse_specs();

}  // namespace kparity::fuzz
