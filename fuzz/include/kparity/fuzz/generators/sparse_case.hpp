#pragma once
// Sparse-attention calls for the fuzzer (sparse/paged_prefill, sparse/paged_decode): the reading and
// rewriting helpers the sparse properties apply to calls drawn by sparse_specs() (call.hpp). A call
// is only its tensors by upstream name; everything here reads what the op itself would read.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz::sparse_fuzz {

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
// Replaces the source's CSR tensors by a compact CSR of `lists` (indptr[0] = 0, no slack), keeping
// their dtypes.
void write_lists(Call& c, const Source& s, const Lists& lists);
// Rows of s.rows named by a non-negative entry of some token's span.
std::vector<bool> selected_rows(const Call& c, const Source& s);
// Per token, whether any source selects at least one row (S_t non-empty).
std::vector<bool> has_keys(const Call& c);

std::int64_t tokens(const Call& c);  // T = q.size(0)
std::int64_t heads(const Call& c);   // H = q.size(1)

// Appends `n` rows to the source tensor `name` (existing values kept, new rows zero, contiguous
// layout) and returns the index of the first new row.
std::int64_t append_rows(Call& c, const char* name, std::int64_t n);

// The same values in another layout: `strides` and `offset` in elements; padding bytes are NaN.
Tensor relayout(const Tensor& t, const Shape& strides, std::int64_t offset);
// A layout different from t's: non-contiguous (padded rows, a permuted leading pair, or a column
// stride of 2) for a contiguous t, contiguous otherwise; `choice` selects among the options.
Tensor other_layout(const Tensor& t, std::uint64_t choice);

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

// Element-wise bit equality of two tensors of one shape and dtype; "" or the first difference.
std::string bit_diff(const TensorView& a, const TensorView& b);

}  // namespace kparity::fuzz::sparse_fuzz
