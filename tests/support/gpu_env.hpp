#pragma once
// Shared GPU-test plumbing: the one-line skip without a device, device copies of host tensors
// (whole storage, so strides, offsets and padding bytes travel too), NaN poison.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "kparity/core/tensor.hpp"

namespace kparity::gpu_test {

bool has_cuda_device();
// Why there is no usable device, one line: "no CUDA device" when the machine simply has none (no
// device, or no driver at all), otherwise the CUDA error cudaGetDeviceCount returned, with the
// driver and runtime versions. Empty when a device is present.
const std::string& no_device_reason();
// KPARITY_EXPECT_GPU=1 (set by scripts/gpu-suite.sh): a machine that should have a GPU. Then a
// missing device fails every device test instead of skipping it, so a broken driver cannot turn
// the GPU suite green.
bool expect_gpu();

// Every test starts with this: without a device the test is skipped with one visible line
// ("skipped: <reason>"), or fails under KPARITY_EXPECT_GPU=1.
#define KPARITY_REQUIRE_GPU()                                                                         \
  do {                                                                                                \
    if (!::kparity::gpu_test::has_cuda_device()) {                                                    \
      if (::kparity::gpu_test::expect_gpu())                                                          \
        FAIL() << "KPARITY_EXPECT_GPU=1 but " << ::kparity::gpu_test::no_device_reason();             \
      GTEST_SKIP() << "skipped: " << ::kparity::gpu_test::no_device_reason();                         \
    }                                                                                                 \
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
