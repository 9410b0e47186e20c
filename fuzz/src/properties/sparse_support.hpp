#pragma once
// What the sparse properties (sparse_properties.cpp, sparse_special_properties.cpp) share: drawing
// and running calls, bit and twin comparisons, small readers of a call.
//
// Tolerances. Two fp64 oracle computations of one value that differ in summation order or formula
// are a tiny delta apart before their single rounding into the storage dtype, so they may straddle
// one rounding boundary: |a - b| <= eps * |b| (one ulp) + min_sub (the ulp near zero) + delta. The
// fp64 delta: each weight exp(s - M) carries the rounding of its argument, 2^-53 * |logit| relative,
// and n + 1 terms are summed, so delta <= 2^-50 * (n + 1) * (1 + max|logit|) * max|row| with room
// to spare; it matters only where the output cancels toward zero. lse is stored in fp32: eps =
// 2^-23, min_sub = 2^-149, delta <= 2^-50 * (n + 2 + max|logit|). Where both sides compute the
// same keys in the same order the results are compared bit for bit instead.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::fuzz::sparse_fuzz {

using I = std::int64_t;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::string_view kPrefill = kparity::sparse::kPagedPrefillOp;
inline constexpr std::string_view kDecode = kparity::sparse::kPagedDecodeOp;

// Non-finite inputs in q or selected rows are contract errors under the strict options (catalog
// *-non-finite-input), so calls that carry them run with the data checks off (Call::options; the
// generator sets it on its special-value draws). The reference still refuses out-of-range rows
// and spans on its own.
inline constexpr ValidateOptions kNoDataChecks{Entry::reference, true, false, true};

const OpFuzzSpec& spec(std::string_view op);
// A call of `op` drawn inside a property, logged with RC_LOG.
Call draw(std::string_view op, GenConfig g = {});
// The reference on a copy of `c` whose pure outputs are poisoned first.
Call run(const Call& c, reference::Precision p);
// Turns on return_lse, with an lse output.
void ensure_lse(Call& c);
std::uint64_t draw_seed();

// RC_FAIL unless every written tensor has the same bits.
void expect_bits(const Call& got, const Call& want, const std::string& what);
// The fp64 noise terms of the recipe above.
double out_noise(const Magnitudes& m);
double lse_noise(const Magnitudes& m);
// RC_FAIL unless every written tensor meets the recipe above.
void expect_twins(const Call& got, const Call& want, const Magnitudes& m, const std::string& what);

// Whether out[t, h, :] (and lse[t, h] with return_lse) have the same bits in both calls.
bool block_bits_equal(const Call& a, const Call& b, I t, I h);
std::string block(I t, I h);  // "[t, h]"
// The sink logit the op sees for head h before the shift: the stored value widened to fp32 (B.1).
float sink32(const Call& c, I h);
double shift_of(const Call& c);
// Replaces every non-finite value of the source rows (NaN-poisoned unselected rows) by 1, for
// properties that select every row.
void make_rows_finite(Call& c);

// The special-values properties (sparse_special_properties.cpp).
void unselected_inert(std::string_view op);
void selected_nan(std::string_view op);
void selected_inf(std::string_view op);
void special_values_locality(std::string_view op);

}  // namespace kparity::fuzz::sparse_fuzz
