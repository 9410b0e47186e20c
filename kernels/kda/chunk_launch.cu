// kda/chunk dispatch: the head dim picks the instance file (chunk_k*.cu), the V tile the warp split.
#ifdef KPARITY_CHUNK_KERNEL
#include <string>

#include "kda/chunk_plan.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

DispatchResult launch_chunk_k16(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k32(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k64(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k128(const ChunkParams& p, const Launch& l);
DispatchResult launch_chunk_k256(const ChunkParams& p, const Launch& l);

static_assert(kMinHeadDim == 16 && kMaxHeadDim == 256, "launch_chunk has a case for each power of two in between");
DispatchResult launch_chunk(const ChunkParams& p, const Launch& l) {
  switch (p.K) {
    case 16: return launch_chunk_k16(p, l);
    case 32: return launch_chunk_k32(p, l);
    case 64: return launch_chunk_k64(p, l);
    case 128: return launch_chunk_k128(p, l);
    case 256: return launch_chunk_k256(p, l);
    default: return dispatch_miss("K", std::to_string(p.K), std::string(kHeadDimsText));
  }
}

}  // namespace kparity::kernels::kda
#endif
