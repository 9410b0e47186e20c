// Built instead of cuda/cuda_backend.cpp when the kernels are not (KPARITY_CUDA=OFF or no nvcc).
#include "kparity/judge/backend.hpp"
#include "kparity/judge/kernel_ops.hpp"
#include "probe.hpp"

namespace kparity::judging {

DeviceProbe probe_cuda_here() { return {false, "kernels not built (configure with -DKPARITY_CUDA=ON)"}; }

std::string kernel_not_built(std::string_view op) {
  return has_kernel(op) ? "kernels not built (configure with -DKPARITY_CUDA=ON)" : "";
}

std::vector<Backend> cuda_backends(const DeviceProbe& probe, std::string& why) {
  why = probe.why;
  return {};
}

}  // namespace kparity::judging
