// ReplaySSM decode instantiations for a f16 state (one TU per state dtype).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_replay_f16(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l) {
  return dispatch::replay<__half>(p, out_dt, ring_dt, l);
}
}  // namespace kparity::kernels::kda
