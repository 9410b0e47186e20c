#pragma once
// A non-owning strided view: what every layer passes around. Strides are in elements.
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "kparity/core/device.hpp"
#include "kparity/core/dtype.hpp"

namespace kparity {

inline constexpr int kMaxRank = 6;

using Shape = std::vector<std::int64_t>;

struct TensorView {
  void* data = nullptr;  // points at element [0, ..., 0] (storage offset already applied)
  DType dtype = DType::f32;
  Device device = Device::cpu();
  int rank = 0;
  std::array<std::int64_t, kMaxRank> sizes{};
  std::array<std::int64_t, kMaxRank> strides{};

  TensorView() = default;
  // Contiguous (row-major) view. Throws std::invalid_argument for rank > 6 or negative sizes.
  TensorView(void* data, DType dtype, std::span<const std::int64_t> shape, Device device = Device::cpu());
  TensorView(void* data, DType dtype, std::span<const std::int64_t> shape,
             std::span<const std::int64_t> strides, Device device = Device::cpu());
  TensorView(void* data, DType dtype, std::initializer_list<std::int64_t> shape, Device device = Device::cpu())
      : TensorView(data, dtype, std::span<const std::int64_t>(shape.begin(), shape.size()), device) {}

  int ndim() const noexcept { return rank; }
  // torch semantics: negative d counts from the end. Throws std::out_of_range if d is out of range.
  std::int64_t size(int d) const;
  std::int64_t stride(int d) const;
  Shape shape() const { return Shape(sizes.begin(), sizes.begin() + rank); }
  Shape stride_vec() const { return Shape(strides.begin(), strides.begin() + rank); }
  std::int64_t numel() const noexcept;
  // torch's rule: dims of size 1 may have any stride; an empty tensor is contiguous.
  bool is_contiguous() const noexcept;
  std::size_t element_size() const noexcept { return dtype_size(dtype); }

  // Element offset (in elements) of a multi-index; no bounds check beyond rank.
  std::int64_t offset_of(std::span<const std::int64_t> idx) const noexcept;
  // Lowest and highest element offsets reachable (0, 0 for an empty tensor): the memory span.
  std::pair<std::int64_t, std::int64_t> offset_range() const noexcept;

  // Host element access through fp64/int64; throws std::logic_error on a cuda view and
  // std::out_of_range for an index outside the shape. Stores round as round_to_dtype does (an f64
  // view stores and loads the double bit for bit); load_int
  // of a float element truncates toward zero (torch's cast), NaN giving 0.
  double load(std::span<const std::int64_t> idx) const;
  void store(std::span<const std::int64_t> idx, double v) const;
  std::int64_t load_int(std::span<const std::int64_t> idx) const;
  // Exact for i32/i64 (i32 saturates); other dtypes go through store(double).
  void store_int(std::span<const std::int64_t> idx, std::int64_t v) const;
  double at(std::initializer_list<std::int64_t> idx) const { return load({idx.begin(), idx.size()}); }
  std::int64_t at_int(std::initializer_list<std::int64_t> idx) const { return load_int({idx.begin(), idx.size()}); }
  // Element by flat row-major logical index (not memory offset).
  double load_flat(std::int64_t i) const;
  std::int64_t load_int_flat(std::int64_t i) const;
  void store_flat(std::int64_t i, double v) const;

  // View helpers (no copy).
  TensorView select(int dim, std::int64_t index) const;  // drops dim
  TensorView with_device(Device d) const { TensorView v = *this; v.device = d; return v; }
};

// Calls f(idx) for every multi-index of shape in row-major order.
template <class F>
void for_each_index(std::span<const std::int64_t> shape, F&& f) {
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  if (n == 0) return;
  std::vector<std::int64_t> idx(shape.size(), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    f(std::span<const std::int64_t>(idx));
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Calls f(idx, offset) for every element of v in row-major order, where idx is the multi-index and
// offset its element offset. Allocation-free, so it suits inner loops over strided views.
template <class F>
void for_each_element(const TensorView& v, F&& f) {
  const std::int64_t n = v.numel();
  if (n == 0) return;
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(std::span<const std::int64_t>(idx.data(), static_cast<std::size_t>(v.rank)), off);
    for (int d = v.rank - 1; d >= 0; --d) {
      off += v.strides[d];
      if (++idx[d] < v.sizes[d]) break;
      off -= idx[d] * v.strides[d];
      idx[d] = 0;
    }
  }
}

}  // namespace kparity
