#pragma once
// A device copy of one host tensor for a backend run: its GuardedImage (the same strides and bytes,
// padding included, between two guard bands) in cudaMalloc'ed memory. finish() downloads it and
// reports what the run must not have touched (guarded_image.hpp).
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/judge/guarded_image.hpp"

namespace kparity::judging {

inline void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

// A context-corrupting fault shows up on the next CUDA call; probing here pins it on this case
// instead of on whatever runs next.
inline void probe_device() {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, 64), "device probe (cudaMalloc)");
  unsigned char host[64] = {};
  cudaError_t e = cudaMemset(p, 0x5a, sizeof host);
  if (e == cudaSuccess) e = cudaMemcpy(host, p, sizeof host, cudaMemcpyDeviceToHost);
  cudaFree(p);
  cuda_check(e, "device probe");
  for (unsigned char c : host)
    if (c != 0x5a) throw std::runtime_error("device probe: a memset/copy round trip returned wrong bytes");
}

class DeviceMirror {
 public:
  DeviceMirror(std::string name, Tensor& host, bool written) : image_(std::move(name), host, written) {
    cuda_check(cudaMalloc(&base_, image_.size()), "cudaMalloc " + image_.name());
    cuda_check(cudaMemcpy(base_, image_.bytes().data(), image_.size(), cudaMemcpyHostToDevice), "upload " + image_.name());
    view_ = image_.view_at(base_, Device::cuda(0));
  }
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;
  ~DeviceMirror() {
    if (base_) cudaFree(base_);
  }

  const TensorView& view() const { return view_; }

  // Downloads; copies the span back into the host tensor when the op writes it. Returns the
  // problems found, one line each ("" when none).
  std::string finish() {
    std::vector<std::byte> after(image_.size());
    cuda_check(cudaMemcpy(after.data(), base_, after.size(), cudaMemcpyDeviceToHost), "download " + image_.name());
    return image_.finish(after);
  }

 private:
  GuardedImage image_;
  void* base_ = nullptr;
  TensorView view_;
};

}  // namespace kparity::judging
