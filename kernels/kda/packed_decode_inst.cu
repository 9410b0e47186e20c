// Packed decode and recurrent prefill instantiations (state dtype x out dtype x K; out x K).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {

cudaError_t launch_packed(const PackedParams& p, int state_dt, int out_dt, const Launch& l) {
  return dispatch::on_dtype(state_dt, [&](auto s) {
    return dispatch::on_dtype(out_dt, [&](auto o) {
      return dispatch::on_head_dim(p.in.K, [&](auto k) {
        using S = decltype(s);
        using O = decltype(o);
        return dispatch::go(packed_decode_kernel<S, O, decltype(k)::value>, kPackedThreads, p, l);
      });
    });
  });
}

cudaError_t launch_recurrent(const RecurrentParams& p, int out_dt, const Launch& l) {
  return dispatch::on_dtype(out_dt, [&](auto o) {
    return dispatch::on_head_dim(p.K, [&](auto k) {
      return dispatch::go(recurrent_kernel<decltype(o), decltype(k)::value>, kRecThreads, p, l);
    });
  });
}

}  // namespace kparity::kernels::kda
