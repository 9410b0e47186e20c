// Instances of the chunked KDA kernel for K = 16 (chunk_inst.cuh).
#ifdef KPARITY_CHUNK_KERNEL
#include "kda/chunk_inst.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_chunk_k16(const ChunkParams& p, const Launch& l) { return launch_chunk_k<16>(p, l); }
}  // namespace kparity::kernels::kda
#endif
