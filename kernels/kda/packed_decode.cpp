// kda/packed_decode launcher: contract -> derive -> params -> dispatch -> launch (habit 7).
#include <cstdlib>
#include <string>
#include <vector>

#include "kda/decode_common.hpp"
#include "kda/launch_geometry.hpp"
#include "kda/packed_decode_wide.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda {
namespace {
constexpr std::string_view kOp = kparity::kda::kPackedDecodeOp;
constexpr std::string_view kUnsupportedId = kparity::ids::kda_packed_decode_kernel_unsupported;

// KPARITY_PACKED_DECODE_FORM, read once per process (a per-call getenv is host cost on every decode):
// unset or "0" the verified forms; "wide" the wide form in place of the small-batch instance, so only
// on the small-batch path (LaunchOptions::decode_variant 2, or 0 with KPARITY_DECODE_VARIANT=2): PDL
// as that path has it, and the established launches (variant 1) stay what tests/gpu_kda
// DecodeVariants compares it with byte for byte. Anything else refuses every call, naming the
// variable (form -1, bad_name / bad_text). KPARITY_PACKED_DECODE_WIDE_VT (a power of two from 4 to
// 256, for tuning runs) replaces the wide form's V tile where the call takes the wide form and the
// tile fits it (at most V, at most kPackedWideMaxTileBytes).
struct FormRequest {
  int form = kPackedFormVerified;
  std::int64_t vtile = 0;  // 0: the launcher's rule
  std::string bad_name, bad_text;
};
const FormRequest& form_requested() {
  static const FormRequest r = [] {
    FormRequest f;
    const kernels::detail::EnvChoice form = kernels::detail::env_choice(
        "KPARITY_PACKED_DECODE_FORM", kPackedFormVerified, {{"", kPackedFormVerified}, {"0", kPackedFormVerified}, {"wide", kPackedFormWide}});
    f.form = form.value;
    if (f.form < 0) f.bad_name = "KPARITY_PACKED_DECODE_FORM", f.bad_text = form.text;
    if (const char* v = std::getenv("KPARITY_PACKED_DECODE_WIDE_VT"); v && *v && f.form >= 0) {
      char* end = nullptr;
      const long long n = std::strtoll(v, &end, 10);
      if (*end != '\0' || n < 4 || n > 256 || (n & (n - 1)) != 0) {
        f.form = -1; f.bad_name = "KPARITY_PACKED_DECODE_WIDE_VT"; f.bad_text = v;
      } else {
        f.vtile = n;
      }
    }
    return f;
  }();
  return r;
}

// The wide form's V tile for a call of rows = B * HV (row, head) pairs, or 0 where the call is not a
// small batch for it. The tile is the smallest (from one row group a warp up) whose grid is one wave
// of kPackedWideCtasPerSm CTAs an SM, so every SM takes part with 4 warps a scheduler and the whole
// state is in flight from the start; the form applies only where that tile is at most
// kPackedWideMaxTileBytes. That is the threshold: at HV = 32, K = V = 128, fp32 state on 132 SMs,
// B <= 8 (B = 8: 64-row tiles of 32 KB), where the verified forms reach at most 67% of the copy rate
// (decode_2026-12-05); B = 16 would need 64 KB tiles, and B = 64 / 256 (88% / 93% of copy there,
// bandwidth-bound) stay on the verified forms by a factor of 8 or more in state bytes.
std::int64_t wide_vtile(std::int64_t rows, std::int64_t K, std::int64_t V, std::int64_t elem_bytes,
                        std::int64_t forced) {
  const std::int64_t slots = std::int64_t(kPackedWideCtasPerSm) * kernels::detail::sm_count();
  const std::int64_t lo = 4 * packed_wide_rows_per_warp(elem_bytes, K);
  std::int64_t vt = lo < V ? lo : V;
  while (vt < V && rows * (V / vt) > slots) vt *= 2;
  // rows <= 65535: B and HV fit the grid's y and z (implied by one wave on any GPU made so far).
  if (rows * (V / vt) > slots || vt * K * elem_bytes > kPackedWideMaxTileBytes || rows > 65535) return 0;
  if (forced != 0 && forced <= V && forced * K * elem_bytes <= kPackedWideMaxTileBytes) return forced;
  return vt;
}
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
  // The form (packed_decode_wide.hpp): an unrecognised KPARITY_PACKED_DECODE_FORM refuses the call.
  const FormRequest& form = form_requested();
  if (form.form < 0)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, form.bad_name, form.bad_text,
                                            form.bad_name == "KPARITY_PACKED_DECODE_FORM"
                                                ? "unset or 0 (the verified forms), wide (docs/kda_decode_kernel_forms.md)"
                                                : "a power of two from 4 to 256 (docs/kda_decode_kernel_forms.md)");
  PackedParams& p = plan.params;
  p = PackedParams{};
  detail::fill_decode_inputs(v, *dims, p.in);
  p.norm_multiply = a.initial_state.dtype == DType::bf16;  // kda.md A.5 table, Helion bf16 state
  plan.state_dt = dt_code(a.initial_state.dtype);
  plan.out_dt = dt_code(a.out.dtype);
  const bool fast = kernels::detail::fast_decode(o);
  if (fast && form.form == kPackedFormWide) {
    // The wide form replaces the small-batch instance where the call is a small batch for it (above);
    // elsewhere the verified choice below runs as if the variable were unset.
    const std::int64_t es = a.initial_state.element_size();
    if (const std::int64_t vt = wide_vtile(p.in.B * p.in.HV, p.in.K, p.in.V, es, form.vtile); vt != 0) {
      p.in.vtile = vt;
      p.in.n_vtiles = p.in.V / vt;
      p.form = kPackedFormWide;
    }
  }
  if (fast && p.form == kPackedFormVerified) {
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
  // The wide form's grid is (V tiles, HV, B) (packed_decode_wide_kernel.cuh; wide_vtile keeps B and
  // HV within the 65535 of y and z).
  plan.launch.grid = p.form == kPackedFormWide ? dim3(static_cast<unsigned>(p.in.n_vtiles), static_cast<unsigned>(p.in.HV),
                                                      static_cast<unsigned>(p.in.B))
                                               : dim3(static_cast<unsigned>(p.in.B * p.in.HV * p.in.n_vtiles));
  plan.launch.smem_bytes = static_cast<std::size_t>(
      p.form == kPackedFormWide ? packed_wide_smem_bytes(p.in.K, p.in.vtile, a.initial_state.element_size())
                                : packed_smem_bytes(p.in.K, p.in.vtile));
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
