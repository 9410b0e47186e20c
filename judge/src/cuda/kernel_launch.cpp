#include "kparity/judge/kernel_launch.hpp"

#include <stdexcept>
#include <string>

#include "../kernel_table.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/kernels/sparse.hpp"

namespace kparity::judging {

BoundLaunch bind_kernel(std::string_view op, const ArgBag& args) {
#define KPARITY_KERNEL_BIND(name, args_of, launch)                                                          \
  if (op == name)                                                                                           \
    return [a = args_of(args)](cudaStream_t s, const kernels::LaunchOptions& o,                            \
                               [[maybe_unused]] kernels::sparse::DecodeWorkspace ws) -> Status { return launch; };
  KPARITY_KERNEL_TABLE(KPARITY_KERNEL_BIND)
#undef KPARITY_KERNEL_BIND
  throw std::invalid_argument("no kernel launcher for op '" + std::string(op) + "'");
}

std::string kernel_not_built(std::string_view op) {
  if (op == kparity::kda::kChunkOp && !kernels::kda::chunk_kernel_built())
    return "kda/chunk kernel not built (configure with -DKPARITY_CHUNK_KERNEL=ON)";
  return "";
}

Status launch_kernel(std::string_view op, const ArgBag& args, cudaStream_t stream, const kernels::LaunchOptions& options,
                     kernels::sparse::DecodeWorkspace ws) {
  return bind_kernel(op, args)(stream, options, ws);
}

}  // namespace kparity::judging
