#include "kparity/core/tensor.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "kparity/core/format.hpp"

namespace kparity {

namespace {

std::byte* base_ptr(std::vector<std::byte>& storage, std::int64_t offset, DType t) {
  if (storage.empty()) return nullptr;
  return storage.data() + offset * static_cast<std::int64_t>(dtype_size(t));
}

// All-ones is a NaN in f64, f32, f16 and bf16 alike; 0x7f.. is a large positive integer (and not a
// valid bool byte).
std::byte poison_byte(DType t) { return is_floating(t) ? std::byte{0xff} : std::byte{0x7f}; }

// A large buffer's pages faulted in by one madvise call before its first write (Linux 5.14+:
// MADV_POPULATE_WRITE; elsewhere, or when refused, nothing happens and the writes fault them in as
// before). A kernel-sized fuzz case copies and allocates tens of MiB of tensors per reference run,
// which glibc maps afresh every time; one page fault per 4 KiB was a fifth of a kernel-sized sparse
// oracle (issue 25, perf: exc_page_fault and its callees). The bytes written are the same.
constexpr std::size_t kPopulateMin = std::size_t{1} << 22;
void reserve_storage(std::vector<std::byte>& v, std::size_t n) {
  if (n < kPopulateMin) return;
  v.reserve(n);
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  constexpr std::uintptr_t kPage = 4096;
  const auto lo = (reinterpret_cast<std::uintptr_t>(v.data()) + kPage - 1) & ~(kPage - 1);
  const auto hi = (reinterpret_cast<std::uintptr_t>(v.data()) + n) & ~(kPage - 1);
  if (hi > lo) (void)madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_POPULATE_WRITE);
#endif
}

// The per-thread store of recycled buffers (Tensor::recycled_*): at most kBinBuffers buffers and
// kBinBytes bytes of capacity; a request takes the smallest buffer that holds it, a release beyond
// the limits drops the smallest buffers (a large one serves every smaller request). A buffer
// released during or after the thread's destruction of the store is freed as usual. Why these
// limits: the kernel-sized fuzz tier's largest oracle copy is a 32 MiB input and a 64 MiB widened
// output; the store holds a few such cases' worth and no more (it stays mapped while the thread lives).
constexpr std::size_t kBinBuffers = 4, kBinBytes = std::size_t{256} << 20;
struct Bin {
  std::vector<std::vector<std::byte>> buffers;
  std::size_t bytes = 0;
  Bin() { buffers.reserve(kBinBuffers + 1); }  // release_buffer's push_back never allocates
  ~Bin();
};
thread_local bool t_bin_gone = false;  // trivially destructible: readable while the store is destroyed
Bin::~Bin() { t_bin_gone = true; }
Bin& bin() {
  thread_local Bin b;
  return b;
}

// An empty vector whose capacity holds n bytes: a recycled buffer when one fits, else a fresh one
// (faulted in as reserve_storage does).
std::vector<std::byte> take_buffer(std::size_t n) {
  std::vector<std::byte> v;
  if (n >= kPopulateMin && !t_bin_gone) {
    Bin& b = bin();
    std::size_t best = b.buffers.size();
    for (std::size_t i = 0; i < b.buffers.size(); ++i)
      if (b.buffers[i].capacity() >= n && (best == b.buffers.size() || b.buffers[i].capacity() < b.buffers[best].capacity()))
        best = i;
    if (best < b.buffers.size()) {
      v = std::move(b.buffers[best]);
      b.buffers.erase(b.buffers.begin() + static_cast<std::ptrdiff_t>(best));
      b.bytes -= v.capacity();
      v.clear();
      return v;
    }
  }
  reserve_storage(v, n);
  return v;
}

// Called from the destructor and the move assignment (noexcept): nothing here allocates (the store's
// own first construction aside, which may; then the buffer is freed as usual).
void release_buffer(std::vector<std::byte>&& v) noexcept try {
  if (v.capacity() < kPopulateMin || v.capacity() > kBinBytes || t_bin_gone) return;  // freed by v's owner
  Bin& b = bin();
  b.bytes += v.capacity();
  b.buffers.push_back(std::move(v));
  while (b.buffers.size() > kBinBuffers || b.bytes > kBinBytes) {
    auto smallest = std::min_element(b.buffers.begin(), b.buffers.end(),
                                     [](const auto& x, const auto& y) { return x.capacity() < y.capacity(); });
    b.bytes -= smallest->capacity();
    b.buffers.erase(smallest);
  }
} catch (...) {
}

}  // namespace

