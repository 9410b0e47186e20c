// bf16 instantiations of the sparse attention kernels.
#include "sparse/launch_impl.cuh"

namespace kparity::kernels::sparse {

cudaError_t launch_attn_bf16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream) {
  return launch_attn_t<__nv_bfloat16>(p, dp, ht, wg, stream);
}
cudaError_t launch_combine_bf16(const AttnParams& p, cudaStream_t stream) {
  return launch_combine_t<__nv_bfloat16>(p, stream);
}

bool supported_tile(int dp, int ht) {
  const bool dp_ok = dp == 64 || dp == 128 || dp == 256 || dp == 512;
  return dp_ok && (ht == 64 || (ht == 16 && dp >= 128));
}

std::size_t attn_smem_bytes(int dp, int ht, int elem) {
  const std::size_t ld = static_cast<std::size_t>(dp) + 8;
  const std::size_t x = std::size_t(kWarps) * 16 * 32 * 4;  // both tiles split D (DS > 1): exchange buffer
  return (static_cast<std::size_t>(ht) + kStages * kBK) * ld * elem + x + std::size_t(kStages + kSlots) * kBK * 4;
}

}  // namespace kparity::kernels::sparse
