// Built instead of cuda/rejected_launch.cpp when the kernels are not (KPARITY_CUDA=OFF or no nvcc).
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"

namespace kparity::fuzz {

// The launcher properties a kernel build has (backends/cuda/rejected_launch.cpp, on host memory
// without a device), listed and reported as skipped.
std::vector<Property> launcher_properties(bool) {
  std::vector<Property> out;
  for (const auto& op : cuda_backend_ops()) {
    Property p;
    p.op = op;
    p.kind = "contracts";
    p.backend = "launcher";
    p.name = op + "/rejected-call-never-launches/launcher";
    p.buckets = spec_for(op).buckets;
    p.skipped = probe_cuda(false).why;
    out.push_back(std::move(p));
  }
  return out;
}
std::vector<Property> launcher_properties() { return launcher_properties(false); }

}  // namespace kparity::fuzz
