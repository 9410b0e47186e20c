// Instances of the chunked KDA kernel for K = 64 (chunk_inst.cuh).
#ifdef KPARITY_CHUNK_KERNEL
#include "kda/chunk_inst.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_chunk_k64(const ChunkParams& p, const Launch& l) { return launch_chunk_k<64>(p, l); }
}  // namespace kparity::kernels::kda
#endif
