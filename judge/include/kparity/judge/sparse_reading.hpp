#pragma once
// Reading a sparse-attention call (sparse/paged_prefill, sparse/paged_decode) as the op reads it:
// its CSR sources, each token's selected rows, and the magnitudes the rule's floors (floors.hpp) and
// the fuzz properties derive tolerances from.
#include <cstdint>
#include <string_view>
#include <vector>

#include "kparity/judge/call.hpp"

namespace kparity::judging::sparse_reading {

// One CSR source of a call, by upstream argument names.
struct Source {
  const char* indptr;
  const char* indices;
  const char* rows;  // the [rows, D] tensor the indices address
  bool shifted;      // its logits carry replicated_logit_shift (prefill's extend source)
  bool sentinels;    // negative entries are skipped (prefill) rather than invalid (decode)
};

// prefill: {prefix, extend}; decode: {the one source}. Throws std::invalid_argument otherwise.
std::vector<Source> sources_of(std::string_view op);

// Per token, the entries of its span [indptr[t], indptr[t+1]) in span order, sentinels kept; a
// decreasing span reads as empty (spec C.1 item 1).
using Lists = std::vector<std::vector<std::int64_t>>;
Lists read_lists(const Call& c, const Source& s);

std::int64_t tokens(const Call& c);  // T = q.size(0)
std::int64_t heads(const Call& c);   // H = q.size(1)

// Bounds the properties and floors derive tolerances from.
struct Magnitudes {
  double max_selected = 0.0;  // largest finite |value| in a selected row (bounds |out|: a convex mix)
  double max_q = 0.0;         // largest finite |q|
  double max_logit = 0.0;     // bound on |logit| and |sink + shift| over finite terms
  std::int64_t max_keys = 0;  // most selected keys of one token (duplicates counted)
};
Magnitudes magnitudes(const Call& c);

// Storage-dtype constants: eps = spacing of 1 relative to 1 in the significand (2^-7 bf16, 2^-10
// f16, 2^-23 f32), so one ulp of |x| is at most eps*|x| above the normal range; min_sub is the
// smallest subnormal, the ulp below it.
double dtype_eps(DType t);
double dtype_min_subnormal(DType t);

}  // namespace kparity::judging::sparse_reading
