#pragma once
// Compile-time dispatch entry points, one translation unit per state dtype (style habit 9) so the
// instantiations build in parallel. The launchers validate every code and head dim before calling
// these; a value no case matches comes back as a DispatchResult naming it, never a fall-through.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/dispatch_result.hpp"
#include "kda/params.hpp"

namespace kparity::kernels::kda {

struct Launch {
  dim3 grid;
  std::size_t smem_bytes = 0;
  cudaStream_t stream = nullptr;
  bool pdl = false;  // programmatic dependent launch (common/pdl.cuh): decode kernels under decode_variant 2
};

DispatchResult launch_replay_f32(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l);
DispatchResult launch_replay_bf16(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l);
DispatchResult launch_replay_f16(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l);
DispatchResult launch_packed(const PackedParams& p, int state_dt, int out_dt, const Launch& l);
DispatchResult launch_recurrent(const RecurrentParams& p, int out_dt, const Launch& l);

}  // namespace kparity::kernels::kda
