// Tensor edits on a Mutant (edits.hpp).
#include "edits.hpp"

#include <algorithm>
#include <stdexcept>

namespace kparity::fuzz::detail {

bool has(const Mutant& m, const std::string& name) { return m.call.tensors.count(name) != 0; }
Tensor& ten(Mutant& m, const std::string& name) { return m.call.tensors.at(name); }
TensorView view(const Mutant& m, const std::string& name) { return m.call.tensors.at(name).view(); }
std::int64_t dim(const Mutant& m, const std::string& name, int d) { return view(m, name).size(d); }

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    s[static_cast<std::size_t>(d)] = s[static_cast<std::size_t>(d) + 1] * std::max<std::int64_t>(shape[static_cast<std::size_t>(d) + 1], 1);
  return s;
}

// Element `i` in row-major order of the logical shape, whatever the layout.
double get(const Mutant& m, const std::string& name, std::int64_t i) { return view(m, name).load_flat(i); }
std::int64_t get_int(const Mutant& m, const std::string& name, std::int64_t i) { return view(m, name).load_int_flat(i); }
void set(Mutant& m, const std::string& name, std::int64_t i, double v) { ten(m, name).view().store_flat(i, v); }

void reshape(Mutant& m, const std::string& name, const Shape& shape) {
  Tensor& old = ten(m, name);
  Tensor t(old.dtype(), shape);
  const TensorView from = old.view(), to = t.view();
  if (from.ndim() == to.ndim()) {
    // Same rank: every element keeps its multi-index (a grown dim gets zeros, a shrunk one loses
    // its tail), so a value never moves into another row or slot. Generators poison what the op
    // must not read (padding rows, unreferenced slots); that poison must stay where it was.
    Shape common(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) common[d] = std::min(shape[d], from.size(static_cast<int>(d)));
    for_each_index(common, [&](std::span<const std::int64_t> idx) { to.store(idx, from.load(idx)); });
  } else {
    // A new rank: the leading elements in row-major order, so index and cursor data keep their meaning.
    const std::int64_t n = std::min(from.numel(), to.numel());
    for (std::int64_t i = 0; i < n; ++i) to.store_flat(i, from.load_flat(i));
  }
  old = std::move(t);
}

void make(Mutant& m, const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& values) {
  Tensor t(dtype, shape);
  for (std::size_t i = 0; i < values.size() && static_cast<std::int64_t>(i) < t.numel(); ++i)
    t.view().store_flat(static_cast<std::int64_t>(i), values[i]);
  m.call.tensors.insert_or_assign(name, std::move(t));
}

void restride(Mutant& m, const std::string& name, const Shape& strides, std::int64_t offset) {
  Tensor& old = ten(m, name);
  Tensor t = Tensor::strided(old.dtype(), old.shape(), strides, offset);
  copy_convert(old.view(), t.view());
  old = std::move(t);
}

Shape padded_strides(const Shape& shape, std::int64_t inner) {
  Shape s(shape.size(), inner);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    s[static_cast<std::size_t>(d)] = s[static_cast<std::size_t>(d) + 1] * std::max<std::int64_t>(shape[static_cast<std::size_t>(d) + 1], 1);
  return s;
}

void retype(Mutant& m, const std::string& name, DType dtype) {
  Tensor& old = ten(m, name);
  // Same shape, strides and storage offset: only the dtype differs, so no layout check can fire first.
  const std::int64_t elems = static_cast<std::int64_t>(old.storage().size() / dtype_size(old.dtype()));
  Tensor t = Tensor::strided(dtype, old.shape(), old.view().stride_vec(), old.storage_offset(), elems);
  copy_convert(old.view(), t.view());
  old = std::move(t);
}

void make_room(Mutant& m, const std::string& name, std::size_t bytes) {
  Tensor& old = ten(m, name);
  const std::size_t es = dtype_size(old.dtype());
  const std::size_t have = old.storage().size() - static_cast<std::size_t>(old.storage_offset()) * es;
  if (have >= bytes) return;
  const std::int64_t elems = old.storage_offset() + static_cast<std::int64_t>((bytes + es - 1) / es);
  Tensor t = Tensor::strided(old.dtype(), old.shape(), old.view().stride_vec(), old.storage_offset(),
                             std::max<std::int64_t>(elems, static_cast<std::int64_t>(old.storage().size() / es)));
  copy_convert(old.view(), t.view());
  old = std::move(t);
}

void alias(Mutant& m, const std::string& name, const std::string& other) {
  // `name` reads as a contiguous tensor starting at other's first element; room is made in other's
  // buffer so the view never reaches past it, whatever the two sizes are.
  Tensor& t = ten(m, name);
  if (!t.view().is_contiguous()) t = t.clone_contiguous();
  make_room(m, other, static_cast<std::size_t>(t.numel()) * dtype_size(t.dtype()));
  m.alias[name] = other;
}

}  // namespace kparity::fuzz::detail
