#pragma once
// One tensor of a call as a backend under test sees it: the bytes of its memory span (padding
// between elements included, so strided layouts stay what the reference saw) between two guard
// bands (guard.hpp). The image is placed in whatever memory the backend uses (cudaMalloc for the
// CUDA mirrors, a host buffer for CPU plugins, a torch buffer for Python implementations); view_at
// gives the tensor's view inside it. After the run, finish() takes the image back, reports what the
// run must not have touched (the guard bands, every byte of a tensor the op does not write, the
// padding of one it does) and copies the span of a written tensor back into the host tensor.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"

namespace kparity::judging {

class GuardedImage {
 public:
  // `host` must outlive the image; `written`: the op may write its elements.
  GuardedImage(std::string name, Tensor& host, bool written);

  const std::string& name() const { return name_; }
  bool written() const { return written_; }
  // The bytes to place: lead guard (plus the span's offset modulo 256, so a deliberately
  // misaligned storage offset stays misaligned), the span, trailing guard.
  const std::vector<std::byte>& bytes() const { return image_; }
  std::size_t size() const { return image_.size(); }
  // Byte offset of the tensor's element [0, ..., 0] inside the image (its strides are the host's).
  std::int64_t element_zero_offset() const;
  // The host view's layout pointing into an image placed at `base` on `device`.
  TensorView view_at(void* base, Device device) const;
  // "" when the run left the guard bands, the inputs and the padding alone, else one problem per
  // "; "-separated part. Copies the span back into the host tensor when it is written.
  std::string finish(std::span<const std::byte> after);

 private:
  std::string name_;
  Tensor& host_;
  bool written_;
  std::size_t es_ = 1, span_ = 0, lead_ = 0;
  std::int64_t lo_ = 0;
  std::vector<std::byte> image_;
};

}  // namespace kparity::judging
