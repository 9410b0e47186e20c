// sparse/paged_decode launcher: as prefill with one source and no shift, plus split-K over the key
// list when T * ceil(H / head_tile) leaves SMs idle and the caller gave a workspace. Under
// LaunchOptions::decode_variant 2 both kernels go out with PDL, the partials as 8-byte pairs and the
// combine through the wide kernel (combine_kernel.cuh): the same bits as the established path.
// SparseTuning::variant 3 (and auto at small T * H when KPARITY_SPARSE_SMALL_DECODE enables it) takes
// the small-T kernel instead (decode_small_kernel.cuh; head group and splits in decode_small_plan.cpp),
// always with PDL and the wide combine.
#include <algorithm>
#include <climits>
#include <vector>

#include "common/align.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "kparity/kernels/sparse.hpp"
#include "sparse/decode_small_plan.hpp"
#include "sparse/dispatch.hpp"
#include "sparse/prepare.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::sparse {
namespace {
constexpr std::string_view kOp = kparity::sparse::kPagedDecodeOp;
constexpr std::string_view kUnsupportedId = kparity::ids::sparse_decode_kernel_unsupported;

detail::OpViews views_of(const PagedDecodeArgs& a) {
  detail::OpViews v;
  v.q = &a.q;
  v.src[0] = &a.unified_kv;
  v.idx[0] = &a.kv_indices;
  v.ptr[0] = &a.kv_indptr;
  v.names[0] = "unified_kv", v.names[2] = "kv_indices", v.names[4] = "kv_indptr";
  v.sink = &a.attn_sink;
  v.out = &a.out;
  v.lse = a.return_lse && a.lse ? &*a.lse : nullptr;
  v.scale = a.softmax_scale;
  return v;
}

// Splits that bring the grid up to at most one wave (1 CTA/SM at D = 512): a second, partial wave
// costs more than the split saves (measured: T = 64, H = 128 got slower with 2 splits). Never more
// splits than a token has key tiles (a split takes whole tiles; the tokens' mean list length, from
// kv_indices' length, stands for the device-side kv_indptr): the surplus splits found no keys, yet
// each stored a full partial and the combine read it (T = 1, 2048 keys: 128 splits for 32 tiles).
std::int64_t choose_splits(const AttnParams& p, std::int64_t ht, std::int64_t tile_keys, std::int64_t n_indices,
                           const SparseTuning& tu) {
  if (tu.kv_splits > 0) return std::min<std::int64_t>(tu.kv_splits, kMaxSplits);
  const std::int64_t ctas = p.T * ((p.H + ht - 1) / ht);
  if (ctas == 0 || 2 * ctas > kernels::detail::sm_count()) return 1;
  const std::int64_t mean_keys = (n_indices + p.T - 1) / p.T;
  const std::int64_t tiles = std::max<std::int64_t>(1, (mean_keys + tile_keys - 1) / tile_keys);
  return std::min<std::int64_t>({kernels::detail::sm_count() / ctas, kMaxSplits, tiles});
}
std::int64_t choose_splits(const detail::Plan& plan, const PagedDecodeArgs& a, const SparseTuning& tu) {
  return choose_splits(plan.p, plan.ht, plan.wg ? kKeysPerTileWg : kKeysPerTileMma, a.kv_indices.numel(), tu);
}

// Workspace layout: acc [splits, T, H, D] fp32, then (from the next 16-byte boundary, so ws_ml keeps
// the workspace's alignment) ml [splits, T, H, 2] fp32.
std::size_t ml_offset(const AttnParams& p) {
  return round_up(static_cast<std::size_t>(p.splits * p.T * p.H * p.D) * sizeof(float), kVecBytes);
}
std::size_t bytes_for(const AttnParams& p) {
  return ml_offset(p) + static_cast<std::size_t>(p.splits * p.T * p.H * 2) * sizeof(float);
}


// The plan of a decode call: the small-T kernel (variant 3, or auto where small_decode_auto says so)
// or the 64-head kernels with their split count.
Status plan_decode(const PagedDecodeArgs& a, const SparseTuning& tu, detail::Plan& plan) {
  if (tu.variant < 0 || tu.variant > 3)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "variant", std::to_string(tu.variant),
                                            "0 (auto), 1 (mma.sync), 2 (wgmma), 3 (small-T decode kernel)");
  if (tu.decode_gather < 0 || tu.decode_gather > 2)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "decode_gather", std::to_string(tu.decode_gather),
                                            "0 (auto), 1 (cp.async), 2 (bulk row copies)");
  if (tu.decode_combine < 0 || tu.decode_combine > 2)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "decode_combine", std::to_string(tu.decode_combine),
                                            "0 (auto), 1 (combine kernel), 2 (in-cluster merge, variant 3)");
  if (tu.decode_combine == 2 && tu.kv_splits > kMaxClusterSplits)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "kv_splits",
                                            std::to_string(tu.kv_splits) + " (decode_combine 2)",
                                            "at most " + std::to_string(kMaxClusterSplits) + " with the in-cluster merge");
  const bool forced = tu.variant == 3;
  if (forced && tu.head_tile != 0 && !supported_small_group(tu.head_tile))
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "head_tile", std::to_string(tu.head_tile) + " (variant 3)",
                                            kSmallTilesText);
  SparseTuning base = tu;
  if (forced) base.head_tile = 0, base.variant = 1;  // make_plan's checks; the small plan replaces the tile
  if (Status s = detail::make_plan(kOp, kUnsupportedId, views_of(a), base, plan); !s.ok()) return s;
  if (forced && !detail::small_decode_fits(plan))
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "variant", "3",
                                            "3 only with D <= 512 and 16-byte KV rows (D % 8 == 0, contiguous, aligned)");
  if (forced || (tu.variant == 0 && tu.head_tile == 0 && detail::small_decode_auto(plan))) {
    detail::make_small_plan(plan, a.kv_indices.numel(), tu);
    return Status::success();
  }
  if (tu.decode_combine == 2)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "decode_combine", "2",
                                            "2 only where the small-T kernel runs (variant 3, or auto at small T * H)");
  plan.p.splits = choose_splits(plan, a, tu);
  return Status::success();
}
}  // namespace

