// Reading and rewriting sparse-attention calls (sparse_case.hpp). Everything reads indices and
// pointers flat and rows through their views, as the op does (spec C.1, C.6).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kparity/core/format.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"

namespace kparity::fuzz::sparse_fuzz {

void write_lists(Call& c, const Source& s, const Lists& lists) {
  std::int64_t n = 0;
  for (const auto& l : lists) n += static_cast<std::int64_t>(l.size());
  Tensor idx(c.at(s.indices).dtype(), {n});
  Tensor ptr(c.at(s.indptr).dtype(), {static_cast<std::int64_t>(lists.size()) + 1});
  std::int64_t j = 0;
  ptr.view().store_int(std::array<std::int64_t, 1>{0}, 0);
  for (std::size_t t = 0; t < lists.size(); ++t) {
    for (auto v : lists[t]) idx.view().store_int(std::array<std::int64_t, 1>{j++}, v);
    ptr.view().store_int(std::array<std::int64_t, 1>{static_cast<std::int64_t>(t) + 1}, j);
  }
  c.tensors[s.indices] = std::move(idx);
  c.tensors[s.indptr] = std::move(ptr);
}

std::vector<bool> selected_rows(const Call& c, const Source& s) {
  const std::int64_t rows = c.at(s.rows).view().size(0);
  std::vector<bool> sel(static_cast<std::size_t>(rows), false);
  for (const auto& l : read_lists(c, s))
    for (auto v : l)
      if (v >= 0 && v < rows) sel[static_cast<std::size_t>(v)] = true;
  return sel;
}

std::vector<bool> has_keys(const Call& c) {
  std::vector<bool> keys(static_cast<std::size_t>(tokens(c)), false);
  for (const auto& s : sources_of(c.op)) {
    const auto lists = read_lists(c, s);
    for (std::size_t t = 0; t < lists.size(); ++t)
      for (auto v : lists[t])
        if (v >= 0) keys[t] = true;
  }
  return keys;
}

std::int64_t append_rows(Call& c, const char* name, std::int64_t n) {
  const Tensor& old = c.at(name);
  const std::int64_t R = old.view().size(0), D = old.view().size(1);
  Tensor grown(old.dtype(), {R + n, D});
  for (std::int64_t r = 0; r < R; ++r) copy_convert(old.view().select(0, r), grown.view().select(0, r));
  c.tensors[name] = std::move(grown);
  return R;
}

Tensor relayout(const Tensor& t, const Shape& strides, std::int64_t offset) {
  Tensor r = Tensor::strided(t.dtype(), t.shape(), strides, offset);
  r.poison();
  copy_convert(t.view(), r.view());  // same dtype: a byte copy, NaN payloads kept
  return r;
}

namespace {

// Row-major strides of `shape` with `pad` extra elements after each innermost row.
Shape padded_strides(const Shape& shape, std::int64_t pad, std::int64_t inner) {
  Shape st(shape.size(), 1);
  std::int64_t acc = inner;
  for (std::size_t k = shape.size(); k-- > 0;) {
    st[k] = acc;
    acc *= std::max<std::int64_t>(shape[k], 1);
    if (k + 1 == shape.size()) acc += pad;
  }
  return st;
}

}  // namespace

Tensor other_layout(const Tensor& t, std::uint64_t choice) {
  const TensorView v = t.view();
  const bool plain = v.is_contiguous() && t.storage_offset() == 0;
  if (!plain || v.rank == 0) return t.clone_contiguous();
  const Shape shape = t.shape();
  const std::int64_t offset = static_cast<std::int64_t>((choice / 3) % 3) * 7;
  switch (choice % 3) {
    case 0:
      return relayout(t, padded_strides(shape, 1 + static_cast<std::int64_t>((choice / 9) % 8), 1), offset);
    case 1: {
      if (v.rank < 2) break;
      // The two leading dims swapped in storage: [T, H, D] laid out as [H, T, D], [R, D] as [D, R].
      Shape perm = shape;
      std::swap(perm[0], perm[1]);
      Shape st = padded_strides(perm, 0, 1);
      std::swap(st[0], st[1]);
      return relayout(t, st, offset);
    }
    default:
      break;
  }
  return relayout(t, padded_strides(shape, 0, 2), offset);  // every element two apart
}

std::string bit_diff(const TensorView& a, const TensorView& b) {
  if (a.shape() != b.shape() || a.dtype != b.dtype)
    return "layouts differ: " + py_tuple(a.shape()) + " vs " + py_tuple(b.shape());
  const std::size_t es = a.element_size();
  std::string first;
  std::int64_t count = 0;
  for_each_element(a, [&](std::span<const std::int64_t> i, std::int64_t) {
    const auto* pa = static_cast<const std::byte*>(a.data) + a.offset_of(i) * static_cast<std::int64_t>(es);
    const auto* pb = static_cast<const std::byte*>(b.data) + b.offset_of(i) * static_cast<std::int64_t>(es);
    if (std::memcmp(pa, pb, es) == 0) return;
    if (count++ == 0)
      first = "at " + py_tuple(std::vector<std::int64_t>(i.begin(), i.end())) + ": " + py_float(a.load(i)) +
              " vs " + py_float(b.load(i));
  });
  if (count == 0) return "";
  return std::to_string(count) + " of " + std::to_string(a.numel()) + " elements differ in their bits, first " + first;
}

}  // namespace kparity::fuzz::sparse_fuzz
