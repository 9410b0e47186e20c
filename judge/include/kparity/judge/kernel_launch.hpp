#pragma once
// The op's CUDA launcher on argument views, by op name (kernel builds only; the table is
// judge/src/kernel_table.hpp, the op list kernel_ops.hpp).
#include <cuda_runtime_api.h>

#include <functional>
#include <string_view>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/kernels/launch.hpp"
#include "kparity/kernels/sparse.hpp"

namespace kparity::judging {

// A launcher with its typed arguments built once (a decode loop over the same buffers reuses it);
// the launcher itself, its contract included, runs at every call. `ws`: the sparse decode split-K
// workspace (ignored by the other ops).
using BoundLaunch =
    std::function<Status(cudaStream_t stream, const kernels::LaunchOptions& options, kernels::sparse::DecodeWorkspace ws)>;

// Throws std::invalid_argument for an op without a kernel, and what the contract's typed-argument
// builder throws for a bag it cannot read (a missing argument).
BoundLaunch bind_kernel(std::string_view op, const ArgBag& args);
// bind_kernel(op, args) called once.
Status launch_kernel(std::string_view op, const ArgBag& args, cudaStream_t stream, const kernels::LaunchOptions& options,
                     kernels::sparse::DecodeWorkspace ws = {});

}  // namespace kparity::judging
