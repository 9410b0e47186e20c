// The CUDA kernels as a backend under test: every tensor of the call mirrored to the device inside guard
// bands, pure outputs arriving poisoned (run_backend poisons them on the host), the typed launcher
// called with synchronisation, then the hygiene checks (guard bands, inputs and padding untouched)
// and a device probe so a fault is pinned on this case.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "../probe.hpp"
#include "kparity/judge/backend.hpp"
#include "kparity/judge/device_mirror.hpp"
#include "kparity/judge/guard.hpp"
#include "kparity/judge/kernel_launch.hpp"

namespace kparity::judging {
namespace {

// Raw device scratch (the sparse decode split-K workspace) between guard bands.
class GuardedScratch {
 public:
  explicit GuardedScratch(std::size_t bytes) : bytes_(bytes) {
    cuda_check(cudaMalloc(&base_, bytes_ + 2 * kGuardBytes), "cudaMalloc workspace");
    std::vector<std::byte> image(bytes_ + 2 * kGuardBytes, std::byte{0xff});
    fill_guard({image.data(), kGuardBytes}, pattern());
    fill_guard({image.data() + kGuardBytes + bytes_, kGuardBytes}, pattern());
    cuda_check(cudaMemcpy(base_, image.data(), image.size(), cudaMemcpyHostToDevice), "upload workspace");
  }
  GuardedScratch(const GuardedScratch&) = delete;
  GuardedScratch& operator=(const GuardedScratch&) = delete;
  ~GuardedScratch() { cudaFree(base_); }
  void* data() const { return static_cast<std::byte*>(base_) + kGuardBytes; }
  std::size_t bytes() const { return bytes_; }
  std::string finish() const {
    std::vector<std::byte> image(bytes_ + 2 * kGuardBytes);
    cuda_check(cudaMemcpy(image.data(), base_, image.size(), cudaMemcpyDeviceToHost), "download workspace");
    std::string a = check_guard("workspace", "guard band before", {image.data(), kGuardBytes}, pattern());
    std::string b = check_guard("workspace", "guard band after", {image.data() + kGuardBytes + bytes_, kGuardBytes},
                                pattern());
    return a.empty() ? b : b.empty() ? a : a + "; " + b;
  }

 private:
  static std::vector<std::byte> pattern() { return guard_pattern(DType::f32); }
  std::size_t bytes_;
  void* base_ = nullptr;
};

// The call's own checks with the kernel entry, shape and dtype ones only: the references already
// ran the data checks on the host over the same bytes, and a launcher's deep pass reads through
// host mirrors of the tensors it copies (kda/recurrent's reads q, k, v... directly, which faults on
// device memory).
kernels::LaunchOptions launch_options(const Call& c) {
  kernels::LaunchOptions o;
  o.validate = c.options;
  o.validate.entry = Entry::cuda_kernel;
  o.validate.deep = false;
  o.sync_after_launch = true;
  return o;
}

Status launch(const Call& c, const ArgBag& dev, std::unique_ptr<GuardedScratch>& workspace) {
  kernels::sparse::DecodeWorkspace ws;
  if (c.op == sparse::kPagedDecodeOp) {
    // With a workspace the launcher takes its split-K path, the one production decode uses.
    if (const std::size_t bytes = kernels::sparse::paged_decode_workspace_bytes(sparse::paged_decode_args(dev));
        bytes > 0) {
      workspace = std::make_unique<GuardedScratch>(bytes);
      ws = {workspace->data(), workspace->bytes()};
    }
  }
  return launch_kernel(c.op, dev, nullptr, launch_options(c), ws);
}

void run_on_device(Call& c) {
  std::map<std::string, std::unique_ptr<DeviceMirror>> mirrors;
  ArgBag dev;
  for (auto& [name, t] : c.tensors) {
    const bool written = std::find(c.written.begin(), c.written.end(), name) != c.written.end();
    auto m = std::make_unique<DeviceMirror>(name, t, written);
    dev.tensors.emplace(name, m->view());
    mirrors.emplace(name, std::move(m));
  }
  dev.scalars = c.scalars;
  dev.flags = c.flags;
  std::unique_ptr<GuardedScratch> workspace;
  const Status st = launch(c, dev, workspace);
  if (!st.ok()) {
    const Diagnostic& d = *st.first_error();
    if (d.error_class == ErrorClass::NotImplementedError) throw BackendUnsupported(d.render_text());
    throw std::runtime_error("the launcher rejected a call the reference accepts: " + d.render_text());
  }
  cuda_check(cudaDeviceSynchronize(), "after the launch");
  cuda_check(cudaGetLastError(), "after the launch");
  std::string problems;
  for (auto& [name, m] : mirrors)
    if (std::string p = m->finish(); !p.empty()) problems += (problems.empty() ? "" : "; ") + p;
  if (workspace)
    if (std::string p = workspace->finish(); !p.empty()) problems += (problems.empty() ? "" : "; ") + p;
  probe_device();
  if (!problems.empty()) throw std::runtime_error("device memory hygiene: " + problems);
}

}  // namespace

DeviceProbe probe_cuda_here() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) return {true, ""};
  std::string why = "no CUDA device";
  if (e != cudaSuccess && e != cudaErrorNoDevice) why += std::string(" (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  cudaGetLastError();  // do not leave the error for the next CUDA call to report
  return {false, why};
}

std::vector<Backend> cuda_backends(const DeviceProbe& probe, std::string& why) {
  if (!probe.available) {
    why = probe.why;
    return {};
  }
  why.clear();
  return {Backend{"cuda", cuda_backend_ops(), &run_on_device}};
}

}  // namespace kparity::judging
