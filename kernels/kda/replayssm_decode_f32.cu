// ReplaySSM decode instantiations for a f32 state (one TU per state dtype).
#include "kda/dispatch_impl.cuh"

namespace kparity::kernels::kda {
DispatchResult launch_replay_f32(const ReplayParams& p, int out_dt, int ring_dt, const Launch& l) {
  return dispatch::replay<float>(p, out_dt, ring_dt, l);
}
}  // namespace kparity::kernels::kda

#ifdef KPARITY_REPLAY_TRACE
#include <cstdio>
#include <vector>
// KPARITY_REPLAY_TRACE builds only: the per-CTA trace of the last fp32-state launch as CSV (clock64
// columns in SM cycles, globaltimer ones in ns).
extern "C" int kparity_replay_trace_dump(const char* path, int ctas) {
  std::vector<unsigned long long> h(std::size_t(kparity::kernels::kda::dev::kTraceCtas) * 5);
  if (cudaMemcpyFromSymbol(h.data(), kparity::kernels::kda::dev::g_replay_trace, h.size() * 8) != cudaSuccess) return 1;
  FILE* f = std::fopen(path, "w");
  if (!f) return 1;
  std::fprintf(f, "bid,g0,g1,c_pre,c_end,smid,flush\n");
  for (int i = 0; i < ctas && i < kparity::kernels::kda::dev::kTraceCtas; ++i) {
    const unsigned long long* t = &h[std::size_t(i) * 5];
    std::fprintf(f, "%d,%llu,%llu,%llu,%llu,%llu,%llu\n", i, t[0], t[1], t[2], t[3], t[4] & 255, t[4] >> 8);
  }
  std::fclose(f);
  return 0;
}
#endif
