// Instances of the chunked KDA kernel for K = 128 (chunk_inst.cuh).
#ifdef KPARITY_CHUNK_KERNEL
#include "kda/chunk_inst.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_chunk_k128(const ChunkParams& p, const Launch& l) { return launch_chunk_k<128>(p, l); }
}  // namespace kparity::kernels::kda
#endif
