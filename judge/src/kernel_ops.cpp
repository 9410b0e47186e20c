#include "kparity/judge/kernel_ops.hpp"

#include <algorithm>

#include "kernel_table.hpp"

namespace kparity::judging {

const std::vector<std::string>& kernel_ops() {
#define KPARITY_KERNEL_NAME(op, args, launch) std::string(op),
  static const std::vector<std::string> ops = {KPARITY_KERNEL_TABLE(KPARITY_KERNEL_NAME)};
#undef KPARITY_KERNEL_NAME
  return ops;
}

bool has_kernel(std::string_view op) {
  const auto& ops = kernel_ops();
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace kparity::judging
