#pragma once
// Private to the backends: the CUDA probe in this process, defined by the CUDA backend
// (cuda/cuda_backend.cpp) or, without kernels, by no_kernels.cpp.
#include "kparity/judge/backend.hpp"

namespace kparity::judging {

DeviceProbe probe_cuda_here();

}  // namespace kparity::judging
