// Built instead of cuda_backend.cpp when the kernels are not (KPARITY_CUDA=OFF or no nvcc).
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/property.hpp"
#include "probe.hpp"

namespace kparity::fuzz {
namespace {
constexpr const char* kNotBuilt = "kernels not built (configure with -DKPARITY_CUDA=ON)";
}  // namespace

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
    p.skipped = kNotBuilt;
    out.push_back(std::move(p));
  }
  return out;
}
std::vector<Property> launcher_properties() { return launcher_properties(false); }

DeviceProbe probe_cuda_here() { return {false, kNotBuilt}; }

std::vector<Backend> cuda_backends(const DeviceProbe& probe, std::string& why) {
  why = probe.why;
  return {};
}

}  // namespace kparity::fuzz
