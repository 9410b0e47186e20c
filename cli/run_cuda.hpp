#pragma once
// `kparity run --backend cuda`: kparity's CUDA kernel on a dump, through kparity::judge's CUDA
// backend (every tensor copied to the device between guard bands, the op's launcher, the written
// tensors copied back, device-memory hygiene checked) and judged with its differential rule.
#include <string>
#include <string_view>

#include "commands.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/ops/dump.hpp"

namespace kparity::cli {

struct CudaAvailability {
  bool available = false;
  std::string why;  // when not: "no CUDA device", "kernels not built (...)", ...
};

// Whether this build has the kernels and this machine a device.
CudaAvailability cuda_availability();
// Whether the CUDA backend implements `op`.
bool cuda_implements(std::string_view op);

// Runs the kernel on the call `inputs` (the dump's arguments as they were before any run) and
// prints the block: the differential rule against the oracle per written tensor, the expected.*
// comparison, the result file. `several`: other backends run too (a call the kernel does not
// support is then reported as skipped instead of failing the run). Returns an exit status.
int run_cuda(const ops::Dump& dump, const ArgBag& inputs, const RunOptions& o, bool several);

}  // namespace kparity::cli
