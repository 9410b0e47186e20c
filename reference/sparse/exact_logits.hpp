#pragma once
// Private to reference/sparse: the exact dots q_h . k_j of every head and key of one token at once
// (issue 25), for the oracle and the a-priori bound.
//
// The method. Inputs are widened 16-bit (or fp32) values, so every product p = q_d k_d is exact in
// fp64 and a multiple of 2^L, L = (least lsb_exponent over the token's q) + (least over its keys).
// Each product splits exactly into hi = fl((p + C) - C), C = 1.5 * 2^(L + 94) (p rounded to a multiple
// of 2^(L + 42); exact for |p| < 2^(L + 93)), and lo = p - hi (a multiple of 2^L below 2^(L + 42) in
// magnitude: exact). If sum_d |p_d| < 2^(L + 93), every partial sum of the hi parts (multiples of
// 2^(L + 42) below 2^(L + 95)) and of the lo parts (multiples of 2^L below D 2^(L + 41) <= 2^(L + 52)
// for D <= 2^11) is representable: plain fp64 addition in any order is exact, so the dot is
// S_hi + S_lo exactly, fl(S_hi + S_lo) is the correctly rounded dot, and the difference of two dots
// of one head, fl((S_hi - S_hi') + (S_lo - S_lo')), is the correctly rounded exact difference (both
// inner differences are again exact). The condition is tested on max_d |q_d| * sum_d |k_d|, an
// upper bound of sum_d |p_d| (with a relative margin 2^-40 over the fp64 rounding of sum |k|).
// Products are exact because every value is checked to have at most 26 significant bits.
//
// Exact zeros are left to the caller (their sign follows exact_sum.hpp's rule, which the split does
// not track): a zero dot comes back as +-0 parts and the caller applies the rule. A key holding a
// non-finite value gets NaN parts (the caller takes its per-key path); with every q or every finite
// key zero, the finite keys' parts are 0.
#include <cstdint>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "sink_attention.hpp"

namespace kparity::reference::sparse::detail {

// Q: H x D, row-major (head h's q). On success hi/lo hold H x n (head-major) and true is returned;
// false when a q is not finite, a q or a finite key's value has more than 26 significant bits, D > 2048,
// or the magnitudes leave the range above.
// At most 26 significant bits (the low 27 fraction bits zero), as exact_sum.hpp's product test reads it.
bool short_value(double x) noexcept;

// q_dtype: the dtype q was widened from (bf16, f16 and f32 values are short by construction, and
// a lower bound of their least lsb follows from their exponents; any L below the true least lsb
// keeps the argument above, with less headroom).
// same (optional, same_rows' answer): a key read from the same row as an earlier one gets that key's
// parts without a sum of its own.
bool exact_dots_split(const double* Q, DType q_dtype, std::int64_t H, std::int64_t D, const TokenKeys& keys,
                      const RowStats& rs, std::vector<double>& hi, std::vector<double>& lo,
                      const std::int64_t* same = nullptr);

}  // namespace kparity::reference::sparse::detail
