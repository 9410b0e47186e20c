#pragma once
// The knobs of each op family for the explain step (campaign/explain.hpp), private to it.
#include <cstdint>
#include <string>
#include <vector>

#include "kparity/fuzz/campaign/explain.hpp"

namespace kparity::fuzz::explain_detail {

// Where the first bad element is (the provenance), so that "T = 1" keeps the token that failed.
struct Focus {
  std::int64_t token = 0, head = 0;
  std::int64_t row = 0;  // a decode row, or the sequence (a dense kda/chunk call's batch row)
  std::string tensor;
};

std::string describe_variant(const std::string& base);

// sparse/paged_prefill and sparse/paged_decode (explain_sparse.cpp).
std::vector<Knob> sparse_knobs(const Call& call, std::uint64_t seed, const Focus& focus);
// Any op (explain_generic.cpp): the layout of every input tensor, special values present or not.
std::vector<Knob> generic_knobs(const Call& call, std::uint64_t seed, const Focus& focus);
// kda/recurrent and kda/chunk (explain_kda.cpp): every sequence lengthened past several chunks.
std::vector<Knob> kda_sequence_knobs(const Call& call, std::uint64_t seed, const Focus& focus);
// Every KDA op (explain_kda_shape.cpp): H, HV, K, V, the dtypes (act, gate_dt, params, state or
// initial, ring), decode rows (B, padding rows) and a dense kda/chunk call's batch rows (B).
std::vector<Knob> kda_shape_knobs(const Call& call, std::uint64_t seed, const Focus& focus);

}  // namespace kparity::fuzz::explain_detail
