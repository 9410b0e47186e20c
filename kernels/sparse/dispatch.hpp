#pragma once
// Compile-time dispatch entry points, one translation unit per storage dtype (style habit 9).
// The launchers validate the (dp, ht) pair first; an unknown pair here is cudaErrorInvalidValue.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "sparse/params.hpp"

namespace kparity::kernels::sparse {

// dp: D rounded up to 64/128/256/512; ht: heads per CTA (16 needs dp >= 128, 64 any dp).
bool supported_tile(int dp, int ht);
std::size_t attn_smem_bytes(int dp, int ht, int elem_bytes);

// wg: 0 the mma.sync kernel; 1 the wgmma kernel of wg_addr_kernel.cuh (sm_90a; dp 512, ht 64,
// p.vec_q and p.vec_kv).
cudaError_t launch_attn_bf16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream);
cudaError_t launch_attn_f16(const AttnParams& p, int dp, int ht, int wg, cudaStream_t stream);
cudaError_t launch_combine_bf16(const AttnParams& p, cudaStream_t stream);
cudaError_t launch_combine_f16(const AttnParams& p, cudaStream_t stream);

}  // namespace kparity::kernels::sparse
