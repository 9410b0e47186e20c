#include "kparity/core/tensor_view.hpp"

#include <cstring>
#include <stdexcept>

#include "kparity/core/format.hpp"

namespace kparity {

namespace {

void check_rank(std::size_t rank) {
  if (rank > static_cast<std::size_t>(kMaxRank)) {
    throw std::invalid_argument("TensorView: rank " + std::to_string(rank) + " exceeds the maximum of " +
                                std::to_string(kMaxRank));
  }
}

int wrap_dim(int d, int rank) {
  const int w = d < 0 ? d + rank : d;
  if (w < 0 || w >= rank) {
    throw std::out_of_range("Dimension out of range (expected to be in range of [" + std::to_string(-rank) +
                            ", " + std::to_string(rank - 1) + "], but got " + std::to_string(d) + ")");
  }
  return w;
}

template <class T>
T read_as(const std::byte* p) noexcept {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class T>
void write_as(std::byte* p, T v) noexcept {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace

TensorView::TensorView(void* data_, DType dtype_, std::span<const std::int64_t> shape, Device device_)
    : data(data_), dtype(dtype_), device(device_), rank(static_cast<int>(shape.size())) {
  check_rank(shape.size());
  std::int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (shape[d] < 0) throw std::invalid_argument("TensorView: negative size in shape " + py_tuple(shape));
    sizes[d] = shape[d];
    strides[d] = stride;
    // torch gives a size-0 dim the stride of a size-1 dim, so later strides do not collapse to 0.
    stride *= shape[d] > 1 ? shape[d] : 1;
  }
}

TensorView::TensorView(void* data_, DType dtype_, std::span<const std::int64_t> shape,
                       std::span<const std::int64_t> strides_, Device device_)
    : data(data_), dtype(dtype_), device(device_), rank(static_cast<int>(shape.size())) {
  check_rank(shape.size());
  if (strides_.size() != shape.size()) {
    throw std::invalid_argument("TensorView: shape " + py_tuple(shape) + " and strides " + py_tuple(strides_) +
                                " have different lengths");
  }
  for (int d = 0; d < rank; ++d) {
    if (shape[d] < 0) throw std::invalid_argument("TensorView: negative size in shape " + py_tuple(shape));
    sizes[d] = shape[d];
    strides[d] = strides_[d];
  }
}

std::int64_t TensorView::size(int d) const { return sizes[wrap_dim(d, rank)]; }
std::int64_t TensorView::stride(int d) const { return strides[wrap_dim(d, rank)]; }

std::int64_t TensorView::numel() const noexcept {
  std::int64_t n = 1;
  for (int d = 0; d < rank; ++d) n *= sizes[d];
  return n;
}

bool TensorView::is_contiguous() const noexcept {
  if (numel() == 0) return true;
  std::int64_t expected = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

std::int64_t TensorView::offset_of(std::span<const std::int64_t> idx) const noexcept {
  std::int64_t off = 0;
  const std::size_t n = idx.size() < static_cast<std::size_t>(rank) ? idx.size() : static_cast<std::size_t>(rank);
  for (std::size_t d = 0; d < n; ++d) off += idx[d] * strides[d];
  return off;
}

std::pair<std::int64_t, std::int64_t> TensorView::offset_range() const noexcept {
  if (numel() == 0) return {0, 0};
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < rank; ++d) {
    const std::int64_t reach = (sizes[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  return {lo, hi};
}

namespace {

// The error paths of element_ptr, out of line: the fuzz campaign's references spend much of their
// time in element loads, whose fast path is one pass over the index.
[[noreturn, gnu::noinline, gnu::cold]] void bad_element_access(const TensorView& v, std::span<const std::int64_t> idx) {
  if (v.device.is_cuda()) {
    throw std::logic_error("host element access on a " + v.device.str() + " tensor view");
  }
  if (idx.size() != static_cast<std::size_t>(v.rank)) {
    throw std::out_of_range("index of length " + std::to_string(idx.size()) + " for a tensor of rank " +
                            std::to_string(v.rank));
  }
  throw std::out_of_range("index " + py_tuple(idx) + " is out of bounds for shape " + py_tuple(v.shape()));
}

std::byte* element_ptr(const TensorView& v, std::span<const std::int64_t> idx) {
  if (v.device.is_cuda() || idx.size() != static_cast<std::size_t>(v.rank)) [[unlikely]]
    bad_element_access(v, idx);
  std::int64_t off = 0;
  for (int d = 0; d < v.rank; ++d) {
    // One unsigned comparison: negative indices wrap to huge values.
    if (static_cast<std::uint64_t>(idx[d]) >= static_cast<std::uint64_t>(v.sizes[d])) [[unlikely]]
      bad_element_access(v, idx);
    off += idx[d] * v.strides[d];
  }
  return static_cast<std::byte*>(v.data) + off * static_cast<std::int64_t>(v.element_size());
}

std::vector<std::int64_t> unflatten(const TensorView& v, std::int64_t i) {
  if (i < 0 || i >= v.numel()) {
    throw std::out_of_range("flat index " + std::to_string(i) + " is out of bounds for " +
                            std::to_string(v.numel()) + " elements");
  }
  std::vector<std::int64_t> idx(static_cast<std::size_t>(v.rank));
  for (int d = v.rank - 1; d >= 0; --d) {
    idx[d] = i % v.sizes[d];
    i /= v.sizes[d];
  }
  return idx;
}

}  // namespace

double TensorView::load(std::span<const std::int64_t> idx) const {
  const std::byte* p = element_ptr(*this, idx);
  switch (dtype) {
    case DType::f32: return read_as<float>(p);
    case DType::f16: return f16_bits_to_f32(read_as<std::uint16_t>(p));
    case DType::bf16: return bf16_bits_to_f32(read_as<std::uint16_t>(p));
    case DType::i32: return read_as<std::int32_t>(p);
    case DType::i64: return static_cast<double>(read_as<std::int64_t>(p));
    case DType::boolean: return read_as<std::uint8_t>(p) != 0 ? 1.0 : 0.0;
    case DType::f64: return read_as<double>(p);
  }
  return 0.0;
}

void TensorView::store(std::span<const std::int64_t> idx, double v) const {
  std::byte* p = element_ptr(*this, idx);
  switch (dtype) {
    case DType::f32: write_as(p, static_cast<float>(v)); break;
    case DType::f16: write_as(p, f64_to_f16_bits(v)); break;
    case DType::bf16: write_as(p, f64_to_bf16_bits(v)); break;
    case DType::i32: write_as(p, static_cast<std::int32_t>(round_to_dtype(v, dtype))); break;
    case DType::i64: write_as(p, static_cast<std::int64_t>(round_to_dtype(v, dtype))); break;
    case DType::boolean: write_as(p, static_cast<std::uint8_t>(v != 0.0)); break;
    case DType::f64: write_as(p, v); break;
  }
}

std::int64_t TensorView::load_int(std::span<const std::int64_t> idx) const {
  const std::byte* p = element_ptr(*this, idx);
  switch (dtype) {
    case DType::i32: return read_as<std::int32_t>(p);
    case DType::i64: return read_as<std::int64_t>(p);
    case DType::boolean: return read_as<std::uint8_t>(p) != 0;
    default: return static_cast<std::int64_t>(round_to_dtype(load(idx), DType::i64));
  }
}

void TensorView::store_int(std::span<const std::int64_t> idx, std::int64_t v) const {
  switch (dtype) {
    case DType::i32: {
      const std::int64_t c = v < INT32_MIN ? INT32_MIN : (v > INT32_MAX ? INT32_MAX : v);
      write_as(element_ptr(*this, idx), static_cast<std::int32_t>(c));
      break;
    }
    case DType::i64: write_as(element_ptr(*this, idx), v); break;
    case DType::boolean: write_as(element_ptr(*this, idx), static_cast<std::uint8_t>(v != 0)); break;
    default: store(idx, static_cast<double>(v));
  }
}

double TensorView::load_flat(std::int64_t i) const { return load(unflatten(*this, i)); }
std::int64_t TensorView::load_int_flat(std::int64_t i) const { return load_int(unflatten(*this, i)); }
void TensorView::store_flat(std::int64_t i, double v) const { store(unflatten(*this, i), v); }

TensorView TensorView::select(int dim, std::int64_t index) const {
  const int d = wrap_dim(dim, rank);
  const std::int64_t i = index < 0 ? index + sizes[d] : index;
  if (i < 0 || i >= sizes[d]) {
    throw std::out_of_range("select(): index " + std::to_string(index) + " out of range for tensor of size " +
                            py_tuple(shape()) + " at dimension " + std::to_string(dim));
  }
  TensorView v = *this;
  v.data = static_cast<std::byte*>(data) + i * strides[d] * static_cast<std::int64_t>(element_size());
  for (int k = d; k + 1 < rank; ++k) {
    v.sizes[k] = sizes[k + 1];
    v.strides[k] = strides[k + 1];
  }
  v.rank = rank - 1;
  v.sizes[v.rank] = 0;
  v.strides[v.rank] = 0;
  return v;
}

}  // namespace kparity
