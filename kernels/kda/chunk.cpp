// kda/chunk launcher (fla chunk_kda): contract -> derive -> params -> dispatch -> launch. The kernel
// itself is compiled only with KPARITY_CHUNK_KERNEL (kernels/CMakeLists.txt); without it the
// launcher runs every check and then refuses with kda-chunk-kernel-not-built.
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/align.hpp"
#include "kda/chunk_plan.hpp"
#include "kda/support.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda {
namespace {
constexpr std::string_view kOp = kparity::kda::kChunkOp;
constexpr std::string_view kUnsupportedId = kparity::ids::kda_chunk_kernel_unsupported;
using kernels::detail::env_choice;
using kernels::detail::EnvChoice;
using kernels::detail::not_implemented;

// [a, b, c, d] strides of a 4-D view.
void put4(const TensorView& t, const void*& ptr, int& dt, std::int64_t& s0, std::int64_t& s1, std::int64_t& s2,
          std::int64_t& s3) {
  ptr = t.data; dt = dt_code(t.dtype);
  s0 = t.strides[0]; s1 = t.strides[1]; s2 = t.strides[2]; s3 = t.strides[3];
}

// A [B, T, heads, n] input whose every row the prep kernel may load 16 bytes a lane: unit channel
// stride, a 16-byte aligned start, and row strides (of the dims that have more than one row) whole
// 16-byte steps.
int rows_vec(const TensorView& t, int bit) {
  const std::int64_t epv = 16 / static_cast<std::int64_t>(dtype_size(t.dtype));
  if (t.ndim() != 4 || t.strides[3] != 1 || t.sizes[3] % epv != 0 || !aligned16(t.data)) return 0;
  for (int d = 0; d < 3; ++d)
    if (t.sizes[d] > 1 && t.strides[d] % epv != 0) return 0;
  return bit;
}

Status not_built() {
  Diagnostic d = make_diagnostic(kparity::ids::kda_chunk_kernel_not_built, std::string(kOp) + "::build",
                                 {{"value", "KPARITY_CHUNK_KERNEL=OFF"},
                                  {"supported", "rebuild with -DKPARITY_CHUNK_KERNEL=ON, or use the reference or "
                                                "kda/recurrent's kernel"}});
  d.argument = "build";
  return Status{{std::move(d)}};
}
}  // namespace

#ifndef KPARITY_CHUNK_KERNEL
// Never reached: prepare_chunk refuses every call of such a build first.
DispatchResult launch_chunk(const ChunkParams&, const Launch&) {
  return dispatch_miss("build", "KPARITY_CHUNK_KERNEL=OFF", "KPARITY_CHUNK_KERNEL=ON");
}
#endif

bool chunk_kernel_built() noexcept {
#ifdef KPARITY_CHUNK_KERNEL
  return true;
#else
  return false;
#endif
}

// V columns per CTA: the widest tile (64: one 16-column group per warp; 32 or 16: the warps split K
// instead, chunk_kernel.cuh) that still gives the GPU about one CTA per SM (7/8 of the SMs or more):
// each (sequence, head) walks its chunks in order, so only more CTAs per head fill 132 SMs when
// N * HV is small, while a narrower tile re-reads the chunk's shared operands once more per tile and
// adds a split-K reduction. Measured on the H200 (2026-12-05, bench/results/kda_prefill_2026-12-05.md,
// KPARITY_CHUNK_VTILE sweep, K = V = 128): N * HV = 32 runs fastest at 32 (1.78 ms against 1.95 at 64
// and 1.98 at 16, 1x8192), N * HV = 64 at 64 (2.95 against 3.00 at 32 and 3.95 at 16), N * HV >= 256
// at 64 (the old rule's "two CTAs per SM" chose 16 at N * HV = 32 and 64: 1.1-1.34x slower).
std::int64_t chunk_vtile(std::int64_t seqs_x_heads, std::int64_t K, std::int64_t V, int sms) {
  // K = 256 splits K at least two ways: a warp's slice of the state stays at <= 64 registers.
  std::int64_t vt = K > 128 ? 32 : 64;
  // No warp group past V (V = 16, 32) where K allows the split.
  while (vt > 16 && vt > V && K / (64 / (vt / 2)) >= 8) vt /= 2;
  // K / (64 / vt) channels per warp must hold a whole 8-channel k-step.
  while (vt > 16 && 8 * seqs_x_heads * ((V + vt - 1) / vt) < 7 * static_cast<std::int64_t>(sms) &&
         K / (64 / (vt / 2)) >= 8)
    vt /= 2;
  return vt;
}

