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

bool small_decode_auto(const Plan& plan) {
  const AttnParams& p = plan.p;
  const std::int64_t ctas64 = p.T * ((p.H + 63) / 64);
  return small_decode_enabled() && small_decode_fits(plan) && p.D > 256 && ctas64 > 0 &&
         4 * ctas64 <= kernels::detail::sm_count();
}

namespace {

struct Choice {
  int hg = 16;
  std::int64_t splits = 1;
  double cost = 0.0;
};

// Cost of a head group in KB an SM moves, per wave (D = 512 units: a key row is 1 KB): its Q rows,
// its share of 64-key tiles (the gather, plus half the tile's shared-memory traffic: K and V once,
// the S partials and P, 128 + 80 * RB KB), and its partials (fp32, HG x D) when it splits.
Choice choice_for(int hg, std::int64_t T, std::int64_t H, std::int64_t tiles, const SparseTuning& tu) {
  const std::int64_t sms = std::max(1, kernels::detail::sm_count());
  const std::int64_t units = T * ((H + hg - 1) / hg);
  Choice c;
  c.hg = hg;
  if (tu.kv_splits > 0)
    c.splits = std::min<std::int64_t>(tu.kv_splits, kMaxSplits);
  else
    c.splits = std::max<std::int64_t>(1, std::min<std::int64_t>({sms / std::max<std::int64_t>(1, units), tiles, kMaxSplits}));
  const std::int64_t ctas = units * c.splits, waves = (ctas + sms - 1) / sms;
  const std::int64_t per_split = (tiles + c.splits - 1) / c.splits;
  const double rb = hg / 16.0;
  c.cost = static_cast<double>(waves) *
           (hg + static_cast<double>(per_split) * (64.0 + (128.0 + 80.0 * rb) / 2) + (c.splits > 1 ? 2.0 * hg : 0.0));
  return c;
}

}  // namespace

void make_small_plan(Plan& plan, std::int64_t n_indices, const SparseTuning& tu) {
  AttnParams& p = plan.p;
  const std::int64_t mean_keys = p.T > 0 ? (n_indices + p.T - 1) / p.T : 0;
  const std::int64_t tiles = std::max<std::int64_t>(1, (mean_keys + kKeysPerTileSmall - 1) / kKeysPerTileSmall);
  Choice best = choice_for(tu.head_tile == 32 ? 32 : 16, p.T, p.H, tiles, tu);
  if (tu.head_tile == 0) {
    const Choice c32 = choice_for(32, p.T, p.H, tiles, tu);
    if (c32.cost < best.cost) best = c32;
  }
  plan.wg = 2;
  plan.ht = best.hg;
  plan.dp = 512;
  plan.gather = tu.decode_gather == kGatherBulk ? kGatherBulk : kGatherCpAsync;
  p.n_head_tiles = (p.H + best.hg - 1) / best.hg;
  p.splits = best.splits;
  p.ws_vec2 = 1;  // D % 8 == 0 (vec_kv): 8-byte partial pairs
}

}  // namespace kparity::kernels::sparse::detail
