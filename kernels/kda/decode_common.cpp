#include "kda/decode_common.hpp"

#include <string>

#include "kda/support.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::kda::detail {

std::optional<kparity::kda::DecodeDims> derive_decode_dims(const DecodeViews& v) {
  if (v.mixed_qkv->ndim() != 2 || v.state->ndim() != 4) return std::nullopt;
  kparity::kda::DecodeDims d;
  d.B = v.mixed_qkv->sizes[0];
  d.HV = v.state->sizes[1];
  d.V = v.state->sizes[2];
  d.K = v.state->sizes[3];
  if (d.K <= 0) return std::nullopt;
  d.H = (v.mixed_qkv->sizes[1] - d.HV * d.V) / 2 / d.K;
  if (d.H <= 0 || d.HV % d.H != 0) return std::nullopt;
  return d;
}

Status check_decode_support(std::string_view op, std::string_view id, const DecodeViews& v,
                            const kparity::kda::DecodeDims& d) {
  using kernels::detail::not_implemented;
  if (!supported_head_dim(d.K)) return not_implemented(op, id, "K", std::to_string(d.K), kHeadDimsText);
  if (!supported_head_dim(d.V)) return not_implemented(op, id, "V", std::to_string(d.V), kHeadDimsText);
  const std::pair<const char*, const TensorView*> floats[] = {
      {"mixed_qkv", v.mixed_qkv}, {"a", v.a}, {"b", v.b}, {"A_log", v.A_log},
      {"dt_bias", v.dt_bias}, {"initial_state", v.state}, {"out", v.out}};
  for (const auto& [name, t] : floats)
    if (!float_dtype(t->dtype))
      return not_implemented(op, id, std::string(name) + ".dtype", std::string(torch_repr(t->dtype)), kFloatDtypesText);
  if (v.idx->dtype != DType::i32 && v.idx->dtype != DType::i64)
    return not_implemented(op, id, "ssm_state_indices.dtype", std::string(torch_repr(v.idx->dtype)),
                           "torch.int32, torch.int64");
  if (v.state->strides[3] != 1)
    return not_implemented(op, id, "initial_state.stride(3)", std::to_string(v.state->strides[3]), "1");
  return Status::success();
}

void fill_decode_inputs(const DecodeViews& v, const kparity::kda::DecodeDims& d, DecodeInputs& in) {
  const TensorView &q = *v.mixed_qkv, &a = *v.a, &b = *v.b, &A = *v.A_log, &dtb = *v.dt_bias;
  in.qkv = q.data; in.qkv_dt = dt_code(q.dtype); in.qkv_s0 = q.strides[0]; in.qkv_s1 = q.strides[1];
  in.a = a.data; in.a_dt = dt_code(a.dtype); in.a_s0 = a.strides[0];
  if (a.ndim() == 3) { in.a_sh = a.strides[1]; in.a_sk = a.strides[2]; }
  else { in.a_sh = d.K * a.strides[1]; in.a_sk = a.strides[1]; }
  in.b = b.data; in.b_dt = dt_code(b.dtype); in.b_s0 = b.strides[0]; in.b_s1 = b.strides[1];
  in.A_log = A.data; in.A_dt = dt_code(A.dtype); in.A_s0 = A.strides[0];
  in.dt_bias = dtb.data; in.dtb_dt = dt_code(dtb.dtype);
  if (dtb.ndim() == 2) { in.dtb_sh = dtb.strides[0]; in.dtb_sk = dtb.strides[1]; }
  else { in.dtb_sh = d.K * dtb.strides[0]; in.dtb_sk = dtb.strides[0]; }
  in.idx = v.idx->data; in.idx_dt = dt_code(v.idx->dtype); in.idx_s0 = v.idx->strides[0];
  in.state = v.state->data; in.st_s0 = v.state->strides[0]; in.st_s1 = v.state->strides[1]; in.st_s2 = v.state->strides[2];
  in.out = v.out->data; in.out_s0 = v.out->strides[0]; in.out_s2 = v.out->strides[2]; in.out_s3 = v.out->strides[3];
  in.B = d.B; in.H = d.H; in.HV = d.HV; in.G = d.HV / d.H; in.K = d.K; in.V = d.V;
  in.scale = static_cast<float>(v.scale);  // host scalars reach the kernel as fp32 (reference host_scalar)
  in.has_lower_bound = v.lower_bound.has_value();
  in.lower_bound = v.lower_bound ? static_cast<float>(*v.lower_bound) : 0.f;
  in.l2norm = v.l2norm;
  in.vtile = choose_vtile(d.B * d.HV, d.V);
  in.n_vtiles = d.V / in.vtile;
}

std::int64_t choose_vtile(std::int64_t rows_x_heads, std::int64_t V) {
  constexpr std::int64_t kCtasPerSm = 4;  // the target named in decode_common.hpp
  const std::int64_t want = kCtasPerSm * kernels::detail::sm_count();
  std::int64_t vt = V;
  while (vt > kMinHeadDim && rows_x_heads * (V / vt) < want) vt /= 2;
  return vt;
}

}  // namespace kparity::kernels::kda::detail
