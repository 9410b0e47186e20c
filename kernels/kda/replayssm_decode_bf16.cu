// ReplaySSM decode instantiations for a bf16 state (one TU per state dtype).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_replay_bf16(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l) {
  return dispatch::replay<__nv_bfloat16>(p, out_dt, ring_dt, l);
}
}  // namespace kparity::kernels::kda