std::size_t paged_decode_workspace_bytes(const PagedDecodeArgs& a, const SparseTuning& tu) {
  detail::Plan plan;
  if (!plan_decode(a, tu, plan).ok()) return 0;
  return plan.p.splits > 1 && !plan.p.cluster ? bytes_for(plan.p) : 0;
}

Status paged_decode(const PagedDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o, DecodeWorkspace ws,
                    const SparseTuning& tu) {
  // The shape pass; its warnings go back with the result.
  Status status = kparity::sparse::try_check_paged_decode(a, kernels::detail::shape_only(o.validate));
  if (!status.ok()) return status;
  if (a.return_lse && !a.lse)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "lse", "None", "an lse buffer when return_lse");
  const auto reads = [](PagedDecodeArgs& m) {
    return std::vector<TensorView*>{&m.q, &m.unified_kv, &m.kv_indices, &m.kv_indptr, &m.attn_sink};
  };
  if (o.validate.deep)
    if (Status s = kernels::detail::deep_pass(kOp, a, o.validate, stream, &kparity::sparse::validate_paged_decode, reads);
        !s.ok())
      return s;
  detail::Plan plan;
  if (Status s = plan_decode(a, tu, plan); !s.ok()) return s;
  const bool fast = kernels::detail::fast_decode(o) || plan.wg == 2;
  if (plan.p.splits > 1 && !plan.p.cluster) {  // the in-cluster merge needs no workspace
    const std::size_t need = bytes_for(plan.p);
    if (ws.data == nullptr || ws.bytes < need || !aligned16(ws.data)) {
      plan.p.splits = 1;  // documented fallback: single pass, no hidden allocation
    } else {
      plan.p.ws_acc = static_cast<float*>(ws.data);
      plan.p.ws_ml = reinterpret_cast<float*>(static_cast<char*>(ws.data) + ml_offset(plan.p));
      plan.p.ws_vec2 = fast && plan.p.D % 2 == 0;  // the small kernel's plan: D % 8 == 0, so 1
    }
  }
  if (plan.p.T * plan.p.n_head_tiles * plan.p.splits > INT_MAX)  // gridDim.x is at most 2^31 - 1
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "kv_splits", std::to_string(plan.p.splits),
                                            "T * ceil(H / head_tile) * splits < 2^31");
  Status done = detail::launch(kOp, kUnsupportedId, plan, a.q.dtype == DType::bf16, stream, o, fast);
  return done.ok() ? status : done;
}

}  // namespace kparity::kernels::sparse
