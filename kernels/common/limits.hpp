#pragma once
// Device limits the launchers size their launches against, in one place. sm_90 values (the build's
// default architecture, cmake/KparityCuda.cmake); the numbers are from the compute-capability table
// of the CUDA C++ Programming Guide.
#include <cstddef>

namespace kparity::kernels {

// Dynamic shared memory a launch may use without cudaFuncAttributeMaxDynamicSharedMemorySize.
inline constexpr std::size_t kSmemDefaultPerBlock = 48 * 1024;
// The most a block can opt in to on sm_90 (cudaDevAttrMaxSharedMemoryPerBlockOptin = 232448 bytes).
inline constexpr std::size_t kSmemOptinPerBlock = 227 * 1024;
// Multiprocessors of an H100/H200 SXM: what the tile and split heuristics assume when the driver
// cannot be asked (they steer speed only, never results).
inline constexpr int kFallbackSmCount = 132;

}  // namespace kparity::kernels
