#include "sparse/decode_small_plan.hpp"

#include <algorithm>
#include <cstdlib>

#include "sparse/dispatch.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::sparse::detail {

bool small_decode_enabled() {
  static const int v = [] {
    const char* e = std::getenv("KPARITY_SPARSE_SMALL_DECODE");
    if (e && (e[0] == '0' || e[0] == '1') && e[1] == '\0') return e[0] - '0';
#ifdef KPARITY_SPARSE_SMALL_DECODE_DEFAULT
    return 1;
#else
    return 0;
#endif
  }();
  return v == 1;
}

bool small_decode_fits(const Plan& plan) { return plan.p.D <= 512 && plan.p.vec_kv && !plan.p.has_extend; }

// Measured on the H200 (2026-12-05, bench/results/decode_2026-12-05.md, graph replay, 2048 keys,
// D = 512): the small kernel with 16-head groups beats the v2 wgmma path while T * H <= 256 (H = 64:
// T = 1 12.2 against 12.7 us, T = 4 18.0 against 18.7; H = 128: T = 1 13.3 against 13.4, T = 2 18.0
// against 18.7) and loses past it (H = 128, T = 4: 26.0 against 20.3; H = 64, T = 8: 25.8 against
// 20.2), whatever its head group. The byte-count cost model it replaces took it up to T * ceil(H / 64)
// <= SMs / 4 (T = 33 at H = 64).
inline constexpr std::int64_t kSmallDecodeMaxTH = 256;

bool small_decode_auto(const Plan& plan) {
  const AttnParams& p = plan.p;
  return small_decode_enabled() && small_decode_fits(plan) && p.D > 256 && p.T > 0 && p.H > 0 &&
         p.T * p.H <= kSmallDecodeMaxTH;
}

namespace {

// The split count of a head group: tuning.kv_splits, else enough splits for about one CTA per SM,
// never more than the mean list has 64-key tiles.
std::int64_t splits_for(int hg, std::int64_t T, std::int64_t H, std::int64_t tiles, const SparseTuning& tu) {
  if (tu.kv_splits > 0) return std::min<std::int64_t>(tu.kv_splits, kMaxSplits);
  const std::int64_t sms = std::max(1, kernels::detail::sm_count());
  const std::int64_t units = T * ((H + hg - 1) / hg);
  return std::max<std::int64_t>(1, std::min<std::int64_t>({sms / std::max<std::int64_t>(1, units), tiles, kMaxSplits}));
}

}  // namespace

void make_small_plan(Plan& plan, std::int64_t n_indices, const SparseTuning& tu) {
  AttnParams& p = plan.p;
  const std::int64_t mean_keys = p.T > 0 ? (n_indices + p.T - 1) / p.T : 0;
  const std::int64_t tiles = std::max<std::int64_t>(1, (mean_keys + kKeysPerTileSmall - 1) / kKeysPerTileSmall);
  // The head group: tuning.head_tile, else 16 up to T * H = 256 and 32 past it (measured, as
  // small_decode_auto: at H = 128, T = 1 the 32-head group the cost model chose took 18.5 us against
  // 13.3 with 16; at T * H = 512 32 heads win, 26.0 against 27.6 us at H = 128, T = 4).
  const int hg = tu.head_tile == 32 || (tu.head_tile == 0 && p.T * p.H > kSmallDecodeMaxTH) ? 32 : 16;
  // The in-cluster merge (decode_combine 2) takes at most a cluster's 16 splits (paged_decode.cpp
  // refuses a larger kv_splits with it).
  const bool cluster = tu.decode_combine == 2;
  std::int64_t splits = splits_for(hg, p.T, p.H, tiles, tu);
  if (cluster) splits = std::min<std::int64_t>(splits, kMaxClusterSplits);
  plan.wg = 2;
  plan.ht = hg;
  plan.dp = 512;
  plan.gather = tu.decode_gather == kGatherBulk ? kGatherBulk : kGatherCpAsync;
  p.n_head_tiles = (p.H + hg - 1) / hg;
  p.splits = splits;
  p.cluster = cluster && splits > 1 ? static_cast<int>(splits) : 0;
  p.ws_vec2 = 1;  // D % 8 == 0 (vec_kv): 8-byte partial pairs
}

}  // namespace kparity::kernels::sparse::detail
