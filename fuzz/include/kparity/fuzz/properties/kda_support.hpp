#pragma once
// Helpers the KDA properties share (kda_properties.cpp, kda_special_properties.cpp) and the KDA
// fuzz tests use.
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/kda_case.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::fuzz {

// The reference of c.op on c, in place, validated with c.options.
void run_kda(Call& c, reference::Precision p);

// bytes: element bytes (NaN payloads, the sign of zero); values: x == y, +0 == -0, NaN == NaN.
enum class Compare { bytes, values };
// The first element (row-major) where two views of one shape differ, described; "" if none.
std::string first_difference(const TensorView& a, const TensorView& b, Compare how);

double max_finite_abs(const TensorView& v);
void fill_view(const TensorView& v, double x);
// One element from src to dst: the bytes when the dtypes agree, else a converting store.
void copy_element(const TensorView& src, std::initializer_list<std::int64_t> si, const TensorView& dst,
                  std::initializer_list<std::int64_t> di);

// Sequence n (tokens [bos, bos + len)) of a kda/recurrent call as a call of its own, in compact
// layouts: one initial/final state, cu_seqlens [0, len] when `with_cu`, else none.
Call slice_sequence(const Call& c, std::int64_t n, std::int64_t bos, std::int64_t len, bool with_cu);

// Replaces everything a decode call never reads with other garbage: padding rows' inputs (and
// cursors and force flags), ring entries at or past each row's cursor, rings of unused slots.
void regarbage_unread(Call& c, const KdaShape& s, std::uint64_t seed);

// kda/<op>/special-values (kda_special_properties.cpp).
void special_values_propagate(const std::string& op);

}  // namespace kparity::fuzz
