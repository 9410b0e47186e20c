#pragma once
// The ops kparity has a CUDA kernel for, in every build (the kernels built or not): what the CUDA
// backend implements and which launcher properties exist. The launchers themselves, by op, are in
// kernel_launch.hpp (kernel builds only); both read one table (judge/src/kernel_table.hpp).
#include <string>
#include <string_view>
#include <vector>

namespace kparity::judging {

const std::vector<std::string>& kernel_ops();
bool has_kernel(std::string_view op);
// Why this build cannot run `op`'s kernel although the op has one, "" when it can (or when the op has
// no kernel at all): kda/chunk's kernel is compiled only with -DKPARITY_CHUNK_KERNEL=ON, and its
// launcher answers kda-chunk-kernel-not-built (NotImplementedError) without it. The CUDA differential
// properties of such an op are listed as skipped with this reason, instead of discarding every case.
std::string kernel_not_built(std::string_view op);

}  // namespace kparity::judging
