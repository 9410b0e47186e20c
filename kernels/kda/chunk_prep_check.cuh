#pragma once
// KPARITY_CHUNK_PREP=check (read in chunk.cpp), a debug mode for the specialised prep instance: the
// generic and the specialised prep kernels write the same call's operand blocks to two workspaces,
// both zeroed first (so the pitch padding neither writes compares equal), and this kernel compares
// them word for word. The specialised instance claims the same bits (chunk_prep_kernel.cuh); a
// difference prints its first words and traps, so the call fails with a launch error rather than
// passing on the generic instance's blocks, which the chain reads either way.
#include <cstdint>
#include <cstdio>

namespace kparity::kernels::kda {

inline constexpr int kPrepCheckThreads = 256;

static __global__ void __launch_bounds__(kPrepCheckThreads) chunk_prep_compare(const std::uint32_t* generic,
                                                                                const std::uint32_t* fast, std::int64_t n) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const std::uint32_t a = generic[i], b = fast[i];
    if (a != b) {
      std::printf("kda/chunk KPARITY_CHUNK_PREP=check: workspace word %lld differs: generic %08x, specialised %08x\n",
                  static_cast<long long>(i), a, b);
      __trap();
    }
  }
}

}  // namespace kparity::kernels::kda