Tensor::~Tensor() {
  if (recycle_) release_buffer(std::move(storage_));
}

Tensor Tensor::recycled_poisoned(DType dtype, Shape shape) {
  Tensor t;
  t.view_ = TensorView(nullptr, dtype, shape);
  const std::size_t n = static_cast<std::size_t>(t.view_.numel()) * dtype_size(dtype);
  t.storage_ = take_buffer(n);
  t.storage_.assign(n, poison_byte(dtype));
  t.view_.data = base_ptr(t.storage_, 0, dtype);
  t.recycle_ = true;
  return t;
}

Tensor Tensor::recycled_copy(const Tensor& other) {
  Tensor t;
  t.offset_ = other.offset_, t.view_ = other.view_;
  t.storage_ = take_buffer(other.storage_.size());
  t.storage_.assign(other.storage_.begin(), other.storage_.end());
  t.view_.data = base_ptr(t.storage_, t.offset_, t.view_.dtype);
  t.recycle_ = true;
  return t;
}

Tensor::Tensor(DType dtype, Shape shape) : view_(nullptr, dtype, shape) {
  const std::size_t n = static_cast<std::size_t>(view_.numel()) * dtype_size(dtype);
  reserve_storage(storage_, n);
  storage_.assign(n, std::byte{0});
  view_.data = base_ptr(storage_, 0, dtype);
}

Tensor Tensor::poisoned(DType dtype, Shape shape) {
  Tensor t;
  t.view_ = TensorView(nullptr, dtype, shape);
  const std::size_t n = static_cast<std::size_t>(t.view_.numel()) * dtype_size(dtype);
  reserve_storage(t.storage_, n);
  t.storage_.assign(n, poison_byte(dtype));
  t.view_.data = base_ptr(t.storage_, 0, dtype);
  return t;
}

Tensor::Tensor(const Tensor& other) : offset_(other.offset_), view_(other.view_) {
  reserve_storage(storage_, other.storage_.size());
  storage_.assign(other.storage_.begin(), other.storage_.end());
  view_.data = base_ptr(storage_, offset_, view_.dtype);
}

Tensor& Tensor::operator=(const Tensor& other) {
  if (this != &other) {
    storage_ = other.storage_;
    offset_ = other.offset_;
    view_ = other.view_;
    view_.data = base_ptr(storage_, offset_, view_.dtype);
  }
  return *this;
}

Tensor::Tensor(Tensor&& other) noexcept
    : storage_(std::move(other.storage_)), offset_(other.offset_), view_(other.view_), recycle_(other.recycle_) {
  view_.data = base_ptr(storage_, offset_, view_.dtype);
  other = Tensor();
}

Tensor& Tensor::operator=(Tensor&& other) noexcept {
  if (this != &other) {
    if (recycle_) release_buffer(std::move(storage_));
    storage_ = std::move(other.storage_);
    offset_ = other.offset_;
    view_ = other.view_;
    view_.data = base_ptr(storage_, offset_, view_.dtype);
    recycle_ = other.recycle_;
    other.storage_.clear();
    other.offset_ = 0;
    other.view_ = TensorView();
    other.recycle_ = false;
  }
  return *this;
}

