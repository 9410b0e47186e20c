#pragma once
// Every row of the innermost dimension of a tensor, widened as TensorView::load widens its
// elements, in row-major order: fn(const double* values, n) once a row, with one dtype dispatch a
// row (reference/elements.hpp's load_run) instead of a bounds-checked load an element.
#include <array>
#include <cstdint>
#include <vector>

#include "kparity/core/tensor_view.hpp"
#include "kparity/reference/elements.hpp"

namespace kparity::judging {

template <class Fn>
void for_each_run(const TensorView& v, Fn&& fn) {
  const std::int64_t total = v.numel();
  if (total == 0) return;
  const int r = v.rank;
  const std::int64_t n = r == 0 ? 1 : v.sizes[r - 1], step = r == 0 ? 0 : v.strides[r - 1];
  thread_local std::vector<double> row;
  row.resize(static_cast<std::size_t>(n));
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t off = 0;
  for (std::int64_t at = 0; at < total; at += n) {
    reference::elements::load_run(v, off, step, n, row.data());
    fn(static_cast<const double*>(row.data()), n);
    for (int d = r - 2; d >= 0; --d) {
      off += v.strides[d];
      if (++idx[d] < v.sizes[d]) break;
      off -= idx[d] * v.strides[d];
      idx[d] = 0;
    }
  }
}

}  // namespace kparity::judging
