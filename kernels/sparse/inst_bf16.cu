// bf16 instantiations of the sparse attention kernels.
#include "sparse/launch_impl.cuh"

namespace kparity::kernels::sparse {

DispatchResult launch_attn_bf16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream, bool pdl) {
  return launch_attn_t<__nv_bfloat16>(p, dp, ht, wg, stream, pdl);
}
DispatchResult launch_combine_bf16(const AttnParams& p, cudaStream_t stream, bool wide) {
  return launch_combine_t<__nv_bfloat16>(p, stream, wide);
}

}  // namespace kparity::kernels::sparse
