#pragma once
// Alignment helpers for host launchers and device code alike: 16 bytes is the width of a vector
// load/store (uint4) and of one cp.async chunk, so it decides which path a kernel may take.
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define KPARITY_HD_INLINE __host__ __device__ __forceinline__
#else
#define KPARITY_HD_INLINE inline
#endif

namespace kparity::kernels {

inline constexpr std::size_t kVecBytes = 16;

KPARITY_HD_INLINE bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15) == 0; }

// x rounded up to a multiple of `a`.
KPARITY_HD_INLINE constexpr std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

}  // namespace kparity::kernels
