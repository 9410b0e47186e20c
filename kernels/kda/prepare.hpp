#pragma once
// The host half of each launcher, split out so the Google Benchmark of the host cost and the
// launchers share it: contract -> derive -> POD params -> launch geometry. No device access
// unless options.validate.deep is set.
#include "kda/dispatch.hpp"
#include "kparity/kernels/kda.hpp"

namespace kparity::kernels::kda {

struct ReplayPlan {
  ReplayParams params;
  int state_dt = kF32, out_dt = kF32, ring_dt = kF32;
  Launch launch;
};
struct PackedPlan {
  PackedParams params;
  int state_dt = kF32, out_dt = kF32;
  Launch launch;
};
struct RecurrentPlan {
  RecurrentParams params;
  int out_dt = kF32;
  Launch launch;
};

Status prepare_replayssm_decode(const ReplaySsmDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o,
                                ReplayPlan& plan);
Status prepare_packed_decode(const PackedDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o,
                             PackedPlan& plan);
Status prepare_recurrent(const RecurrentArgs& a, cudaStream_t stream, const LaunchOptions& o, RecurrentPlan& plan);

}  // namespace kparity::kernels::kda
