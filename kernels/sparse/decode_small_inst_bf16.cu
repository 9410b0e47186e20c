// bf16 instantiations of the small-T decode kernel (its own translation unit: the 64-head kernels'
// units keep their compile time).
#include "sparse/decode_small_launch.cuh"

namespace kparity::kernels::sparse {

DispatchResult launch_small_bf16(const AttnParams& p, int hg, int gather, cudaStream_t stream, bool pdl) {
  return launch_small_t<__nv_bfloat16>(p, hg, gather, stream, pdl);
}

}  // namespace kparity::kernels::sparse
