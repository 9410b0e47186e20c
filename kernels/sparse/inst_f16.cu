// fp16 instantiations of the sparse attention kernels.
#include "sparse/launch_impl.cuh"

namespace kparity::kernels::sparse {

DispatchResult launch_attn_f16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream, bool pdl) {
  return launch_attn_t<__half>(p, dp, ht, wg, stream, pdl);
}
DispatchResult launch_combine_f16(const AttnParams& p, cudaStream_t stream, bool wide) {
  return launch_combine_t<__half>(p, stream, wide);
}

}  // namespace kparity::kernels::sparse
