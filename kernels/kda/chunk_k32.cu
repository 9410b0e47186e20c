// Instances of the chunked KDA kernel for K = 32 (chunk_inst.cuh).
#ifdef KPARITY_CHUNK_KERNEL
#include "kda/chunk_inst.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_chunk_k32(const ChunkParams& p, const Launch& l) { return launch_chunk_k<32>(p, l); }
}  // namespace kparity::kernels::kda
#endif
