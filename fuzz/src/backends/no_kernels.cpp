// Built instead of cuda_backend.cpp when the kernels are not (KPARITY_CUDA=OFF or no nvcc).
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

std::vector<Property> launcher_properties() { return {}; }

std::vector<Backend> cuda_backends(std::string& why) {
  why = "kernels not built (configure with -DKPARITY_CUDA=ON)";
  return {};
}

}  // namespace kparity::fuzz
