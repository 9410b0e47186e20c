// kda/replayssm_decode contract. Upstream: sgl-project/sglang
// python/sglang/kernels/ops/attention/helion/kda_replayssm.py (helion_fused_recurrent_kda_replayssm_decode),
// spec kda.md C.1; C.1 #4 reuses the packed-decode walk of kda_packed_decode.cpp.
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"

#include <array>
#include <stdexcept>

#include "kda_checks_util.hpp"

namespace kparity::kda {
namespace {

using namespace detail;

// C.1 #3: upstream views a as [batch, -1] and dt_bias as [-1]; both are contiguous here (#1, #2).
// The contiguous views are filled in directly (what TensorView's contiguous constructor computes);
// only a size the constructor would reject (negative) takes the constructor, to keep its exception.
TensorView flat_view(const TensorView& t, std::int64_t rows) {
  const std::int64_t cols = t.numel() / rows;
  if (rows < 0 || cols < 0) {
    const std::array<std::int64_t, 2> shape{rows, cols};
    return TensorView(t.data, t.dtype, std::span<const std::int64_t>(shape), t.device);
  }
  TensorView v;
  v.data = t.data, v.dtype = t.dtype, v.device = t.device, v.rank = 2;
  v.sizes[0] = rows, v.sizes[1] = cols;
  v.strides[0] = cols > 1 ? cols : 1, v.strides[1] = 1;
  return v;
}
TensorView flat_view(const TensorView& t) {
  const std::int64_t n = t.numel();
  if (n < 0) {
    const std::array<std::int64_t, 1> shape{n};
    return TensorView(t.data, t.dtype, std::span<const std::int64_t>(shape), t.device);
  }
  TensorView v;
  v.data = t.data, v.dtype = t.dtype, v.device = t.device, v.rank = 1;
  v.sizes[0] = n, v.strides[0] = 1;
  return v;
}

struct Walk {
  DecodeFacts f;
  std::optional<std::int64_t> batch, L;
  std::optional<TensorView> flat_a, flat_dt;
  bool stop = false;
};

// Upstream checks C.1 #0-#14, in order. Fills `w` in place; returns true when the contract must stop.
bool upstream_walk(const ReplaySsmDecodeArgs& a, Checker& c, Walk& w) {
  // #0 (implicit upstream IndexError): batch = mixed_qkv.size(0).
  if (a.mixed_qkv.ndim() == 0) {
    if (c.fail(ids::kda_replayssm_batch_dim, arg_loc("mixed_qkv", ".ndim"))) return true;
  } else {
    w.batch = a.mixed_qkv.sizes[0];
  }
  // #1
  const bool a_ok = (a.a.ndim() == 2 || a.a.ndim() == 3) && a.a.is_contiguous();
  if (!a_ok && c.fail(ids::kda_replayssm_a_layout, arg_loc("a"), {},
                      {"got ndim=" + str(a.a.ndim()) + (a.a.is_contiguous() ? "" : ", not contiguous")}))
    return true;
  // #2
  const bool dt_ok = (a.dt_bias.ndim() == 1 || a.dt_bias.ndim() == 2) && a.dt_bias.is_contiguous();
  if (!dt_ok && c.fail(ids::kda_replayssm_dt_bias_layout, arg_loc("dt_bias"), {},
                       {"got ndim=" + str(a.dt_bias.ndim()) + (a.dt_bias.is_contiguous() ? "" : ", not contiguous")}))
    return true;
  // #3 (implicit upstream RuntimeError): the view of `a` as [batch, -1]. With extra checks on, an
  // empty batch gets its own clearer entry (C.3 O15) at this position.
  if (w.batch && a_ok) {
    const std::int64_t batch = *w.batch;
    if (batch == 0 && c.extra()) {
      if (c.fail(ids::kda_replayssm_batch_zero, arg_loc("mixed_qkv", ".shape[0]"))) return true;
    } else if (batch == 0 || a.a.numel() % batch != 0) {
      if (c.fail(ids::kda_replayssm_a_view, arg_loc("a", ".shape"), {{"shape", tup(a.a)}, {"batch", str(batch)}}))
        return true;
    } else {
      w.flat_a = flat_view(a.a, batch);
    }
  }
  if (dt_ok) w.flat_dt = flat_view(a.dt_bias);
  // #4: all of C.2 on the flattened views.
  const DecodeInputs in{a.mixed_qkv, w.flat_a ? &*w.flat_a : nullptr, a.b, a.A_log, w.flat_dt ? &*w.flat_dt : nullptr,
                        a.initial_state, a.out, a.ssm_state_indices};
  w.f = packed_decode_walk(in, c);
  if (w.f.stop) return true;
  // #5
  const TensorView& wp = a.write_pos;
  if ((wp.ndim() != 1 || wp.dtype != DType::i32) &&
      c.fail(ids::kda_write_pos_dtype, arg_loc("write_pos", wp.ndim() != 1 ? ".ndim" : ".dtype"), {},
             {"got ndim=" + str(wp.ndim()) + ", dtype " + py_dtype(wp.dtype)}))
    return true;
  // #6
  if (w.batch && !shape_is(wp, {*w.batch}) &&
      c.fail(ids::kda_write_pos_shape, arg_loc("write_pos", ".shape"), {{"batch_shape", py_tuple({*w.batch})}},
             {"got " + tup(wp)}))
    return true;
  // #7
  if (a.force_flush) {
    const TensorView& ff = *a.force_flush;
    const bool bad_shape = w.batch && !shape_is(ff, {*w.batch});
    if ((ff.ndim() != 1 || ff.dtype != DType::i32 || bad_shape) &&
        c.fail(ids::kda_force_flush_layout, arg_loc("force_flush"), {},
               {"got shape " + tup(ff) + ", dtype " + py_dtype(ff.dtype)}))
      return true;
  }
  // #8 (implicit upstream IndexError when d_cache has fewer than 3 dims), then L >= 1.
  if (a.d_cache.ndim() < 3) {
    if (c.fail(ids::kda_d_cache_ndim, arg_loc("d_cache", ".ndim"), {{"ndim", str(a.d_cache.ndim())}})) return true;
  } else {
    const std::int64_t L = a.d_cache.sizes[2];
    if (L < 1) {
      if (c.fail(ids::kda_cache_length, arg_loc("d_cache", ".shape[2]"), {}, {"got L=" + str(L)})) return true;
    } else {
      w.L = L;
    }
  }
  // #9
  if (w.L && w.f.HV && !tail_is(a.d_cache, {*w.f.HV, *w.L, *w.f.V}) &&
      c.fail(ids::kda_d_cache_shape, arg_loc("d_cache", ".shape"), {},
             {"got " + tup(a.d_cache) + ", expected (slots, " + str(*w.f.HV) + ", " + str(*w.L) + ", " + str(*w.f.V) + ")"}))
    return true;
  // #10
  if (w.L && w.f.H && !tail_is(a.k_cache, {*w.f.H, *w.L, *w.f.K}) &&
      c.fail(ids::kda_k_cache_shape, arg_loc("k_cache", ".shape"), {},
             {"got " + tup(a.k_cache) + ", expected (slots, " + str(*w.f.H) + ", " + str(*w.L) + ", " + str(*w.f.K) + ")"}))
    return true;
  // #11
  if (w.L && w.f.HV && !tail_is(a.g_cache, {*w.f.HV, *w.L, *w.f.K}) &&
      c.fail(ids::kda_g_cache_shape, arg_loc("g_cache", ".shape"), {},
             {"got " + tup(a.g_cache) + ", expected (slots, " + str(*w.f.HV) + ", " + str(*w.L) + ", " + str(*w.f.K) + ")"}))
    return true;
  // #12
  if (a.g_cache.dtype != DType::f32 &&
      c.fail(ids::kda_g_cache_dtype, arg_loc("g_cache", ".dtype"), {}, {"got " + py_dtype(a.g_cache.dtype)}))
    return true;
  // #13 (the loop names the first mismatch; the conjunction is its fast path)
  const Device dev = a.mixed_qkv.device;
  if (!(a.d_cache.device == dev && a.k_cache.device == dev && a.g_cache.device == dev && a.write_pos.device == dev)) {
    for (auto [name, t] : {std::pair<const char*, const TensorView*>{"d_cache", &a.d_cache},
                           {"k_cache", &a.k_cache}, {"g_cache", &a.g_cache}, {"write_pos", &a.write_pos}}) {
      if (!(t->device == dev)) {
        if (c.fail(ids::kda_replayssm_same_device, arg_loc(name, ".device"), {},
                   {std::string(name) + " is on " + t->device.str() + ", mixed_qkv on " + dev.str()}))
          return true;
        break;
      }
    }
  }
  // #14
  if (a.force_flush && !(a.force_flush->device == dev) &&
      c.fail(ids::kda_force_flush_device, arg_loc("force_flush", ".device"), {},
             {"force_flush is on " + a.force_flush->device.str() + ", mixed_qkv on " + dev.str()}))
    return true;
  return false;
}

Walk upstream_checks(const ReplaySsmDecodeArgs& a, Checker& c) {
  Walk w;
  w.stop = upstream_walk(a, c, w);
  return w;
}

bool replay_shape_extras(const ReplaySsmDecodeArgs& a, const Walk& w, Checker& c) {
  // O7 for the two rings whose dtype upstream leaves open.
  for (auto [name, t] : {std::pair<const char*, const TensorView*>{"d_cache", &a.d_cache}, {"k_cache", &a.k_cache}})
    if (!is_float_dtype(t->dtype) &&
        c.fail(ids::kda_float_dtype, arg_loc(name, ".dtype"),
               {{"name", name}, {"dtype", py_dtype(t->dtype)}, {"allowed", "torch.float32, torch.bfloat16, torch.float16"}}))
      return true;
  // O14 for the ReplaySSM-only inputs.
  const std::pair<const char*, const TensorView*> more[] = {{"d_cache", &a.d_cache}, {"k_cache", &a.k_cache},
                                                            {"g_cache", &a.g_cache}, {"write_pos", &a.write_pos},
                                                            {"force_flush", a.force_flush ? &*a.force_flush : nullptr}};
  const ByteSpan out_span = byte_span(a.out);
  for (auto [name, t] : more)
    if (t && overlaps(a.out, out_span, *t) && c.fail(ids::kda_out_overlap, arg_loc("out"), {{"name", name}})) return true;
  // O9: rings are indexed with the state slot, so a smaller ring is an out-of-bounds access waiting
  // for the first high slot. Without the slot data that is an error; when the slots are checked (this
  // pass or the launcher's deep pass) O2 decides, and any mismatch left is only suspicious (warning).
  if (a.initial_state.ndim() == 4) {
    const std::int64_t slots = a.initial_state.sizes[0];
    const std::pair<const char*, const TensorView*> rings[] = {
        {"d_cache", &a.d_cache}, {"k_cache", &a.k_cache}, {"g_cache", &a.g_cache}};
    if (!c.data_checked())
      for (auto [name, t] : rings)
        if (t->ndim() >= 1 && t->sizes[0] < slots &&
            c.fail(ids::kda_ring_slots_fewer, arg_loc(name, ".shape[0]"),
                   {{"ring", name}, {"n", str(t->size(0))}, {"slots", str(slots)}}))
          return true;
    for (auto [name, t] : rings)
      if (t->ndim() >= 1 && t->sizes[0] != slots && (c.data_checked() || t->sizes[0] > slots) &&
          c.fail(ids::kda_ring_slots_differ, arg_loc(name, ".shape[0]"),
                 {{"ring", name}, {"n", str(t->size(0))}, {"slots", str(slots)}}))
        return true;
  }
  // O10
  for (auto [name, t] : {std::pair<const char*, const TensorView*>{"write_pos", &a.write_pos},
                         {"force_flush", a.force_flush ? &*a.force_flush : nullptr}})
    if (t && !t->is_contiguous() &&
        c.fail(ids::kda_replayssm_control_contiguous, arg_loc(name), {{"name", name}}, {"got strides " + py_tuple(t->stride_vec())}))
      return true;
  (void)w;
  return false;
}

bool replay_deep_extras(const ReplaySsmDecodeArgs& a, const Walk& w, Checker& c) {
  if (!w.batch) return false;
  const std::int64_t B = *w.batch;
  const TensorView& idx = a.ssm_state_indices;
  if (idx.ndim() != 1 || idx.size(0) != B || !is_integral(idx.dtype)) return false;
  const TensorView hidx = readable(idx);
  const bool wp_ok = a.write_pos.ndim() == 1 && a.write_pos.size(0) == B && is_integral(a.write_pos.dtype);
  const TensorView hwp = readable(a.write_pos);
  const std::pair<const char*, const TensorView*> rings[] = {
      {"d_cache", &a.d_cache}, {"k_cache", &a.k_cache}, {"g_cache", &a.g_cache}};
  // O2
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t s = hidx.at_int({r});
    if (s < 0) continue;
    for (auto [name, t] : rings)
      if (t->ndim() >= 1 && s >= t->size(0) &&
          c.fail(ids::kda_ring_slot_out_of_range, arg_loc("ssm_state_indices", "[" + str(r) + "]"),
                 {{"b", str(r)}, {"s", str(s)}, {"ring", name}, {"n", str(t->size(0))}}))
        return true;
  }
  // O4: padding rows never read their cursor.
  if (w.L && wp_ok)
    for (std::int64_t r = 0; r < B; ++r) {
      if (hidx.at_int({r}) < 0) continue;
      const std::int64_t cur = hwp.at_int({r});
      if ((cur < 0 || cur > *w.L - 1) &&
          c.fail(ids::kda_write_pos_out_of_range, arg_loc("write_pos", "[" + str(r) + "]"),
                 {{"b", str(r)}, {"c", str(cur)}, {"L_minus_1", str(*w.L - 1)}, {"L", str(*w.L)}}))
        return true;
    }
  // O5 (warning)
  if (a.force_flush) {
    const TensorView& ff = *a.force_flush;
    if (ff.ndim() == 1 && ff.size(0) == B && is_integral(ff.dtype)) {
      const TensorView hff = readable(ff);
      for (std::int64_t r = 0; r < B; ++r) {
        if (hidx.at_int({r}) < 0) continue;
        const std::int64_t v = hff.at_int({r});
        if (v != 0 && v != 1 &&
            c.fail(ids::kda_force_flush_value, arg_loc("force_flush", "[" + str(r) + "]"), {{"b", str(r)}, {"v", str(v)}}))
          return true;
      }
    }
  }
  // O6 for the valid ring entries i < c of each non-padding row; stale entries are never read.
  if (w.L && wp_ok && w.f.H && w.f.HV) {
    for (std::int64_t r = 0; r < B; ++r) {
      const std::int64_t s = hidx.at_int({r});
      const std::int64_t cur = hwp.at_int({r});
      if (s < 0 || cur < 0) continue;
      const std::int64_t n = std::min(cur, *w.L);
      for (auto [name, t] : rings) {
        const std::int64_t heads = (t == &a.k_cache) ? *w.f.H : *w.f.HV;
        if (t->ndim() != 4 || s >= t->size(0) || t->size(1) != heads || t->size(2) != *w.L) continue;
        for (std::int64_t h = 0; h < heads; ++h)
          for (std::int64_t i = 0; i < n; ++i)
            if (auto hit = first_non_finite(t->select(0, s).select(0, h).select(0, i))) {
              std::vector<std::int64_t> at{s, h, i, (*hit)[0]};
              if (c.fail(ids::kda_non_finite, arg_loc(name, index_str(at)), {{"name", name}, {"index", index_str(at)}}))
                return true;
            }
      }
    }
  }
  return false;
}

void replayssm_contract(const ReplaySsmDecodeArgs& a, Checker& c) {
  const Walk w = upstream_checks(a, c);
  if (w.stop || !c.extra()) return;
  const DecodeInputs in{a.mixed_qkv, w.flat_a ? &*w.flat_a : nullptr, a.b, a.A_log, w.flat_dt ? &*w.flat_dt : nullptr,
                        a.initial_state, a.out, a.ssm_state_indices};
  if (decode_shape_extras(in, w.f, a.scale, a.lower_bound, c)) return;
  if (replay_shape_extras(a, w, c)) return;
  if (!c.deep()) return;
  if (decode_deep_extras(in, w.f, c)) return;
  replay_deep_extras(a, w, c);
}

}  // namespace

