// See chunk_accuracy_cuda.hpp.
#include "chunk_accuracy_cuda.hpp"

#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/kernels/kda.hpp"

namespace kparity::bench {
namespace {

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(e));
}

// A tensor's whole storage on the device (its padding too), and the view of it there.
class DeviceCopy {
 public:
  explicit DeviceCopy(const Tensor& t) : bytes_(t.storage().size()) {
    check(cudaMalloc(&base_, bytes_ ? bytes_ : 1), "cudaMalloc");
    check(cudaMemcpy(base_, t.storage().data(), bytes_, cudaMemcpyHostToDevice), "upload");
    view_ = t.view().with_device(Device::cuda(0));
    view_.data = static_cast<std::byte*>(base_) + t.storage_offset() * static_cast<std::int64_t>(t.view().element_size());
  }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  ~DeviceCopy() { cudaFree(base_); }
  const TensorView& view() const { return view_; }
  void download(Tensor& t) const {
    check(cudaMemcpy(t.storage().data(), base_, bytes_, cudaMemcpyDeviceToHost), "download");
  }

 private:
  std::size_t bytes_;
  void* base_ = nullptr;
  TensorView view_;
};

}  // namespace

std::string chunk_kernel_unavailable() {
  if (!kernels::kda::chunk_kernel_built()) return "kernel not built (configure with -DKPARITY_CHUNK_KERNEL=ON)";
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    return "no CUDA device";
  }
  return "";
}

fuzz::Call run_chunk_kernel(const fuzz::Call& call) {
  fuzz::Call c = call;
  for (const auto& name : c.pure_outputs) c.at(name).poison();  // an element the kernel skips shows
  std::map<std::string, std::unique_ptr<DeviceCopy>> dev;
  ArgBag bag;
  for (const auto& [name, t] : c.tensors) {
    auto d = std::make_unique<DeviceCopy>(t);
    bag.tensors.emplace(name, d->view());
    dev.emplace(name, std::move(d));
  }
  bag.scalars = c.scalars, bag.flags = c.flags;
  // Shape and dtype checks only: the oracle ran the data checks on the same bytes on the host.
  kernels::LaunchOptions o;
  o.validate = c.options;
  o.validate.entry = Entry::cuda_kernel;
  o.validate.deep = false;
  o.sync_after_launch = true;
  const Status st = kernels::kda::chunk(kda::chunk_args(bag), nullptr, o);
  if (!st.ok()) {
    const Diagnostic& d = *st.first_error();
    if (d.error_class == ErrorClass::NotImplementedError) throw fuzz::BackendUnsupported(d.render_text());
    throw std::runtime_error("the launcher refused a call the reference accepts: " + d.render_text());
  }
  check(cudaDeviceSynchronize(), "after the launch");
  for (const auto& name : c.written) dev.at(name)->download(c.at(name));
  return c;
}

}  // namespace kparity::bench
