// kda/recurrent contract. No upstream wrapper exists (the closest form is fla-org/flash-linear-attention
// fla/ops/kda/naive.py); every check is origin kparity. Without the structural ones the reference
// would index out of bounds, so those run by default.
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

#include "kda_checks_util.hpp"

namespace kparity::kda {
namespace {

using namespace detail;

struct Facts {
  std::optional<std::int64_t> T, N, H, HV, K, V;
  bool gate_ok = false;
  bool stop = false;
};

Facts structural(const RecurrentArgs& a, Checker& c) {
  Facts f;
  auto stop = [&] { f.stop = true; return f; };
  // 1
  if (a.q.ndim() != 3) {
    if (c.fail(ids::kda_recurrent_q_shape, arg_loc("q", ".ndim"), {{"got", tup(a.q)}})) return stop();
  } else {
    f.T = a.q.sizes[0], f.H = a.q.sizes[1], f.K = a.q.sizes[2];
  }
  // 2
  if (f.T && !same_shape(a.k, a.q) &&
      c.fail(ids::kda_recurrent_k_shape, arg_loc("k", ".shape"), {{"expected", tup(a.q)}, {"got", tup(a.k)}}))
    return stop();
  // 3
  if (f.T) {
    if (a.v.ndim() != 3 || a.v.sizes[0] != *f.T) {
      if (c.fail(ids::kda_recurrent_v_shape, arg_loc("v", ".shape"), {{"T", str(*f.T)}, {"got", tup(a.v)}}))
        return stop();
    } else {
      f.HV = a.v.sizes[1], f.V = a.v.sizes[2];
    }
  }
  const bool dims = f.T && f.HV;
  // 4
  if (dims && (*f.K < 1 || *f.V < 1) &&
      c.fail(ids::kda_recurrent_head_dims, arg_loc(*f.K < 1 ? "q" : "v", ".shape[2]"), {{"K", str(*f.K)}, {"V", str(*f.V)}}))
    return stop();
  // 5: GQA maps value head hv to q/k head hv / (HV / H).
  if (dims && (*f.H < 1 || *f.HV < *f.H || *f.HV % *f.H != 0) &&
      c.fail(ids::kda_recurrent_head_ratio, arg_loc("v", ".shape[1]"), {{"HV", str(*f.HV)}, {"H", str(*f.H)}}))
    return stop();
  // 6
  {
    const bool raw_all = a.a && a.dt_bias && a.A_log;
    const bool raw_any = a.a || a.dt_bias || a.A_log;
    f.gate_ok = a.g ? !raw_any : raw_all;
    if (!f.gate_ok) {
      std::string got;
      for (auto [name, present] : {std::pair<const char*, bool>{"g", a.g.has_value()}, {"a", a.a.has_value()},
                                   {"dt_bias", a.dt_bias.has_value()}, {"A_log", a.A_log.has_value()}})
        if (present) got += (got.empty() ? "" : ", ") + std::string(name);
      if (c.fail(ids::kda_recurrent_gate_form, arg_loc(a.g ? "g" : "a"), {{"got", got.empty() ? "none" : got}}))
        return stop();
    }
  }
  if (dims) {
    const std::int64_t T = *f.T, HV = *f.HV, K = *f.K, V = *f.V;
    if (f.gate_ok && a.g) {
      // 7
      if (!shape_is(*a.g, {T, HV, K}) &&
          c.fail(ids::kda_recurrent_g_shape, arg_loc("g", ".shape"), {{"expected", py_tuple({T, HV, K})}, {"got", tup(*a.g)}}))
        return stop();
    } else if (f.gate_ok) {
      // 8
      if (!shape_is(*a.a, {T, HV, K}) &&
          c.fail(ids::kda_recurrent_a_shape, arg_loc("a", ".shape"), {{"expected", py_tuple({T, HV, K})}, {"got", tup(*a.a)}}))
        return stop();
      // 9
      if (!shape_is(*a.dt_bias, {HV, K}) && !shape_is(*a.dt_bias, {HV * K}) &&
          c.fail(ids::kda_recurrent_dt_bias_shape, arg_loc("dt_bias", ".shape"),
                 {{"expected", py_tuple({HV, K})}, {"HV_K", str(HV * K)}, {"got", tup(*a.dt_bias)}}))
        return stop();
      // 10
      if (!shape_is(*a.A_log, {HV}) &&
          c.fail(ids::kda_recurrent_a_log_shape, arg_loc("A_log", ".shape"), {{"expected", py_tuple({HV})}, {"got", tup(*a.A_log)}}))
        return stop();
    }
    // 11
    if (!shape_is(a.beta, {T, HV}) &&
        c.fail(ids::kda_recurrent_beta_shape, arg_loc("beta", ".shape"), {{"expected", py_tuple({T, HV})}, {"got", tup(a.beta)}}))
      return stop();
    (void)V;
  }
  // 12
  bool cu_ok = true;
  if (a.cu_seqlens) {
    const TensorView& cu = *a.cu_seqlens;
    cu_ok = cu.ndim() == 1 && cu.sizes[0] >= 1;
    if (!cu_ok && c.fail(ids::kda_recurrent_cu_seqlens_shape, arg_loc("cu_seqlens", ".shape"), {{"got", tup(cu)}}))
      return stop();
    // 13
    if (!is_integral(cu.dtype) &&
        c.fail(ids::kda_recurrent_cu_seqlens_dtype, arg_loc("cu_seqlens", ".dtype"), {{"dtype", py_dtype(cu.dtype)}}))
      return stop();
  }
  if (cu_ok) f.N = a.cu_seqlens ? a.cu_seqlens->sizes[0] - 1 : 1;
  if (dims && f.N) {
    const std::array<std::int64_t, 4> state{*f.N, *f.HV, *f.V, *f.K};
    // 14, 15
    for (auto [name, id, t] : {std::tuple<const char*, std::string_view, const std::optional<TensorView>*>{
                                   "initial_state", ids::kda_recurrent_initial_state_shape, &a.initial_state},
                               {"final_state", ids::kda_recurrent_final_state_shape, &a.final_state}})
      if (*t && !shape_is(**t, state) &&
          c.fail(id, arg_loc(name, ".shape"), {{"expected", py_tuple(state)}, {"got", tup(**t)}}))
        return stop();
  }
  // 16
  if (dims && !shape_is(a.out, {*f.T, *f.HV, *f.V}) &&
      c.fail(ids::kda_recurrent_out_shape, arg_loc("out", ".shape"),
             {{"expected", py_tuple({*f.T, *f.HV, *f.V})}, {"got", tup(a.out)}}))
    return stop();
  // The present tensors in argument order, in a fixed-size list (no allocation on the success path).
  std::array<std::pair<const char*, const TensorView*>, 11> tensors;
  std::size_t n = 0;
  const auto add = [&](const char* name, const TensorView* t) {
    if (t) tensors[n++] = {name, t};
  };
  const auto opt = [](const std::optional<TensorView>& t) { return t ? &*t : nullptr; };
  add("q", &a.q), add("k", &a.k), add("v", &a.v), add("g", opt(a.g)), add("a", opt(a.a));
  add("dt_bias", opt(a.dt_bias)), add("A_log", opt(a.A_log)), add("beta", &a.beta);
  add("initial_state", opt(a.initial_state)), add("final_state", opt(a.final_state)), add("out", &a.out);
  // 17
  for (std::size_t i = 0; i < n; ++i) {
    const auto [name, t] = tensors[i];
    if (!is_float_dtype(t->dtype) &&
        c.fail(ids::kda_recurrent_float_dtype, arg_loc(name, ".dtype"), {{"name", name}, {"dtype", py_dtype(t->dtype)}}))
      return stop();
  }
  // 18
  const std::pair<const char*, const TensorView*> cu{"cu_seqlens", opt(a.cu_seqlens)};
  for (std::size_t i = 0; i <= n; ++i) {
    const auto [name, t] = i < n ? tensors[i] : cu;
    if (!t) continue;
    if (!(t->device == a.q.device)) {
      if (c.fail(ids::kda_recurrent_same_device, arg_loc(name, ".device"),
                 {{"name", name}, {"device", t->device.str()}, {"q_device", a.q.device.str()}}))
        return stop();
      break;
    }
  }
  return f;
}

bool extras(const RecurrentArgs& a, Checker& c) {
  if (a.scale && !std::isfinite(*a.scale) &&
      c.fail(ids::kda_recurrent_scale_not_finite, arg_loc("scale"), {{"scale", py_float(*a.scale)}}))
    return true;
  if (a.lower_bound && (!std::isfinite(*a.lower_bound) || *a.lower_bound > 0) &&
      c.fail(ids::kda_recurrent_lower_bound_invalid, arg_loc("lower_bound"), {{"lb", py_float(*a.lower_bound)}}))
    return true;
  // Outputs must not alias what the recurrence still reads. final_state may alias initial_state
  // only through the reference's own copy, so that pair is allowed.
  // Fixed-size lists (no allocation): the inputs, then for `out` also the two states.
  using Named = std::pair<const char*, const TensorView*>;
  std::array<Named, 11> others;
  std::size_t n = 0;
  for (Named t : {Named{"q", &a.q}, Named{"k", &a.k}, Named{"v", &a.v}, Named{"beta", &a.beta}}) others[n++] = t;
  for (auto [name, t] : {std::pair<const char*, const std::optional<TensorView>*>{"g", &a.g}, {"a", &a.a},
                         {"dt_bias", &a.dt_bias}, {"A_log", &a.A_log}, {"cu_seqlens", &a.cu_seqlens}})
    if (*t) others[n++] = {name, &**t};
  const std::size_t n_ins = n;
  if (a.initial_state) others[n++] = {"initial_state", &*a.initial_state};
  if (a.final_state) others[n++] = {"final_state", &*a.final_state};
  const Named outs[] = {{"out", &a.out}, {"final_state", a.final_state ? &*a.final_state : nullptr}};
  for (auto [oname, o] : outs) {
    if (!o) continue;
    const std::size_t count = o == &a.out ? n : n_ins;
    const ByteSpan o_span = byte_span(*o);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [name, t] = others[i];
      if (overlaps(*o, o_span, *t) &&
          c.fail(ids::kda_recurrent_out_overlap, arg_loc(oname), {{"name", oname}, {"other", name}}))
        return true;
    }
  }
  return false;
}

bool deep(const RecurrentArgs& a, const Facts& f, Checker& c) {
  if (a.cu_seqlens && f.N && f.T && is_integral(a.cu_seqlens->dtype)) {
    const TensorView cu = readable(*a.cu_seqlens);
    const std::int64_t n = cu.size(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = cu.at_int({i});
      const bool bad = (i == 0 && v != 0) || (i > 0 && v < cu.at_int({i - 1})) || (i == n - 1 && v != *f.T);
      if (bad) {
        if (c.fail(ids::kda_recurrent_cu_seqlens_values, arg_loc("cu_seqlens", "[" + str(i) + "]"),
                   {{"T", str(*f.T)}, {"i", str(i)}, {"value", str(v)}}))
          return true;
        break;
      }
    }
  }
  std::vector<std::pair<const char*, const TensorView*>> ins = {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}};
  for (auto [name, t] : {std::pair<const char*, const std::optional<TensorView>*>{"g", &a.g}, {"a", &a.a},
                         {"dt_bias", &a.dt_bias}, {"A_log", &a.A_log}})
    if (*t) ins.push_back({name, &**t});
  ins.push_back({"beta", &a.beta});
  if (a.initial_state) ins.push_back({"initial_state", &*a.initial_state});
  for (auto [name, t] : ins)
    if (auto hit = first_non_finite(*t);
        hit && c.fail(ids::kda_recurrent_non_finite, arg_loc(name, index_str(*hit)), {{"name", name}, {"index", index_str(*hit)}}))
      return true;
  return false;
}

