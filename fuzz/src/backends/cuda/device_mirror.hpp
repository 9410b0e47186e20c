#pragma once
// A device copy of one host tensor for a backend run: the same strides and the same bytes
// (padding between elements included), so the kernel sees exactly the layout the reference saw,
// placed between two guard bands. finish() downloads everything and reports what the run must not
// have touched: the guard bands, every byte of a tensor the op does not write, and the padding of
// one it does.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/backends/guard.hpp"

namespace kparity::fuzz {

inline void cuda_check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

class DeviceMirror {
 public:
  DeviceMirror(std::string name, Tensor& host, bool written) : name_(std::move(name)), host_(host), written_(written) {
    const TensorView v = host.view();
    es_ = v.element_size();
    if (v.numel() > 0) {
      const auto [lo, hi] = v.offset_range();
      lo_ = lo;
      span_ = static_cast<std::size_t>(hi - lo + 1) * es_;
    }
    // The span starts at the same offset modulo 256 as on the host, so a deliberately misaligned
    // storage offset stays misaligned for the kernel's vector loads.
    const auto* storage = host.storage().data();
    const auto* first = static_cast<const std::byte*>(v.data) + lo_ * static_cast<std::int64_t>(es_);
    lead_ = kGuardBytes + (span_ ? static_cast<std::size_t>(first - storage) % 256 : 0);
    total_ = lead_ + span_ + kGuardBytes;
    cuda_check(cudaMalloc(&base_, total_), "cudaMalloc " + name_);
    std::vector<std::byte> image(total_);
    const auto pattern = guard_pattern(v.dtype);
    fill_guard({image.data(), lead_}, pattern);
    fill_guard({image.data() + lead_ + span_, kGuardBytes}, pattern);
    if (span_) std::copy(first, first + span_, image.begin() + static_cast<std::ptrdiff_t>(lead_));
    before_.assign(image.begin() + static_cast<std::ptrdiff_t>(lead_),
                   image.begin() + static_cast<std::ptrdiff_t>(lead_ + span_));
    cuda_check(cudaMemcpy(base_, image.data(), total_, cudaMemcpyHostToDevice), "upload " + name_);
    view_ = v;
    view_.device = Device::cuda(0);
    view_.data = static_cast<std::byte*>(base_) + lead_ - lo_ * static_cast<std::int64_t>(es_);
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
    std::vector<std::byte> image(total_);
    cuda_check(cudaMemcpy(image.data(), base_, total_, cudaMemcpyDeviceToHost), "download " + name_);
    const auto pattern = guard_pattern(host_.dtype());
    std::string problems;
    auto add = [&](std::string s) {
      if (!s.empty()) problems += (problems.empty() ? "" : "; ") + s;
    };
    add(check_guard(name_, "guard band before", {image.data(), lead_}, pattern));
    add(check_guard(name_, "guard band after", {image.data() + lead_ + span_, kGuardBytes}, pattern));
    add(check_untouched(name_, host_.view(), written_, before_, {image.data() + lead_, span_}));
    if (written_ && span_) {
      auto* first = static_cast<std::byte*>(host_.view().data) + lo_ * static_cast<std::int64_t>(es_);
      std::copy(image.begin() + static_cast<std::ptrdiff_t>(lead_),
                image.begin() + static_cast<std::ptrdiff_t>(lead_ + span_), first);
    }
    return problems;
  }

 private:
  std::string name_;
  Tensor& host_;
  bool written_;
  std::size_t es_ = 1, span_ = 0, lead_ = 0, total_ = 0;
  std::int64_t lo_ = 0;
  void* base_ = nullptr;
  TensorView view_;
  std::vector<std::byte> before_;
};

}  // namespace kparity::fuzz
