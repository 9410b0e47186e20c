#pragma once
// A tensor filled with drawn values in row-major order of its logical index, a row of the innermost
// dimension at a time: next() is called once per element in exactly the order for_each_element
// visits them (so a generator's values are the same draws, bit for bit), and each row is stored with
// one dtype dispatch and the run conversions of reference/elements.hpp (the same bits as
// TensorView::store element by element; issue 32 B: per-element stores were a tenth of a
// kernel-sized sparse case's host time).
#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor_view.hpp"
#include "kparity/reference/elements.hpp"

namespace kparity::fuzz {

template <class Next>
void fill_rows(const TensorView& v, Next&& next) {
  const std::int64_t total = v.numel();
  if (total == 0) return;
  const int r = v.rank;
  const std::int64_t n = r == 0 ? 1 : v.sizes[r - 1], step = r == 0 ? 0 : v.strides[r - 1];
  std::vector<double> row(static_cast<std::size_t>(n));
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t off = 0;
  for (std::int64_t at = 0; at < total; at += n) {
    for (std::int64_t i = 0; i < n; ++i) row[static_cast<std::size_t>(i)] = next();
    reference::elements::store_run(v, off, step, n, row.data());
    for (int d = r - 2; d >= 0; --d) {
      off += v.strides[d];
      if (++idx[d] < v.sizes[d]) break;
      off -= idx[d] * v.strides[d];
      idx[d] = 0;
    }
  }
}

// fill_rows(v, [&] { return f(rng.normal()); }) with a row's draws taken at once (Rng::normal_fill:
// the same values in the same order, one per element).
template <class F>
void fill_normal_rows(const TensorView& v, Rng& rng, F&& f) {
  thread_local std::vector<double> draws;
  draws.clear();
  std::size_t at = 0;
  fill_rows(v, [&] {
    if (at == draws.size()) {
      draws.resize(static_cast<std::size_t>(v.rank == 0 ? 1 : std::max<std::int64_t>(v.sizes[v.rank - 1], 1)));
      rng.normal_fill(draws.data(), static_cast<std::int64_t>(draws.size()));
      at = 0;
    }
    return f(draws[at++]);
  });
}

}  // namespace kparity::fuzz
