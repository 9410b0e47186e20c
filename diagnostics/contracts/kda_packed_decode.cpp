// kda/packed_decode contract. Upstream: sgl-project/sglang
// python/sglang/kernels/ops/attention/helion/kda_decode.py (validate_packed_decode_inputs), spec kda.md C.2.
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"

#include <cmath>
#include <map>
#include <stdexcept>

#include "kda_checks_util.hpp"

namespace kparity::kda {
namespace detail {

namespace {

// The walk proper; returns true when the contract must stop. It fills `f` in place (no copy of the
// facts on each early return). Dims are read through sizes[]/strides[] once the rank is known (every
// read below is guarded by a rank test), so no out-of-line bounds-checked size()/stride() call.
bool walk(const DecodeInputs& in, Checker& c, DecodeFacts& f) {
  const TensorView& mq = in.mixed_qkv;
  const TensorView& b = in.b;
  const TensorView& st = in.initial_state;
  const TensorView& idx = in.ssm_state_indices;

  // P1
  if (mq.ndim() != 2 && c.fail(ids::kda_mixed_qkv_ndim, arg_loc("mixed_qkv", ".ndim"), {{"ndim", str(mq.ndim())}}))
    return true;
  // P2: a 0-D tensor has no last dim; P1 already reported it.
  if (mq.ndim() >= 1 && last_stride(mq) != 1 &&
      c.fail(ids::kda_mixed_qkv_last_dim_stride, arg_loc("mixed_qkv", ".stride[-1]"), {},
             {"got stride(-1)=" + str(mq.stride(-1))}))
    return true;
  // P3: ReplaySSM's flattened `a` is 2-D by construction; a missing one (nullptr) is not re-reported.
  const bool a_bad = in.a && in.a->ndim() != 2;
  if ((a_bad || b.ndim() != 2) &&
      c.fail(ids::kda_a_b_ndim, arg_loc(a_bad ? "a" : "b", ".ndim"),
             {{"a_ndim", str(in.a ? in.a->ndim() : 2)}, {"b_ndim", str(b.ndim())}}))
    return true;
  const bool a2 = in.a && in.a->ndim() == 2, b2 = b.ndim() == 2;
  // P4
  {
    const bool as = in.a && in.a->ndim() >= 1 && last_stride(*in.a) != 1;
    const bool bs = b.ndim() >= 1 && last_stride(b) != 1;
    if ((as || bs) && c.fail(ids::kda_a_b_last_dim_stride, arg_loc(as ? "a" : "b", ".stride[-1]"), {},
                             {std::string(as ? "a" : "b") + ".stride(-1)=" + str(as ? in.a->stride(-1) : b.stride(-1))}))
      return true;
  }
  // P5
  {
    const bool al = in.A_log.ndim() != 1, dt = in.dt_bias && in.dt_bias->ndim() != 1;
    if ((al || dt) && c.fail(ids::kda_a_log_dt_bias_ndim, arg_loc(al ? "A_log" : "dt_bias", ".ndim"), {},
                             {std::string(al ? "A_log" : "dt_bias") + ".ndim=" + str(al ? in.A_log.ndim() : in.dt_bias->ndim())}))
      return true;
  }
  // P6: stride(0) needs at least one dim.
  {
    const bool al = in.A_log.ndim() >= 1 && in.A_log.strides[0] != 1;
    const bool dt = in.dt_bias && in.dt_bias->ndim() >= 1 && in.dt_bias->strides[0] != 1;
    if ((al || dt) && c.fail(ids::kda_a_log_dt_bias_stride, arg_loc(al ? "A_log" : "dt_bias", ".stride[0]"), {},
                             {std::string(al ? "A_log" : "dt_bias") + ".stride(0)=" + str(al ? in.A_log.stride(0) : in.dt_bias->stride(0))}))
      return true;
  }
  // P7
  if (idx.ndim() != 1 && c.fail(ids::kda_ssm_state_indices_ndim, arg_loc("ssm_state_indices", ".ndim"),
                                {{"ndim", str(idx.ndim())}}))
    return true;
  // P8
  if (!in.out.is_contiguous() &&
      c.fail(ids::kda_out_contiguous, arg_loc("out"), {}, {"got strides " + py_tuple(in.out.stride_vec())}))
    return true;
  // P9 (the loop names the first mismatch; the conjunction is its allocation-free fast path)
  const auto same_device = [&](const TensorView* t) { return !t || t->device == mq.device; };
  if (!(same_device(in.a) && same_device(&b) && same_device(&in.A_log) && same_device(in.dt_bias) &&
        same_device(&st) && same_device(&in.out) && same_device(&idx))) {
    const std::pair<const char*, const TensorView*> others[] = {
        {"a", in.a}, {"b", &b}, {"A_log", &in.A_log}, {"dt_bias", in.dt_bias},
        {"initial_state", &st}, {"out", &in.out}, {"ssm_state_indices", &idx}};
    for (auto [name, t] : others) {
      if (t && !(t->device == mq.device)) {
        if (c.fail(ids::kda_inputs_same_device, arg_loc(name, ".device"), {},
                   {std::string(name) + " is on " + t->device.str() + ", mixed_qkv on " + mq.device.str()}))
          return true;
        break;
      }
    }
  }
  if (mq.ndim() >= 1) f.B = mq.sizes[0];
  // P10
  if (f.B && a2 && b2 && (in.a->sizes[0] != *f.B || b.sizes[0] != *f.B) &&
      c.fail(ids::kda_batch_size_mismatch, arg_loc(in.a->size(0) != *f.B ? "a" : "b", ".shape[0]"),
             {{"B", str(*f.B)}, {"a_rows", str(in.a->size(0))}, {"b_rows", str(b.size(0))}}))
    return true;
  // P11
  if (f.B && idx.ndim() == 1 && idx.sizes[0] != *f.B &&
      c.fail(ids::kda_ssm_state_indices_shape, arg_loc("ssm_state_indices", ".shape[0]"),
             {{"got", tup(idx)}, {"B", str(*f.B)}}))
    return true;
  // P12
  if (st.ndim() != 4 && c.fail(ids::kda_initial_state_ndim, arg_loc("initial_state", ".ndim"), {{"ndim", str(st.ndim())}}))
    return true;
  if (st.ndim() != 4) return false;  // HV, V, K come from the state; everything below needs them
  // P13
  if (st.strides[3] != 1 && c.fail(ids::kda_initial_state_last_dim_stride, arg_loc("initial_state", ".stride[-1]"), {},
                                   {"got stride(-1)=" + str(st.stride(-1))}))
    return true;
  const std::int64_t HV = st.sizes[1], V = st.sizes[2], K = st.sizes[3];
  f.HV = HV, f.V = V, f.K = K;
  // P14
  if ((!is_power_of_two(K) || !is_power_of_two(V)) &&
      c.fail(ids::kda_head_dims_power_of_two, arg_loc("initial_state", ".shape"), {{"K", str(K)}, {"V", str(V)}}))
    return true;
  // P15
  if (a2 && in.a->sizes[1] != HV * K &&
      c.fail(ids::kda_a_shape, arg_loc("a", ".shape[1]"), {{"HV", str(HV)}, {"K", str(K)}, {"got", tup(*in.a)}}))
    return true;
  // P16
  if (b2 && b.sizes[1] != HV && c.fail(ids::kda_b_shape, arg_loc("b", ".shape[1]"), {{"HV", str(HV)}, {"got", tup(b)}}))
    return true;
  // P17
  if (in.A_log.numel() != HV &&
      c.fail(ids::kda_a_log_numel, arg_loc("A_log", ".numel"), {{"HV", str(HV)}, {"got", str(in.A_log.numel())}}))
    return true;
  // P18
  if (in.dt_bias && in.dt_bias->numel() != HV * K &&
      c.fail(ids::kda_dt_bias_numel, arg_loc("dt_bias", ".numel"),
             {{"HV_K", str(HV * K)}, {"got", str(in.dt_bias->numel())}}))
    return true;
  // P19
  if (f.B && !shape_is(in.out, {*f.B, 1, HV, V}) &&
      c.fail(ids::kda_out_shape, arg_loc("out", ".shape"),
             {{"expected", py_tuple({*f.B, 1, HV, V})}, {"got", tup(in.out)}}))
    return true;
  if (mq.ndim() != 2) return false;
  // P20
  const std::int64_t qkv_dim = mq.sizes[1], qk_dim = qkv_dim - HV * V;
  if (qk_dim <= 0 || qk_dim % 2 != 0) {
    if (c.fail(ids::kda_mixed_qkv_last_dim, arg_loc("mixed_qkv", ".shape[1]"),
               {{"qkv_dim", str(qkv_dim)}, {"HV", str(HV)}, {"V", str(V)}}))
      return true;
    return false;
  }
  // P21
  const std::int64_t q_dim = qk_dim / 2;
  if (K == 0 || q_dim % K != 0) {
    if (c.fail(ids::kda_q_size_divisible, arg_loc("mixed_qkv", ".shape[1]"), {{"q_dim", str(q_dim)}, {"K", str(K)}}))
      return true;
    return false;
  }
  // P22
  const std::int64_t H = q_dim / K;
  if (H <= 0 || HV % H != 0) {
    if (c.fail(ids::kda_head_config, arg_loc("mixed_qkv", ".shape[1]"), {{"H", str(H)}, {"HV", str(HV)}}))
      return true;
    return false;
  }
  f.H = H;
  return false;
}

}  // namespace

DecodeFacts packed_decode_walk(const DecodeInputs& in, Checker& c) {
  DecodeFacts f;
  f.stop = walk(in, c, f);
  return f;
}

bool decode_shape_extras(const DecodeInputs& in, const DecodeFacts& f, double scale,
                         std::optional<double> lower_bound, Checker& c) {
  // O7: the kernels only do fp32/bf16/fp16 arithmetic.
  const std::pair<const char*, const TensorView*> floats[] = {
      {"mixed_qkv", &in.mixed_qkv}, {"a", in.a}, {"b", &in.b}, {"A_log", &in.A_log},
      {"dt_bias", in.dt_bias}, {"initial_state", &in.initial_state}, {"out", &in.out}};
  for (auto [name, t] : floats)
    if (t && !is_float_dtype(t->dtype) &&
        c.fail(ids::kda_float_dtype, arg_loc(name, ".dtype"),
               {{"name", name}, {"dtype", py_dtype(t->dtype)}, {"allowed", "torch.float32, torch.bfloat16, torch.float16"}}))
      return true;
  // O7 (warning): the upstream tests keep the gate parameters in fp32.
  for (auto [name, t] : {std::pair<const char*, const TensorView*>{"A_log", &in.A_log}, {"dt_bias", in.dt_bias}})
    if (t && is_float_dtype(t->dtype) && t->dtype != DType::f32 &&
        c.fail(ids::kda_gate_params_dtype, arg_loc(name, ".dtype"), {{"name", name}, {"dtype", py_dtype(t->dtype)}}))
      return true;
  // O8
  const DType it = in.ssm_state_indices.dtype;
  if (it != DType::i32 && it != DType::i64 &&
      c.fail(ids::kda_state_indices_dtype, arg_loc("ssm_state_indices", ".dtype"), {{"dtype", py_dtype(it)}}))
    return true;
  // O11
  if (!std::isfinite(scale)) {
    if (c.fail(ids::kda_scale_not_finite, arg_loc("scale"), {{"scale", py_float(scale)}})) return true;
  } else if (scale <= 0 && c.fail(ids::kda_scale_not_positive, arg_loc("scale"), {{"scale", py_float(scale)}})) {
    return true;
  }
  // O12
  if (lower_bound && (!std::isfinite(*lower_bound) || *lower_bound > 0) &&
      c.fail(ids::kda_lower_bound_invalid, arg_loc("lower_bound"), {{"lb", py_float(*lower_bound)}}))
    return true;
  // O13 (warning)
  if (f.K && f.V && (*f.K < 16 || *f.V < 16) &&
      c.fail(ids::kda_head_dims_small, arg_loc("initial_state", ".shape"), {{"K", str(*f.K)}, {"V", str(*f.V)}}))
    return true;
  // O14
  const std::pair<const char*, const TensorView*> inputs[] = {
      {"mixed_qkv", &in.mixed_qkv}, {"a", in.a}, {"b", &in.b}, {"A_log", &in.A_log}, {"dt_bias", in.dt_bias},
      {"initial_state", &in.initial_state}, {"ssm_state_indices", &in.ssm_state_indices}};
  const ByteSpan out_span = byte_span(in.out);
  for (auto [name, t] : inputs)
    if (t && overlaps(in.out, out_span, *t) && c.fail(ids::kda_out_overlap, arg_loc("out"), {{"name", name}}))
      return true;
  return false;
}

bool decode_deep_extras(const DecodeInputs& in, const DecodeFacts& f, Checker& c) {
  const TensorView& idx = in.ssm_state_indices;
  if (!f.B || idx.ndim() != 1 || idx.size(0) != *f.B || !is_integral(idx.dtype)) return false;
  const TensorView hidx = readable(idx);
  const bool pool_known = in.initial_state.ndim() == 4;
  const std::int64_t slots = pool_known ? in.initial_state.size(0) : 0;
  // O1: negative slots are padding rows, not errors.
  if (pool_known)
    for (std::int64_t r = 0; r < *f.B; ++r) {
      const std::int64_t s = hidx.at_int({r});
      if (s >= slots && c.fail(ids::kda_state_slot_out_of_range, arg_loc("ssm_state_indices", "[" + str(r) + "]"),
                               {{"b", str(r)}, {"s", str(s)}, {"slots", str(slots)}}))
        return true;
    }
  // O3
  {
    std::map<std::int64_t, std::int64_t> first_row;
    for (std::int64_t r = 0; r < *f.B; ++r) {
      const std::int64_t s = hidx.at_int({r});
      if (s < 0) continue;
      auto [it, fresh] = first_row.emplace(s, r);
      if (!fresh && c.fail(ids::kda_state_slot_shared, arg_loc("ssm_state_indices", "[" + str(r) + "]"),
                           {{"b0", str(it->second)}, {"b1", str(r)}, {"s", str(s)}}))
        return true;
    }
  }
  // O6: only what the kernel reads: non-padding rows, the gate parameters, referenced state slots.
  auto report = [&](const char* name, std::span<const std::int64_t> at) {
    return c.fail(ids::kda_non_finite, arg_loc(name, index_str(at)), {{"name", name}, {"index", index_str(at)}});
  };
  for (auto [name, t] : {std::pair<const char*, const TensorView*>{"A_log", &in.A_log}, {"dt_bias", in.dt_bias}})
    if (t)
      if (auto hit = first_non_finite(*t); hit && report(name, *hit)) return true;
  for (std::int64_t r = 0; r < *f.B; ++r) {
    const std::int64_t s = hidx.at_int({r});
    if (s < 0) continue;
    const std::pair<const char*, const TensorView*> rows[] = {{"mixed_qkv", &in.mixed_qkv}, {"a", in.a}, {"b", &in.b}};
    for (auto [name, t] : rows) {
      if (!t || t->ndim() < 1 || t->size(0) != *f.B) continue;
      if (auto hit = first_non_finite(t->select(0, r))) {
        hit->insert(hit->begin(), r);
        if (report(name, *hit)) return true;
      }
    }
    if (pool_known && s < slots)
      if (auto hit = first_non_finite(in.initial_state.select(0, s))) {
        hit->insert(hit->begin(), s);
        if (report("initial_state", *hit)) return true;
      }
  }
  return false;
}

}  // namespace detail

namespace {

using namespace detail;

detail::DecodeInputs inputs_of(const PackedDecodeArgs& a) {
  return {a.mixed_qkv, &a.a, a.b, a.A_log, &a.dt_bias, a.initial_state, a.out, a.ssm_state_indices};
}

void packed_decode_contract(const PackedDecodeArgs& a, Checker& c) {
  const DecodeInputs in = inputs_of(a);
  const DecodeFacts f = packed_decode_walk(in, c);
  if (f.stop || !c.extra()) return;
  if (decode_shape_extras(in, f, a.scale, a.lower_bound, c)) return;
  if (c.deep()) decode_deep_extras(in, f, c);
}

}  // namespace

std::vector<Diagnostic> validate_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o) {
  return run_validate<PackedDecodeArgs>(kPackedDecodeOp, &packed_decode_contract, a, o);
}
std::vector<Diagnostic> check_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o) {
  return run_check<PackedDecodeArgs>(kPackedDecodeOp, &packed_decode_contract, a, o);
}
Status try_check_packed_decode(const PackedDecodeArgs& a, const ValidateOptions& o) noexcept {
  return run_status<PackedDecodeArgs>(kPackedDecodeOp, &packed_decode_contract, a, o);
}

DecodeDims packed_decode_dims(const PackedDecodeArgs& a) {
  Checker c(kPackedDecodeOp, Checker::Mode::first_error, ValidateOptions::upstream());
  const DecodeFacts f = packed_decode_walk(inputs_of(a), c);
  if (c.has_error() || !f.H) throw std::invalid_argument("packed_decode_dims: the arguments do not pass the contract");
  return {*f.B, *f.H, *f.HV, *f.K, *f.V};
}

PackedDecodeArgs packed_decode_args(const ArgBag& bag) {
  PackedDecodeArgs a;
  bind_decode_common(bag, a);
  return a;
}

}  // namespace kparity::kda
