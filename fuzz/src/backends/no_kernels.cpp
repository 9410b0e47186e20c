// Built instead of cuda_backend.cpp when the kernels are not (KPARITY_CUDA=OFF or no nvcc).
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "probe.hpp"

namespace kparity::fuzz {

std::vector<Property> launcher_properties() { return {}; }
std::vector<Property> launcher_properties(bool) { return {}; }

DeviceProbe probe_cuda_here() { return {false, "kernels not built (configure with -DKPARITY_CUDA=ON)"}; }

std::vector<Backend> cuda_backends(const DeviceProbe& probe, std::string& why) {
  why = probe.why;
  return {};
}

}  // namespace kparity::fuzz