Status prepare_chunk(const ChunkArgs& a, cudaStream_t stream, const LaunchOptions& o, ChunkPlan& plan) {
  const auto reads = [](ChunkArgs& m) {
    std::vector<TensorView*> r = {&m.q, &m.k, &m.v, &m.g, &m.beta};
    for (auto* t : {&m.A_log, &m.dt_bias, &m.initial_state, &m.cu_seqlens})
      if (*t) r.push_back(&**t);
    return r;
  };
  Status status = kernels::detail::contract_passes(kOp, a, o.validate, stream, &kparity::kda::try_check_chunk,
                                                   &kparity::kda::validate_chunk, reads);
  if (!status.ok()) return status;
  kparity::kda::ChunkDims d;
  try {
    d = kparity::kda::chunk_dims(a);
  } catch (const std::invalid_argument&) {  // the contract passed, so a gap in it
    return not_implemented(kOp, kUnsupportedId, "shapes", "inconsistent", "kda.md A shapes");
  }
  ChunkParams& p = plan.params;
  p = ChunkParams{};
  p.B = d.B; p.T = d.T; p.N = d.N; p.H = d.H; p.HV = d.HV; p.K = d.K; p.V = d.V;
  if (p.H <= 0 || p.HV % p.H != 0) return not_implemented(kOp, kUnsupportedId, "HV", std::to_string(p.HV), "multiples of H");
  p.G = p.HV / p.H;
  if (!supported_head_dim(p.K)) return not_implemented(kOp, kUnsupportedId, "K", std::to_string(p.K), kHeadDimsText);
  if (!supported_head_dim(p.V)) return not_implemented(kOp, kUnsupportedId, "V", std::to_string(p.V), kHeadDimsText);
  std::vector<std::pair<const char*, const TensorView*>> floats = {
      {"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"g", &a.g}, {"beta", &a.beta}, {"out", &a.out}};
  if (a.use_gate_in_kernel && a.A_log) floats.push_back({"A_log", &*a.A_log});
  if (a.use_gate_in_kernel && a.dt_bias) floats.push_back({"dt_bias", &*a.dt_bias});
  if (a.initial_state) floats.push_back({"initial_state", &*a.initial_state});
  const bool writes_final = a.output_final_state && a.final_state;
  if (writes_final) floats.push_back({"final_state", &*a.final_state});
  for (const auto& [name, t] : floats)
    if (!float_dtype(t->dtype))
      return not_implemented(kOp, kUnsupportedId, std::string(name) + ".dtype", std::string(torch_repr(t->dtype)),
                             kFloatDtypesText);
  if (a.cu_seqlens && a.cu_seqlens->dtype != DType::i32 && a.cu_seqlens->dtype != DType::i64)
    return not_implemented(kOp, kUnsupportedId, "cu_seqlens.dtype", std::string(torch_repr(a.cu_seqlens->dtype)),
                           "torch.int32, torch.int64");
  // The chain's form (ChunkForm) and the prep instance (ChunkPrep), from the environment (an A/B aid:
  // one build times and tests both); an unrecognised value refuses the call, naming it.
  static const EnvChoice form = env_choice("KPARITY_CHUNK_FORM", kChunkFormVerified,
                                           {{"0", kChunkFormVerified}, {"spread", kChunkFormSpread}});
  if (form.value < 0)
    return not_implemented(kOp, kUnsupportedId, "KPARITY_CHUNK_FORM", form.text,
                           "unset or 0 (the verified chain), spread (the spread chain, docs/kda_chunk_kernel.md 5)");
  // The prep's default is auto (the specialised instance where the call fits): measured 2026-12-06 on an
  // H100 (bench/results/kda_prefill_2026-12-06b.md), the same workspace words as the generic instance on
  // every Chunk test and bench call under check, and 6-12% less time per call.
  static const EnvChoice prep = env_choice("KPARITY_CHUNK_PREP", kChunkPrepAuto,
                                           {{"generic", kChunkPrepGeneric}, {"auto", kChunkPrepAuto}, {"check", kChunkPrepCheck}});
  if (prep.value < 0)
    return not_implemented(kOp, kUnsupportedId, "KPARITY_CHUNK_PREP", prep.text,
                           "unset or auto, generic, check (the prep kernel's instance, docs/kda_chunk_kernel.md 5)");
  if (!chunk_kernel_built()) return not_built();

  put4(a.q, p.q, p.q_dt, p.q_sb, p.q_st, p.q_sh, p.q_sk);
  put4(a.k, p.k, p.k_dt, p.k_sb, p.k_st, p.k_sh, p.k_sk);
  put4(a.v, p.v, p.v_dt, p.v_sb, p.v_st, p.v_sh, p.v_sv);
  put4(a.g, p.g, p.g_dt, p.g_sb, p.g_st, p.g_sh, p.g_sk);
  const void* outp = nullptr;
  put4(a.out, outp, p.out_dt, p.out_sb, p.out_st, p.out_sh, p.out_sv);
  p.out = a.out.data;
  p.beta = a.beta.data; p.beta_dt = dt_code(a.beta.dtype);
  p.beta_sb = a.beta.strides[0]; p.beta_st = a.beta.strides[1]; p.beta_sh = a.beta.strides[2];
  p.beta_mode = !a.use_beta_sigmoid_in_kernel ? kBetaAsIs : a.allow_neg_eigval ? kBetaTwiceSigmoid : kBetaSigmoid;
  p.gate_in_kernel = a.use_gate_in_kernel;
  if (a.use_gate_in_kernel) {
    // The reference's stand-ins (reference/kda/chunk.cpp): no A_log means exp(A_log) = 1, no
    // dt_bias means nothing is added.
    p.has_A_log = a.A_log.has_value();
    if (a.A_log) { p.A_log = a.A_log->data; p.A_dt = dt_code(a.A_log->dtype); p.A_s0 = a.A_log->strides[0]; }
    p.has_dt_bias = a.dt_bias.has_value();
    if (a.dt_bias) {
      p.dt_bias = a.dt_bias->data; p.dtb_dt = dt_code(a.dt_bias->dtype);
      // [HV, K] or flat [HV * K].
      if (a.dt_bias->ndim() == 2) p.dtb_sh = a.dt_bias->strides[0], p.dtb_sk = a.dt_bias->strides[1];
      else p.dtb_sh = p.K * a.dt_bias->strides[0], p.dtb_sk = a.dt_bias->strides[0];
    }
    p.has_lower_bound = a.lower_bound.has_value();
    p.lower_bound = a.lower_bound ? static_cast<float>(*a.lower_bound) : 0.f;
  }
  p.l2norm = a.use_qk_l2norm_in_kernel;
  p.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(p.K)));
  // States: [n, hv, k, v] addressing; a V-first state ([N, HV, V, K]) swaps the last two strides.
  const auto state = [&](const TensorView& t, std::int64_t& sn, std::int64_t& sh, std::int64_t& sk, std::int64_t& sv) {
    sn = t.strides[0]; sh = t.strides[1];
    sk = d.state_v_first ? t.strides[3] : t.strides[2];
    sv = d.state_v_first ? t.strides[2] : t.strides[3];
  };
  if (a.initial_state) {
    p.has_init = 1; p.init = a.initial_state->data; p.init_dt = dt_code(a.initial_state->dtype);
    state(*a.initial_state, p.init_sn, p.init_sh, p.init_sk, p.init_sv);
  }
  if (writes_final) {
    p.has_final = 1; p.fin = a.final_state->data; p.fin_dt = dt_code(a.final_state->dtype);
    state(*a.final_state, p.fin_sn, p.fin_sh, p.fin_sk, p.fin_sv);
  }
  if (a.cu_seqlens) {
    p.has_cu = 1; p.cu_seqlens = a.cu_seqlens->data; p.cu_dt = dt_code(a.cu_seqlens->dtype);
    p.cu_s0 = a.cu_seqlens->strides[0];
  }
  p.vtile = chunk_vtile(p.N * p.HV, p.K, p.V, kernels::detail::sm_count());
  // The tuning override, where each warp keeps a whole 8-channel step (K / (64 / VT) >= 8) and
  // K = 256 keeps its split (chunk_vtile).
  if (const int vt = chunk_vtile_requested(); vt != 0 && p.K * vt / 64 >= 8 && (p.K <= 128 || vt <= 32))
    p.vtile = vt;
  p.n_vtiles = (p.V + p.vtile - 1) / p.vtile;
  p.simt = chunk_simt_requested();
  p.form = form.value;
  p.vec = rows_vec(a.q, kVecQ) | rows_vec(a.k, kVecK) | rows_vec(a.g, kVecG) | rows_vec(a.v, kVecV);
  p.prep_fast = prep.value != kChunkPrepGeneric && chunk_prep_fast_fits(p);
  p.prep_check = prep.value == kChunkPrepCheck && p.prep_fast;
  p.n_windows = (p.T + kChunkTokens - 1) / kChunkTokens;
  p.ws_blk = chunk_blk_floats(p.K, p.vtile, p.n_vtiles);
  p.n_blocks = p.has_cu ? p.n_windows + p.N : p.B * p.n_windows;
  const std::int64_t ctas = p.N * p.HV * p.n_vtiles;
  plan.launch.grid = dim3(static_cast<unsigned>(ctas > 0 ? ctas : 0));
  plan.launch.smem_bytes = static_cast<std::size_t>(chunk_smem_bytes(p.K, p.vtile));
  plan.launch.stream = stream;
  return status;
}

Status chunk(const ChunkArgs& a, cudaStream_t stream, const LaunchOptions& o) {
  ChunkPlan plan;
  Status status = prepare_chunk(a, stream, o, plan);
  // An empty launch (T = 0, N = 0, HV = 0) writes nothing: out is empty, and so is the state of
  // no sequence.
  const bool empty = plan.launch.grid.x == 0;
  return kernels::detail::dispatch_and_finish(
      kOp, kUnsupportedId, std::move(status), empty, [&] { return launch_chunk(plan.params, plan.launch); }, stream, o);
}

}  // namespace kparity::kernels::kda