std::vector<Diagnostic> validate_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o) {
  return run_validate<ReplaySsmDecodeArgs>(kReplaySsmDecodeOp, &replayssm_contract, a, o);
}
std::vector<Diagnostic> check_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o) {
  return run_check<ReplaySsmDecodeArgs>(kReplaySsmDecodeOp, &replayssm_contract, a, o);
}
Status try_check_replayssm_decode(const ReplaySsmDecodeArgs& a, const ValidateOptions& o) noexcept {
  return run_status<ReplaySsmDecodeArgs>(kReplaySsmDecodeOp, &replayssm_contract, a, o);
}

ReplayDims replayssm_dims(const ReplaySsmDecodeArgs& a) {
  Checker c(kReplaySsmDecodeOp, Checker::Mode::first_error, ValidateOptions::upstream());
  const Walk w = upstream_checks(a, c);
  if (c.has_error() || !w.f.H || !w.L) throw std::invalid_argument("replayssm_dims: the arguments do not pass the contract");
  ReplayDims d;
  d.B = *w.f.B, d.H = *w.f.H, d.HV = *w.f.HV, d.K = *w.f.K, d.V = *w.f.V, d.L = *w.L;
  return d;
}

ReplaySsmDecodeArgs replayssm_decode_args(const ArgBag& bag) {
  ReplaySsmDecodeArgs a;
  bind_decode_common(bag, a);
  a.d_cache = bag.required("d_cache");
  a.k_cache = bag.required("k_cache");
  a.g_cache = bag.required("g_cache");
  a.write_pos = bag.required("write_pos");
  if (const TensorView* ff = bag.tensor("force_flush")) a.force_flush = *ff;
  // Not an upstream argument (spec A.4 item 6): opt into fp32 beta for parity with the packed decode.
  if (bag.flag("beta_in_fp32")) a.beta_rounding = BetaRounding::fp32;
  return a;
}

ReplaySsmDecodeArgs replayssm_flattened(const ReplaySsmDecodeArgs& a) {
  ReplaySsmDecodeArgs f = a;
  f.a = flat_view(a.a, a.mixed_qkv.size(0));
  f.dt_bias = flat_view(a.dt_bias);
  return f;
}

}  // namespace kparity::kda
