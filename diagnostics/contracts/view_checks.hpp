#pragma once
// Allocation-free shape predicates for the contracts (private to diagnostics/contracts).
//
// Success-path discipline (issue 5: the shape checks of one call cost <= 200 ns): a check that
// passes builds nothing. TensorView::shape()/stride_vec() allocate a std::vector, so the contracts
// compare sizes[]/rank directly through these helpers and format shapes (py_tuple, ...) only in the
// failure branch, i.e. inside the arguments of a `bad && c.fail(...)` call.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>

#include "kparity/core/tensor_view.hpp"

namespace kparity::contract_util {

// t.shape() == s
inline bool shape_is(const TensorView& t, std::span<const std::int64_t> s) noexcept {
  if (static_cast<std::size_t>(t.rank) != s.size()) return false;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (t.sizes[d] != s[d]) return false;
  return true;
}
inline bool shape_is(const TensorView& t, std::initializer_list<std::int64_t> s) noexcept {
  return shape_is(t, std::span<const std::int64_t>(s.begin(), s.size()));
}

// a.shape() == b.shape()
inline bool same_shape(const TensorView& a, const TensorView& b) noexcept {
  return shape_is(a, std::span<const std::int64_t>(b.sizes.data(), static_cast<std::size_t>(b.rank)));
}

// The shape without its first dim equals s (a 0-D view has the empty tail).
inline bool tail_is(const TensorView& t, std::initializer_list<std::int64_t> s) noexcept {
  if (t.rank == 0) return s.size() == 0;
  if (static_cast<std::size_t>(t.rank - 1) != s.size()) return false;
  std::size_t d = 1;
  for (std::int64_t v : s)
    if (t.sizes[d++] != v) return false;
  return true;
}

// size(-1) / stride(-1) of a view with rank >= 1 (the caller has checked the rank), without the
// bounds-checked out-of-line accessors.
inline std::int64_t last_size(const TensorView& t) noexcept { return t.sizes[static_cast<std::size_t>(t.rank - 1)]; }
inline std::int64_t last_stride(const TensorView& t) noexcept { return t.strides[static_cast<std::size_t>(t.rank - 1)]; }

}  // namespace kparity::contract_util
