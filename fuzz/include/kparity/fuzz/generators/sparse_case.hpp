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
#include "kparity/judge/sparse_reading.hpp"

namespace kparity::fuzz::sparse_fuzz {

// The reading helpers the rule's floors need too (kparity/judge/sparse_reading.hpp).
using judging::sparse_reading::dtype_eps;
using judging::sparse_reading::dtype_min_subnormal;
using judging::sparse_reading::heads;
using judging::sparse_reading::Lists;
using judging::sparse_reading::Magnitudes;
using judging::sparse_reading::magnitudes;
using judging::sparse_reading::read_lists;
using judging::sparse_reading::Source;
using judging::sparse_reading::sources_of;
using judging::sparse_reading::tokens;

// Replaces the source's CSR tensors by a compact CSR of `lists` (indptr[0] = 0, no slack), keeping
// their dtypes.
void write_lists(Call& c, const Source& s, const Lists& lists);
// Rows of s.rows named by a non-negative entry of some token's span.
std::vector<bool> selected_rows(const Call& c, const Source& s);
// Per token, whether any source selects at least one row (S_t non-empty).
std::vector<bool> has_keys(const Call& c);

// Appends `n` rows to the source tensor `name` (existing values kept, new rows zero, contiguous
// layout) and returns the index of the first new row.
std::int64_t append_rows(Call& c, const char* name, std::int64_t n);

// The same values in another layout: `strides` and `offset` in elements; padding bytes are NaN.
Tensor relayout(const Tensor& t, const Shape& strides, std::int64_t offset);
// A layout different from t's: non-contiguous (padded rows, a permuted leading pair, or a column
// stride of 2) for a contiguous t, contiguous otherwise; `choice` selects among the options.
Tensor other_layout(const Tensor& t, std::uint64_t choice);

// Element-wise bit equality of two tensors of one shape and dtype; "" or the first difference.
std::string bit_diff(const TensorView& a, const TensorView& b);

}  // namespace kparity::fuzz::sparse_fuzz
