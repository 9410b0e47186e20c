// kda/replayssm_decode launcher: contract -> derive -> params -> dispatch -> launch (habit 7).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/limits.hpp"
#include "kda/decode_common.hpp"
#include "kda/launch_geometry.hpp"
#include "kda/support.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda {
namespace {
constexpr std::string_view kOp = kparity::kda::kReplaySsmDecodeOp;
constexpr std::string_view kUnsupportedId = kparity::ids::kda_replayssm_decode_kernel_unsupported;

// V tile: the fewest rows (a power-of-two number of passes) for which the grid still fits in one
// wave of resident CTAs, else all of V. Small batches get more, thinner CTAs so the whole GPU streams
// the state; large ones get whole heads, so the per-(row, head) preamble is paid once and each CTA
// streams its passes with the next one in flight. KPARITY_REPLAY_VTILE=<rows> forces a tile (read
// once; for the benchmark's tile sweep).
std::int64_t replay_vtile(std::int64_t rows_x_heads, std::int64_t K, std::int64_t V) {
  static const std::int64_t forced = [] {
    const char* e = std::getenv("KPARITY_REPLAY_VTILE");
    return e ? std::atoll(e) : 0LL;
  }();
  const std::int64_t pass = replay_rows_per_pass(K);
  std::int64_t vt = std::min(V, pass);
  if (forced > 0) {
    while (vt < V && vt < forced) vt *= 2;
    return vt;
  }
  const std::int64_t slots = std::int64_t(kReplayCtasPerSm) * kernels::detail::sm_count();
  while (vt < V && rows_x_heads * (V / vt) > slots) vt *= 2;
  return vt;
}

// The deep pass reads the indices and cursors and scans the rows, slots and valid ring entries the
// kernel reads for non-finite values (kda.md C.2/C.3).
std::vector<TensorView*> deep_reads(ReplaySsmDecodeArgs& m) {
  std::vector<TensorView*> r = {&m.mixed_qkv, &m.a,       &m.b,       &m.A_log,   &m.dt_bias,
                                &m.initial_state, &m.d_cache, &m.k_cache, &m.g_cache, &m.ssm_state_indices,
                                &m.write_pos};
  if (m.force_flush) r.push_back(&*m.force_flush);
  return r;
}

// One translation unit per state dtype (dispatch.hpp); the state switch is the first of four.
DispatchResult launch_replay(const ReplayPlan& plan) {
  switch (plan.state_dt) {
    case kF32: return launch_replay_f32(plan.params, plan.out_dt, plan.ring_dt, plan.launch);
    case kBF16: return launch_replay_bf16(plan.params, plan.out_dt, plan.ring_dt, plan.launch);
    case kF16: return launch_replay_f16(plan.params, plan.out_dt, plan.ring_dt, plan.launch);
    default: return dtype_miss("initial_state.dtype", plan.state_dt, kFloatDtypesText);
  }
}
}  // namespace

