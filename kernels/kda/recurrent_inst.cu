// Recurrent prefill instantiations (out dtype x K), in their own translation unit (issue 32): they
// were compiled with the packed decode's, so a change to either rebuilt both.
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {

DispatchResult launch_recurrent(const RecurrentParams& p, int out_dt, const Launch& l) {
  return dispatch::on_dtype(out_dt, "out.dtype", [&](auto o) {
    return dispatch::on_head_dim(p.K, [&](auto k) {
      return dispatch::go(recurrent_kernel<decltype(o), decltype(k)::value>, kRecurrentThreads, p, l);
    });
  });
}

}  // namespace kparity::kernels::kda
