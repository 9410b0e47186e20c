// kda/packed_decode launcher: contract -> derive -> params -> dispatch -> launch (habit 7).
#include <vector>

#include "kda/decode_common.hpp"
#include "kda/launch_geometry.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda {
namespace {
constexpr std::string_view kOp = kparity::kda::kPackedDecodeOp;
constexpr std::string_view kUnsupportedId = kparity::ids::kda_packed_decode_kernel_unsupported;
}  // namespace

Status prepare_packed_decode(const PackedDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o,
                             PackedPlan& plan) {
  // The deep pass reads the slot indices and scans the rows and slots the kernel reads for
  // non-finite values (kda.md C.2 O6).
  const auto reads = [](PackedDecodeArgs& m) {
    return std::vector<TensorView*>{&m.mixed_qkv, &m.a, &m.b, &m.A_log, &m.dt_bias, &m.initial_state, &m.ssm_state_indices};
  };
  Status status = kernels::detail::contract_passes(kOp, a, o.validate, stream, &kparity::kda::try_check_packed_decode,
                                                   &kparity::kda::validate_packed_decode, reads);
  if (!status.ok()) return status;
  const detail::DecodeViews v{&a.mixed_qkv, &a.a, &a.b, &a.A_log, &a.dt_bias, &a.initial_state,
                              &a.out, &a.ssm_state_indices, a.scale, a.use_qk_l2norm_in_kernel, a.lower_bound};
  const auto dims = detail::derive_decode_dims(v);
  if (!dims) return kernels::detail::not_implemented(kOp, kUnsupportedId, "shapes", "inconsistent", "kda.md B.0 shapes");
  if (Status s = detail::check_decode_support(kOp, kUnsupportedId, v, *dims); !s.ok()) return s;
  PackedParams& p = plan.params;
  p = PackedParams{};
  detail::fill_decode_inputs(v, *dims, p.in);
  p.norm_multiply = a.initial_state.dtype == DType::bf16;  // kda.md A.5 table, Helion bf16 state
  plan.state_dt = dt_code(a.initial_state.dtype);
  plan.out_dt = dt_code(a.out.dtype);
  const bool fast = kernels::detail::fast_decode(o);
  if (fast) {
    // The small-batch instance where its grid fits one wave: the fewest V tiles (from choose_vtile's
    // up) that keep B * HV * tiles within kPackedEarlyCtasPerSm CTAs per SM; larger batches keep the
    // established instance, whose residency serves them (launch_geometry.hpp).
    const std::int64_t rows = p.in.B * p.in.HV, slots = std::int64_t(kPackedEarlyCtasPerSm) * kernels::detail::sm_count();
    std::int64_t vt = p.in.vtile;
    while (vt < p.in.V && rows * (p.in.V / vt) > slots) vt *= 2;
    if (rows * (p.in.V / vt) <= slots) {
      p.in.vtile = vt;
      p.in.n_vtiles = p.in.V / vt;
      p.early_state = 1;
    }
  }
  plan.launch.grid = dim3(static_cast<unsigned>(p.in.B * p.in.HV * p.in.n_vtiles));
  plan.launch.smem_bytes = static_cast<std::size_t>(packed_smem_bytes(p.in.K, p.in.vtile));
  plan.launch.stream = stream;
  plan.launch.pdl = fast;
  return status;
}

Status packed_decode(const PackedDecodeArgs& a, cudaStream_t stream, const LaunchOptions& o) {
  PackedPlan plan;
  Status status = prepare_packed_decode(a, stream, o, plan);
  return kernels::detail::dispatch_and_finish(
      kOp, kUnsupportedId, std::move(status), plan.params.in.B == 0,
      [&] { return launch_packed(plan.params, plan.state_dt, plan.out_dt, plan.launch); }, stream, o);
}

}  // namespace kparity::kernels::kda
