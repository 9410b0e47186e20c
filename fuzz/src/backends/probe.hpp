#pragma once
// Private to the backends: the CUDA probe in this process, defined by the CUDA backend
// (cuda/cuda_backend.cpp) or, without kernels, by no_kernels.cpp.
#include "kparity/fuzz/backends/backend.hpp"

namespace kparity::fuzz {

DeviceProbe probe_cuda_here();

}  // namespace kparity::fuzz
