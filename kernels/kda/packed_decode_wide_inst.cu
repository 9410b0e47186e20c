// Packed decode, form "wide": its instantiations (state dtype x out dtype x K), in a translation unit
// of their own so they build beside the verified form's (packed_decode_inst.cu).
#include "kda/dispatch_impl.cuh"
#include "kda/packed_decode_wide_kernel.cuh"

namespace kparity::kernels::kda {

DispatchResult launch_packed_wide(const PackedParams& p, int state_dt, int out_dt, const Launch& l) {
  return dispatch::on_dtype(state_dt, "initial_state.dtype", [&](auto s) {
    return dispatch::on_dtype(out_dt, "out.dtype", [&](auto o) {
      return dispatch::on_head_dim(p.in.K, [&](auto k) {
        return dispatch::go(packed_decode_wide_kernel<decltype(s), decltype(o), decltype(k)::value>, kPackedThreads, p, l);
      });
    });
  });
}

}  // namespace kparity::kernels::kda
