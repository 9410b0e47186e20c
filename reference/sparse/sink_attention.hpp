#pragma once
// Private to reference/sparse: the per-token softmax-with-sink that prefill and decode share, so
// that the two ops agree exactly in oracle mode (spec sparse_attention.md C.6, F.0).
#include <cstdint>
#include <optional>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/core/tensor_view.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::reference::sparse::detail {

// One token's selected keys, in list order (prefix first, then extend), widened exactly to fp64.
struct TokenKeys {
  std::int64_t D = 0;
  std::vector<double> rows;           // n x D, row-major
  std::vector<unsigned char> shifted;  // 1 for extend rows: they carry replicated_logit_shift
  // Where each row was read (its first element's address, the source's inner stride and dtype):
  // keys with the same origin and shift flag hold the same values (same_rows below). Filled by
  // append(); keys assembled otherwise have no origins and count as distinct.
  struct Origin {
    const void* at = nullptr;
    std::int64_t stride = 0;
    DType dtype = DType::f32;
  };
  std::vector<Origin> origin;
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(shifted.size()); }
  void clear() { rows.clear(); shifted.clear(); origin.clear(); }
  // Appends row `r` of a [rows, D] view; throws std::out_of_range outside [0, rows).
  void append(const TensorView& src, std::int64_t r, bool shift);
};

// same[j]: the first key of the token read from the same row as key j with the same shift flag (j
// itself when there is none, and for every key without an origin). A token's list names rows more
// than once (duplicate entries, overlapping spans after a rewind): on the kernel tier's calls two
// thirds to four fifths of the keys' (head, channel) terms were repeats (issue 25), and the oracle
// sums a repeated key's terms once with their multiplicity.
void same_rows(const TokenKeys& keys, std::vector<std::int64_t>& same);

// What every head of a token reads of its keys, computed once per token (issue 25): per row, whether
// all its values are finite, the lowest set bit (exact_sum.hpp's lsb_exponent), max |v|, the least
// non-zero |v| (+inf for a zero row) and sum |v| (fp64, rounded: an estimate, see its users); for the
// token, whether every value is finite and whether every value has at most 26 significant bits
// (widened 16-bit and fp32 inputs do: products of two such values are exact in fp64).
struct RowStats {
  std::vector<unsigned char> finite, shortv;  // shortv: every value of the row has <= 26 significant bits
  std::vector<int> lsb;
  std::vector<double> absmax, absmin, abssum;
  std::vector<std::vector<std::int64_t>> special_at;  // a row holding non-finite values: their positions
  bool all_finite = true, all_short = true;
  // same (optional, same_rows' answer): a key of an earlier key's row copies that key's statistics.
  void compute(const TokenKeys& k, const std::int64_t* same = nullptr);
};

// exp (prefill) or exp2 with log2(e) folded into the scale and sink (decode, F.0 item 4). Only the
// faithful mode sees the difference; the oracle computes the same real number either way.
enum class ExpBase { e, two };

struct SinkAttention {
  TensorView q;          // [T, H, D]
  TensorView attn_sink;  // [>= H]
  TensorView out;        // [T, H, D]
  std::optional<TensorView> lse;  // [T, H], written only when set
  double softmax_scale = 0.0;
  double shift = 0.0;    // replicated_logit_shift (prefill V-lse); 0 for decode
  ExpBase base = ExpBase::e;
  Precision precision = Precision::oracle;
};

// Computes out[t, :, :] (and lse[t, :]) from the token's keys.
void attend_token(const SinkAttention& a, std::int64_t t, const TokenKeys& keys);

// What the oracle computes of a token before its heads and the a-priori bound needs too (issue 32
// (3): the bound took them again, about half of the split dots of a kernel-sized case): q of every
// head (H x D), same_rows' answer, the rows' statistics and exact_dots_split's sums (split_tried:
// the oracle took its fast paths and asked for them; split: they apply).
struct TokenWork {
  std::vector<double> Q, hi, lo;
  std::vector<std::int64_t> same;
  RowStats rs;
  bool split_tried = false, split = false;
};
// attend_token at Precision::oracle, leaving the token's shared work in w.
void attend_oracle_sharing(const SinkAttention& a, std::int64_t t, const TokenKeys& keys, TokenWork& w);

// The CSR span [indptr[t], indptr[t+1]) clipped to empty when it decreases (C.1 item 1); throws
// std::out_of_range when a non-empty span leaves the index array (upstream reads out of bounds).
struct Span { std::int64_t begin = 0, end = 0; };
Span csr_span(const TensorView& indptr, const TensorView& indices, std::int64_t t);

}  // namespace kparity::reference::sparse::detail
