// Packed decode instantiations (state dtype x out dtype x K x small-batch instance); the wide form's
// are in packed_decode_wide_inst.cu.
#include "kda/dispatch_impl.cuh"
#include "kda/packed_decode_wide.hpp"

namespace kparity::kernels::kda {

DispatchResult launch_packed(const PackedParams& p, int state_dt, int out_dt, const Launch& l) {
  if (p.form == kPackedFormWide) return launch_packed_wide(p, state_dt, out_dt, l);  // packed_decode_wide_inst.cu
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
