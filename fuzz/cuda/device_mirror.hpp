#pragma once
// Device copies of host views for kernel-vs-reference properties: the same strides and the same
// bytes (padding included), so a kernel sees exactly the layout the reference saw.
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

#include "kparity/core/tensor_view.hpp"

namespace kparity::fuzz {

class DeviceMirror {
 public:
  explicit DeviceMirror(const TensorView& host) : host_(host) {
    auto [lo, hi] = host.offset_range();
    lo_ = lo;
    bytes_ = host.numel() == 0 ? 0 : static_cast<std::size_t>(hi - lo + 1) * host.element_size();
    if (bytes_ > 0) check(cudaMalloc(&base_, bytes_), "cudaMalloc");
    view_ = host;
    view_.device = Device::cuda(0);
    view_.data = bytes_ ? static_cast<char*>(base_) - lo_ * static_cast<std::int64_t>(host.element_size()) : nullptr;
    upload();
  }
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;
  ~DeviceMirror() { if (base_) cudaFree(base_); }

  void upload() {
    if (bytes_) check(cudaMemcpy(base_, host_base(), bytes_, cudaMemcpyHostToDevice), "upload");
  }
  void download() {
    if (bytes_) check(cudaMemcpy(host_base(), base_, bytes_, cudaMemcpyDeviceToHost), "download");
  }
  const TensorView& view() const { return view_; }

  static bool device_present() {
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
  }

 private:
  void* host_base() const { return static_cast<char*>(host_.data) + lo_ * static_cast<std::int64_t>(host_.element_size()); }
  static void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
  }
  TensorView host_, view_;
  void* base_ = nullptr;
  std::int64_t lo_ = 0;
  std::size_t bytes_ = 0;
};

}  // namespace kparity::fuzz
