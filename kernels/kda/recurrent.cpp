// kda/recurrent launcher (varlen prefill): contract -> derive -> params -> dispatch -> launch.
#include <cmath>
#include <string>
#include <vector>

#include "kda/launch_geometry.hpp"
#include "kda/prepare.hpp"
#include "kda/support.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda {
namespace {
constexpr std::string_view kOp = kparity::kda::kRecurrentOp;
constexpr std::string_view kUnsupportedId = kparity::ids::kda_recurrent_kernel_unsupported;
using kernels::detail::not_implemented;
}  // namespace

Status prepare_recurrent(const RecurrentArgs& a, cudaStream_t stream, const LaunchOptions& o, RecurrentPlan& plan) {
  // The deep pass reads cu_seqlens and scans every input for non-finite values (kda.md C.3).
  const auto reads = [](RecurrentArgs& m) {
    std::vector<TensorView*> r = {&m.q, &m.k, &m.v, &m.beta};
    for (auto* t : {&m.g, &m.a, &m.dt_bias, &m.A_log, &m.initial_state, &m.cu_seqlens})
      if (*t) r.push_back(&**t);
    return r;
  };
  Status status = kernels::detail::contract_passes(kOp, a, o.validate, stream, &kparity::kda::try_check_recurrent,
                                                   &kparity::kda::validate_recurrent, reads);
  if (!status.ok()) return status;
  if (a.q.ndim() != 3 || a.v.ndim() != 3 || a.out.ndim() != 3)
    return not_implemented(kOp, kUnsupportedId, "shapes", "inconsistent", "kda.md A shapes");
  RecurrentParams& p = plan.params;
  p = RecurrentParams{};
  p.T = a.q.sizes[0]; p.H = a.q.sizes[1]; p.K = a.q.sizes[2]; p.HV = a.v.sizes[1]; p.V = a.v.sizes[2];
  if (p.H <= 0 || p.HV % p.H != 0) return not_implemented(kOp, kUnsupportedId, "HV", std::to_string(p.HV), "multiples of H");
  p.G = p.HV / p.H;
  if (!supported_head_dim(p.K)) return not_implemented(kOp, kUnsupportedId, "K", std::to_string(p.K), kHeadDimsText);
  if (!supported_head_dim(p.V)) return not_implemented(kOp, kUnsupportedId, "V", std::to_string(p.V), kHeadDimsText);
  const auto fl = [&](const char* name, const TensorView& t) -> Status {
    if (float_dtype(t.dtype)) return Status::success();
    return not_implemented(kOp, kUnsupportedId, std::string(name) + ".dtype", std::string(torch_repr(t.dtype)),
                           kFloatDtypesText);
  };
  for (const auto& [name, t] : {std::pair<const char*, const TensorView*>{"q", &a.q}, {"k", &a.k}, {"v", &a.v},
                                {"beta", &a.beta}, {"out", &a.out}})
    if (Status s = fl(name, *t); !s.ok()) return s;
  const auto put3 = [](const TensorView& t, const void*& ptr, int& dt, std::int64_t& s0, std::int64_t& s1, std::int64_t& s2) {
    ptr = t.data; dt = dt_code(t.dtype); s0 = t.strides[0]; s1 = t.strides[1]; s2 = t.strides[2];
  };
  put3(a.q, p.q, p.q_dt, p.q_s0, p.q_s1, p.q_s2);
  put3(a.k, p.k, p.k_dt, p.k_s0, p.k_s1, p.k_s2);
  put3(a.v, p.v, p.v_dt, p.v_s0, p.v_s1, p.v_s2);
  // Presence travels as has_* flags (params.hpp): an empty tensor's data pointer may be null.
  p.has_g = a.g.has_value();
  if (a.g) {
    if (Status s = fl("g", *a.g); !s.ok()) return s;
    put3(*a.g, p.g, p.g_dt, p.g_s0, p.g_s1, p.g_s2);
  } else {
    if (!a.a || !a.dt_bias || !a.A_log) return not_implemented(kOp, kUnsupportedId, "g", "None", "g or a + dt_bias + A_log");
    for (const auto& [name, t] : {std::pair<const char*, const TensorView*>{"a", &*a.a}, {"dt_bias", &*a.dt_bias},
                                  {"A_log", &*a.A_log}})
      if (Status s = fl(name, *t); !s.ok()) return s;
    put3(*a.a, p.a, p.a_dt, p.a_s0, p.a_s1, p.a_s2);
    p.dt_bias = a.dt_bias->data; p.dtb_dt = dt_code(a.dt_bias->dtype);
    // dt_bias may be (HV, K) or flat (HV * K,) (C.1); a flat one has a single stride.
    if (a.dt_bias->ndim() == 2) p.dtb_s0 = a.dt_bias->strides[0], p.dtb_s1 = a.dt_bias->strides[1];
    else p.dtb_s0 = p.K * a.dt_bias->strides[0], p.dtb_s1 = a.dt_bias->strides[0];
    p.A_log = a.A_log->data; p.A_dt = dt_code(a.A_log->dtype); p.A_s0 = a.A_log->strides[0];
    p.has_lower_bound = a.lower_bound.has_value();
    p.lower_bound = a.lower_bound ? static_cast<float>(*a.lower_bound) : 0.f;
  }
  p.beta = a.beta.data; p.beta_dt = dt_code(a.beta.dtype); p.beta_s0 = a.beta.strides[0]; p.beta_s1 = a.beta.strides[1];
  p.beta_is_logits = a.beta_is_logits;
  p.l2norm = a.use_qk_l2norm_in_kernel;
  p.scale = static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(p.K)));
  if (a.initial_state) {
    if (Status s = fl("initial_state", *a.initial_state); !s.ok()) return s;
    const TensorView& t = *a.initial_state;
    p.has_init = 1;
    p.init = t.data; p.init_dt = dt_code(t.dtype);
    p.init_s0 = t.strides[0]; p.init_s1 = t.strides[1]; p.init_s2 = t.strides[2]; p.init_s3 = t.strides[3];
  }
  if (a.final_state) {
    if (Status s = fl("final_state", *a.final_state); !s.ok()) return s;
    const TensorView& t = *a.final_state;
    p.has_final = 1;
    p.final_state = t.data; p.fin_dt = dt_code(t.dtype);
    p.fin_s0 = t.strides[0]; p.fin_s1 = t.strides[1]; p.fin_s2 = t.strides[2]; p.fin_s3 = t.strides[3];
  }
  p.out = a.out.data; p.out_s0 = a.out.strides[0]; p.out_s1 = a.out.strides[1]; p.out_s2 = a.out.strides[2];
  if (a.cu_seqlens) {
    p.has_cu = 1;
    p.cu_seqlens = a.cu_seqlens->data; p.cu_dt = dt_code(a.cu_seqlens->dtype); p.cu_s0 = a.cu_seqlens->strides[0];
    p.N = a.cu_seqlens->sizes[0] - 1;
  } else {
    p.N = 1;
  }
  p.vtile = recurrent_vtile(p.K, p.V);
  p.n_vtiles = p.V / p.vtile;
  plan.out_dt = dt_code(a.out.dtype);
  plan.launch.grid = dim3(static_cast<unsigned>(p.N > 0 ? p.N * p.HV * p.n_vtiles : 0));
  plan.launch.smem_bytes = static_cast<std::size_t>(recurrent_smem_bytes(p.K, p.vtile));
  plan.launch.stream = stream;
  return status;
}

Status recurrent(const RecurrentArgs& a, cudaStream_t stream, const LaunchOptions& o) {
  RecurrentPlan plan;
  Status status = prepare_recurrent(a, stream, o, plan);
  return kernels::detail::dispatch_and_finish(
      kOp, kUnsupportedId, std::move(status), plan.launch.grid.x == 0,
      [&] { return launch_recurrent(plan.params, plan.out_dt, plan.launch); }, stream, o);
}

}  // namespace kparity::kernels::kda
