// Packed decode instantiations (state dtype x out dtype x K x small-batch instance).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {

DispatchResult launch_packed(const PackedParams& p, int state_dt, int out_dt, const Launch& l) {
  return dispatch::on_dtype(state_dt, "initial_state.dtype", [&](auto s) {
    return dispatch::on_dtype(out_dt, "out.dtype", [&](auto o) {
      return dispatch::on_head_dim(p.in.K, [&](auto k) {
        using S = decltype(s);
        using O = decltype(o);
        if (p.early_state) return dispatch::go(packed_decode_early_kernel<S, O, decltype(k)::value>, kPackedThreads, p, l);
        return dispatch::go(packed_decode_kernel<S, O, decltype(k)::value>, kPackedThreads, p, l);
      });
    });
  });
}

}  // namespace kparity::kernels::kda
