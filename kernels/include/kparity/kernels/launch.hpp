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
  // Decode kernels only (kda/packed_decode, kda/replayssm_decode, sparse/paged_decode; issue 31):
  // 0 the default (the environment's KPARITY_DECODE_VARIANT=1|2 if set, else the CMake option
  // KPARITY_DECODE_FAST: OFF gives 1), 1 the established launches,
  // 2 the small-batch paths (programmatic dependent launch, so a call's launch overlaps the previous
  // kernel's tail; sparse: the wide split-K combine; packed: state loads issued with the slot index).
  // The same results bit for bit either way; tests and benchmarks force each to compare them.
  int decode_variant = 0;
};

}  // namespace kparity::kernels
