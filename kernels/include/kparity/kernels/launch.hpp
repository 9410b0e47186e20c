#pragma once
// What every kernel launcher takes besides its Args and stream.
#include "kparity/diagnostics/checker.hpp"

namespace kparity::kernels {

struct LaunchOptions {
  // Shape/dtype/device checks always run. validate.deep additionally copies the index/cursor
  // tensors to host mirrors (a synchronous copy: not for CUDA-graph capture or hot paths).
  ValidateOptions validate = ValidateOptions::upstream();
  // Synchronise the stream after the launch so an asynchronous fault is reported by this call
  // (style habit 4; tests turn it on). Not allowed while the stream is being captured.
  bool sync_after_launch = false;
};

}  // namespace kparity::kernels