void recurrent_contract(const RecurrentArgs& a, Checker& c) {
  const Facts f = structural(a, c);
  if (f.stop || !c.extra()) return;
  if (extras(a, c)) return;
  if (c.deep()) deep(a, f, c);
}

}  // namespace

std::vector<Diagnostic> validate_recurrent(const RecurrentArgs& a, const ValidateOptions& o) {
  return run_validate<RecurrentArgs>(kRecurrentOp, &recurrent_contract, a, o);
}
std::vector<Diagnostic> check_recurrent(const RecurrentArgs& a, const ValidateOptions& o) {
  return run_check<RecurrentArgs>(kRecurrentOp, &recurrent_contract, a, o);
}
Status try_check_recurrent(const RecurrentArgs& a, const ValidateOptions& o) noexcept {
  return run_status<RecurrentArgs>(kRecurrentOp, &recurrent_contract, a, o);
}

RecurrentDims recurrent_dims(const RecurrentArgs& a) {
  Checker c(kRecurrentOp, Checker::Mode::first_error, ValidateOptions::upstream());
  const Facts f = structural(a, c);
  if (c.has_error() || !f.HV || !f.N) throw std::invalid_argument("recurrent_dims: the arguments do not pass the contract");
  return {*f.T, *f.N, *f.H, *f.HV, *f.K, *f.V};
}