Tensor Tensor::strided(DType dtype, Shape shape, Shape strides, std::int64_t storage_offset,
                       std::int64_t storage_elems) {
  Tensor t;
  t.view_ = TensorView(nullptr, dtype, shape, strides);
  const auto [lo, hi] = t.view_.offset_range();
  const bool empty = t.view_.numel() == 0;
  const std::int64_t needed = empty ? storage_offset : storage_offset + hi + 1;
  const std::string what = "Tensor::strided: shape " + py_tuple(shape) + ", strides " + py_tuple(strides) +
                           ", storage offset " + std::to_string(storage_offset);
  if (storage_offset < 0) throw std::invalid_argument(what + ": negative storage offset");
  if (!empty && storage_offset + lo < 0) throw std::invalid_argument(what + ": reaches before the buffer start");
  if (storage_elems < 0) storage_elems = needed;
  if (needed > storage_elems) {
    throw std::invalid_argument(what + ": needs " + std::to_string(needed) + " elements but the buffer has " +
                                std::to_string(storage_elems));
  }
  t.storage_.assign(static_cast<std::size_t>(storage_elems) * dtype_size(dtype), std::byte{0});
  t.offset_ = storage_offset;
  t.view_.data = base_ptr(t.storage_, storage_offset, dtype);
  return t;
}

Tensor& Tensor::fill(double v) {
  for_each_element(view_, [&](auto idx, std::int64_t) { view_.store(idx, v); });
  return *this;
}

Tensor& Tensor::fill_uniform(std::uint64_t seed, double lo, double hi) {
  Rng rng(seed);
  for_each_element(view_, [&](auto idx, std::int64_t) { view_.store(idx, rng.uniform(lo, hi)); });
  return *this;
}

Tensor& Tensor::fill_normal(std::uint64_t seed, double mean, double stddev) {
  Rng rng(seed);
  for_each_element(view_, [&](auto idx, std::int64_t) { view_.store(idx, mean + stddev * rng.normal()); });
  return *this;
}

Tensor& Tensor::fill_int(std::uint64_t seed, std::int64_t lo, std::int64_t hi_inclusive) {
  Rng rng(seed);
  for_each_element(view_, [&](auto idx, std::int64_t) { view_.store_int(idx, rng.integer(lo, hi_inclusive)); });
  return *this;
}

Tensor& Tensor::poison() {
  std::fill(storage_.begin(), storage_.end(), poison_byte(view_.dtype));
  return *this;
}

Tensor& Tensor::copy_from(const TensorView& src) {
  copy_convert(src, view_);
  return *this;
}

Tensor Tensor::clone_contiguous() const {
  Tensor t(view_.dtype, view_.shape());
  copy_convert(view_, t.view_);
  return t;
}

void copy_convert(const TensorView& src, const TensorView& dst) {
  if (src.shape() != dst.shape()) {
    throw std::invalid_argument("copy_convert: source shape " + py_tuple(src.shape()) +
                                " differs from destination shape " + py_tuple(dst.shape()));
  }
  if (!src.device.is_cpu() || !dst.device.is_cpu()) {
    throw std::logic_error("copy_convert: host copy between " + src.device.str() + " and " + dst.device.str());
  }
  const std::int64_t esize = static_cast<std::int64_t>(src.element_size());
  if (src.dtype == dst.dtype) {
    // A byte copy keeps NaN payloads and the full i64 range.
    for_each_element(src, [&](auto idx, std::int64_t off) {
      std::memcpy(static_cast<std::byte*>(dst.data) + dst.offset_of(idx) * esize,
                  static_cast<const std::byte*>(src.data) + off * esize, static_cast<std::size_t>(esize));
    });
  } else if (!is_floating(src.dtype) && !is_floating(dst.dtype)) {
    for_each_element(src, [&](auto idx, std::int64_t) { dst.store_int(idx, src.load_int(idx)); });
  } else {
    for_each_element(src, [&](auto idx, std::int64_t) { dst.store(idx, src.load(idx)); });
  }
}

}  // namespace kparity
