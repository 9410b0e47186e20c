#pragma once
// An owning host tensor for tests, the CLI and the reference. Storage is a byte vector; the view
// may be strided with a storage offset so layouts with padding can be built.
#include <cstdint>
#include <vector>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor_view.hpp"

namespace kparity {

class Tensor {
 public:
  Tensor() = default;
  // Copies own a fresh buffer, so the view is re-pointed at it (a memberwise copy would alias).
  Tensor(const Tensor& other);
  Tensor& operator=(const Tensor& other);
  Tensor(Tensor&& other) noexcept;
  Tensor& operator=(Tensor&& other) noexcept;
  ~Tensor();
  // Contiguous, zero-initialised.
  Tensor(DType dtype, Shape shape);
  // Contiguous and poisoned (the bytes of poison() below), written once: Tensor(dtype, shape).poison()
  // writes a large buffer twice (issue 25: a kernel-sized output has up to 2^24 elements).
  static Tensor poisoned(DType dtype, Shape shape);
  // Recycled tensors (issue 25): the same tensors as poisoned() and the copy constructor make, whose
  // buffer of 4 MiB or more, once the tensor is destroyed, goes to a small store of the destroying
  // thread (at most 4 buffers, 256 MiB) instead of back to the allocator, for the next recycled
  // tensor of that thread to reuse, its pages already mapped. For a caller that makes large tensors
  // of similar sizes over and over (the rule's oracle copy of each case, judge/src/runs.cpp):
  // mapping fresh pages for tens of MiB a case was a quarter of a kernel-sized sparse oracle. Copies
  // of a recycled tensor are ordinary tensors.
  static Tensor recycled_poisoned(DType dtype, Shape shape);
  static Tensor recycled_copy(const Tensor& other);
  // Strided over a buffer of `storage_elems` elements starting at `storage_offset`; throws
  // std::invalid_argument if the view would reach outside the buffer.
  static Tensor strided(DType dtype, Shape shape, Shape strides, std::int64_t storage_offset = 0,
                        std::int64_t storage_elems = -1);

  TensorView view() const { return view_; }
  // The view labelled with another device (for diagnostics examples: metadata only).
  TensorView view_on(Device d) const { return view_.with_device(d); }
  operator TensorView() const { return view_; }

  DType dtype() const noexcept { return view_.dtype; }
  Shape shape() const { return view_.shape(); }
  std::int64_t numel() const noexcept { return view_.numel(); }
  std::vector<std::byte>& storage() noexcept { return storage_; }
  const std::vector<std::byte>& storage() const noexcept { return storage_; }
  std::int64_t storage_offset() const noexcept { return offset_; }

  // Deterministic fills (same seed, same bits on every platform). Values are rounded to the dtype.
  Tensor& fill(double v);
  Tensor& fill_uniform(std::uint64_t seed, double lo, double hi);
  Tensor& fill_normal(std::uint64_t seed, double mean = 0.0, double stddev = 1.0);
  Tensor& fill_int(std::uint64_t seed, std::int64_t lo, std::int64_t hi_inclusive);
  // Every storage byte (including padding between strided elements) set to a NaN pattern for
  // floats or 0x7f.. for integers: poison before a run so unwritten outputs show up.
  Tensor& poison();
  Tensor& copy_from(const TensorView& src);  // same shape; converts dtype

  Tensor clone_contiguous() const;

 private:
  std::vector<std::byte> storage_;
  std::int64_t offset_ = 0;
  TensorView view_;
  bool recycle_ = false;  // the buffer goes to the thread's store when released
};

// Host copy with dtype conversion: values of `src` into `dst`, same shape. Throws on mismatch.
void copy_convert(const TensorView& src, const TensorView& dst);

}  // namespace kparity
