#pragma once
// Shared GPU-test plumbing: the one-line skip without a device, device copies of host tensors
// (whole storage, so strides, offsets and padding bytes travel too), NaN poison.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>

#include "kparity/core/tensor.hpp"

namespace kparity::gpu_test {

bool has_cuda_device();

// Every test starts with this: without a device the test is skipped with one visible line.
#define KPARITY_REQUIRE_GPU()                                       \
  do {                                                              \
    if (!::kparity::gpu_test::has_cuda_device()) GTEST_SKIP() << "skipped: no CUDA device"; \
  } while (0)

#define KPARITY_CUDA_OK(expr) ASSERT_EQ((expr), cudaSuccess) << cudaGetErrorString(expr)

// A device copy of a host Tensor's storage; view() has the host view's shape/strides/offset.
class DevTensor {
 public:
  DevTensor() = default;
  explicit DevTensor(const Tensor& host);
  DevTensor(const DevTensor&) = delete;
  DevTensor& operator=(const DevTensor&) = delete;
  DevTensor(DevTensor&& o) noexcept { *this = std::move(o); }
  DevTensor& operator=(DevTensor&& o) noexcept;
  ~DevTensor();

  const TensorView& view() const { return view_; }
  void upload(const Tensor& host);      // same storage size
  void download(Tensor& host) const;    // whole storage, padding included
  void poison();                        // every byte 0xFF: NaN in f32, f16 and bf16

 private:
  void* base_ = nullptr;
  std::size_t bytes_ = 0;
  TensorView view_;
};

}  // namespace kparity::gpu_test
