// Packed decode and recurrent prefill instantiations (state dtype x out dtype x K; out x K).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {

DispatchResult launch_packed(const PackedParams& p, int state_dt, int out_dt, const Launch& l) {
  return dispatch::on_dtype(state_dt, "initial_state.dtype", [&](auto s) {
    return dispatch::on_dtype(out_dt, "out.dtype", [&](auto o) {
      return dispatch::on_head_dim(p.in.K, [&](auto k) {
        using S = decltype(s);
        using O = decltype(o);
        return dispatch::go(packed_decode_kernel<S, O, decltype(k)::value>, kPackedThreads, p, l);
      });
    });
  });
}

DispatchResult launch_recurrent(const RecurrentParams& p, int out_dt, const Launch& l) {
  return dispatch::on_dtype(out_dt, "out.dtype", [&](auto o) {
    return dispatch::on_head_dim(p.K, [&](auto k) {
      return dispatch::go(recurrent_kernel<decltype(o), decltype(k)::value>, kRecurrentThreads, p, l);
    });
  });
}

}  // namespace kparity::kernels::kda