Status prepare_replayssm_decode(const ReplaySsmDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o,
                                ReplayPlan& plan) {
  Status status =
      kernels::detail::contract_passes(kOp, a, o.validate, stream, &kparity::kda::try_check_replayssm_decode,
                                       &kparity::kda::validate_replayssm_decode, &deep_reads);
  if (!status.ok()) return status;
  // a and dt_bias as upstream reads them (C.1 #3: a.view(batch, -1), dt_bias.view(-1)).
  const ReplaySsmDecodeArgs flat = kparity::kda::replayssm_flattened(a);
  const detail::DecodeViews v{&a.mixed_qkv, &flat.a, &a.b, &a.A_log, &flat.dt_bias, &a.initial_state,
                              &a.out, &a.ssm_state_indices, a.scale, a.use_qk_l2norm_in_kernel, a.lower_bound};
  const auto dims = detail::derive_decode_dims(v);
  if (!dims || a.d_cache.ndim() != 4 || a.k_cache.ndim() != 4 || a.g_cache.ndim() != 4)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "shapes", "inconsistent", "kda.md B.0/B.2.2 shapes");
  if (Status s = detail::check_decode_support(kOp, kUnsupportedId, v, *dims); !s.ok()) return s;
  if (a.d_cache.dtype != a.k_cache.dtype || !float_dtype(a.d_cache.dtype))
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "d_cache.dtype/k_cache.dtype",
                                            std::string(torch_repr(a.d_cache.dtype)) + "/" +
                                                std::string(torch_repr(a.k_cache.dtype)),
                                            "one float dtype for both rings");
  if (a.g_cache.dtype != DType::f32)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "g_cache.dtype", std::string(torch_repr(a.g_cache.dtype)),
                                            "torch.float32");
  const auto i32 = [](const TensorView& t) { return t.dtype == DType::i32; };
  if (!i32(a.write_pos) || (a.force_flush && !i32(*a.force_flush)))
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "write_pos/force_flush.dtype", "not torch.int32",
                                            "torch.int32");

  ReplayParams& p = plan.params;
  p = ReplayParams{};
  detail::fill_decode_inputs(v, *dims, p.in);
  p.in.vtile = replay_vtile(p.in.B * p.in.HV, p.in.K, p.in.V);
  p.in.n_vtiles = p.in.V / p.in.vtile;
  const TensorView &d = a.d_cache, &k = a.k_cache, &g = a.g_cache;
  p.d_cache = d.data; p.d_s0 = d.strides[0]; p.d_s1 = d.strides[1]; p.d_s2 = d.strides[2]; p.d_s3 = d.strides[3];
  p.k_cache = k.data; p.k_s0 = k.strides[0]; p.k_s1 = k.strides[1]; p.k_s2 = k.strides[2]; p.k_s3 = k.strides[3];
  p.g_cache = static_cast<float*>(g.data); p.g_s0 = g.strides[0]; p.g_s1 = g.strides[1]; p.g_s2 = g.strides[2]; p.g_s3 = g.strides[3];
  p.write_pos = static_cast<const std::int32_t*>(a.write_pos.data); p.wp_s0 = a.write_pos.strides[0];
  if (a.force_flush) { p.has_force_flush = 1; p.force_flush = static_cast<const std::int32_t*>(a.force_flush->data); p.ff_s0 = a.force_flush->strides[0]; }
  p.L = d.sizes[2];
  p.beta_round_dt = a.beta_rounding == kparity::kda::BetaRounding::through_b_dtype && a.b.dtype != DType::f32
                        ? dt_code(a.b.dtype) : -1;

  const std::int64_t smem = replay_smem_bytes(p.L, p.in.K, p.in.vtile, static_cast<std::int64_t>(dtype_size(d.dtype)));
  if (smem > static_cast<std::int64_t>(kSmemOptinPerBlock))
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "L", std::to_string(p.L),
                                            "ring lengths whose K- and V-wide staging fits in " +
                                                std::to_string(kSmemOptinPerBlock / 1024) + " KiB of shared memory");
  plan.state_dt = dt_code(a.initial_state.dtype);
  plan.out_dt = dt_code(a.out.dtype);
  plan.ring_dt = dt_code(d.dtype);
  plan.launch.grid = dim3(static_cast<unsigned>(p.in.B * p.in.HV * p.in.n_vtiles));
  plan.launch.smem_bytes = static_cast<std::size_t>(smem);
  plan.launch.stream = stream;
  plan.launch.pdl = kernels::detail::fast_decode(o);
  return status;  // warnings of the contract, if any
}

Status replayssm_decode(const ReplaySsmDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o) {
  ReplayPlan plan;
  Status status = prepare_replayssm_decode(a, stream, o, plan);
  return kernels::detail::dispatch_and_finish(kOp, kUnsupportedId, std::move(status), plan.params.in.B == 0,
                                              [&] { return launch_replay(plan); }, stream, o);
}

}  // namespace kparity::kernels::kda