RecurrentArgs recurrent_args(const ArgBag& bag) {
  RecurrentArgs a;
  a.q = bag.required("q");
  a.k = bag.required("k");
  a.v = bag.required("v");
  auto opt = [&](const char* name) -> std::optional<TensorView> {
    if (const TensorView* t = bag.tensor(name)) return *t;
    return std::nullopt;
  };
  a.g = opt("g");
  a.a = opt("a");
  a.dt_bias = opt("dt_bias");
  a.A_log = opt("A_log");
  a.lower_bound = bag.scalar("lower_bound");
  // `kparity run` names logits `b` (sglang's spelling); probabilities are `beta`.
  if (const TensorView* beta = bag.tensor("beta")) {
    a.beta = *beta;
    a.beta_is_logits = bag.flag("beta_is_logits");
  } else if (const TensorView* b = bag.tensor("b")) {
    a.beta = *b;
    a.beta_is_logits = true;
  } else {
    throw std::invalid_argument("missing required argument `beta` (or its logits `b`)");
  }
  a.use_qk_l2norm_in_kernel = bag.flag("use_qk_l2norm_in_kernel", bag.flag("use_qk_l2norm"));
  a.scale = bag.scalar("scale");
  a.initial_state = opt("initial_state");
  a.final_state = opt("final_state");
  a.cu_seqlens = opt("cu_seqlens");
  if (const TensorView* out = bag.tensor("out")) {
    a.out = *out;
  } else if (const TensorView* o = bag.tensor("o")) {
    a.out = *o;
  } else {
    throw std::invalid_argument("missing required argument `out` (or `o`)");
  }
  return a;
}

}  // namespace kparity::kda
