// kda/chunk contract: fla-org/flash-linear-attention fla/ops/kda/chunk.py @bc3b101d (chunk_kda and
// ChunkKDAFunction.forward), Triton path. The header lists what each option means and the order.
#include "kparity/diagnostics/contracts/kda_chunk.hpp"

#include <array>
#include <cmath>
#include <stdexcept>

#include "kda_checks_util.hpp"

namespace kparity::kda {
namespace {

using namespace detail;

// Python's str() of a list and of a torch.Size, as upstream's f-strings print them.
std::string py_list(std::span<const std::int64_t> v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}
std::string py_list(std::initializer_list<std::int64_t> v) { return py_list(std::span(v.begin(), v.size())); }
std::string shape_list(const TensorView& t) { return py_list(std::span(t.sizes.data(), static_cast<std::size_t>(t.rank))); }
std::string torch_size(const TensorView& t) { return "torch.Size(" + shape_list(t) + ")"; }
// An int argument as Python prints it; a non-integral value (a float passed as chunk_size) as repr.
std::string py_number(double v) {
  return std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<std::int64_t>(v))
                                                                       : py_float(v);
}

const TensorView* opt(const std::optional<TensorView>& t) { return t ? &*t : nullptr; }

struct Facts {
  std::optional<std::int64_t> B, T, H, HV, K, V, N;
  bool state_v_first = false;
  bool varlen_count_reported = false;  // kda-chunk-initial-state-count fired
  bool cu_0d_reported = false;         // kda-chunk-cu-seqlens-0d fired
};

// What the call reads: the gate parameters only with use_gate_in_kernel (the wrapper sets them to
// None otherwise), final_state only when it is written.
const TensorView* used_A_log(const ChunkArgs& a) { return a.use_gate_in_kernel ? opt(a.A_log) : nullptr; }
const TensorView* used_dt_bias(const ChunkArgs& a) { return a.use_gate_in_kernel ? opt(a.dt_bias) : nullptr; }
const TensorView* written_final_state(const ChunkArgs& a) { return a.output_final_state ? opt(a.final_state) : nullptr; }

// chunk_kda's body, lines 354-418, then ChunkKDAFunction.forward's assert at line 100. Returns true
// when the contract must stop; fills f in place.
bool upstream_walk(const ChunkArgs& a, Checker& c, Facts& f) {
  // L354-362: the deprecated kwarg replaces state_v_first.
  if (a.transpose_state_layout && a.state_v_first &&
      c.fail(ids::kda_chunk_transpose_state_layout_conflict, arg_loc("transpose_state_layout")))
    return true;
  f.state_v_first = a.transpose_state_layout ? *a.transpose_state_layout : a.state_v_first;
  // L373-383
  if (a.cu_seqlens) {
    if (a.q.ndim() == 0) {
      if (c.fail(ids::kda_chunk_varlen_batch_dim, arg_loc("q", ".ndim"))) return true;
    } else if (a.q.sizes[0] != 1 &&
               c.fail(ids::kda_chunk_varlen_batch_size, arg_loc("q", ".shape[0]"), {{"B", str(a.q.sizes[0])}})) {
      return true;
    }
    if (a.initial_state) {
      const TensorView& s = *a.initial_state;
      const TensorView& cu = *a.cu_seqlens;
      // `initial_state.shape[0] != len(cu_seqlens) - 1`: the left operand is evaluated first.
      if (s.ndim() == 0) {
        if (c.fail(ids::kda_chunk_varlen_initial_state_dim, arg_loc("initial_state", ".ndim"))) return true;
      } else if (cu.ndim() == 0) {
        f.cu_0d_reported = true;
        if (c.fail(ids::kda_chunk_cu_seqlens_0d, arg_loc("cu_seqlens", ".ndim"))) return true;
      } else if (s.sizes[0] != cu.sizes[0] - 1) {
        f.varlen_count_reported = true;
        if (c.fail(ids::kda_chunk_initial_state_count, arg_loc("initial_state", ".shape[0]"),
                   {{"N", str(cu.sizes[0] - 1)}, {"got", str(s.sizes[0])}}))
          return true;
      }
    }
  }
  // L384-385
  if (a.initial_state && a.initial_state->dtype != DType::f32 &&
      c.fail(ids::kda_chunk_initial_state_dtype, arg_loc("initial_state", ".dtype"), {},
             {"got " + py_dtype(a.initial_state->dtype)}))
    return true;
  // L387-391
  if (a.use_gate_in_kernel && !a.A_log && !a.lower_bound && c.fail(ids::kda_chunk_a_log_required, arg_loc("A_log")))
    return true;
  // L393-395
  if (a.chunk_size && *a.chunk_size != 32 && *a.chunk_size != 64 &&
      c.fail(ids::kda_chunk_chunk_size, arg_loc("chunk_size"), {{"chunk_size", py_number(*a.chunk_size)}}))
    return true;
  // L397-401
  if (a.safe_gate && a.use_gate_in_kernel) {
    if (!a.lower_bound) {
      if (c.fail(ids::kda_chunk_safe_gate_lower_bound_required, arg_loc("lower_bound"))) return true;
    } else if (!(-5 <= *a.lower_bound && *a.lower_bound < 0) &&
               c.fail(ids::kda_chunk_safe_gate_lower_bound_range, arg_loc("lower_bound"),
                      {{"lower_bound", py_float(*a.lower_bound)}})) {
      return true;
    }
  }
  // L403-404
  if (a.allow_neg_eigval && !a.use_beta_sigmoid_in_kernel &&
      c.fail(ids::kda_chunk_allow_neg_eigval, arg_loc("allow_neg_eigval")))
    return true;
  // L407: `B, T, H, K, HV = *q.shape, v.shape[2]` reads v.shape[2] before unpacking q.shape.
  if (a.v.ndim() < 3) {
    c.fail(ids::kda_chunk_v_ndim, arg_loc("v", ".ndim"), {{"ndim", str(a.v.ndim())}});
    return true;  // nothing below can be evaluated
  }
  if (a.q.ndim() != 4) {
    c.fail(ids::kda_chunk_q_ndim, arg_loc("q", ".ndim"), {{"ndim", str(a.q.ndim())}});
    return true;
  }
  const std::int64_t B = a.q.sizes[0], T = a.q.sizes[1], H = a.q.sizes[2], K = a.q.sizes[3], HV = a.v.sizes[2];
  f.B = B, f.T = T, f.H = H, f.K = K, f.HV = HV;
  // L408
  if (!same_shape(a.q, a.k) &&
      c.fail(ids::kda_chunk_qk_shape, arg_loc("k", ".shape"), {{"q_shape", torch_size(a.q)}, {"k_shape", torch_size(a.k)}}))
    return true;
  // L409
  if (K > 256 && c.fail(ids::kda_chunk_key_head_dim, arg_loc("q", ".shape[3]"), {{"K", str(K)}})) return true;
  // L410-413: `HV % H` divides by H first.
  if (H == 0) {
    if (c.fail(ids::kda_chunk_num_qk_heads_zero, arg_loc("q", ".shape[2]"))) return true;
  } else if (HV % H != 0 &&
             c.fail(ids::kda_chunk_head_ratio, arg_loc("v", ".shape[2]"), {{"HV", str(HV)}, {"H", str(H)}, {"rem", str(HV % H)}})) {
    return true;
  }
  // L414
  if (!shape_is(a.g, {B, T, HV, K}) &&
      c.fail(ids::kda_chunk_g_shape, arg_loc("g", ".shape"), {{"expected", py_list({B, T, HV, K})}, {"got", shape_list(a.g)}}))
    return true;
  // L415
  if (!shape_is(a.beta, {B, T, HV}) &&
      c.fail(ids::kda_chunk_beta_shape, arg_loc("beta", ".shape"), {{"expected", py_list({B, T, HV})}, {"got", shape_list(a.beta)}}))
    return true;
  // L417-418: `K ** -0.5` with K = 0.
  if (!a.scale && K == 0 && c.fail(ids::kda_chunk_default_scale_k_zero, arg_loc("scale"))) return true;
  // L100, after the kernels ran (L99's inference-mode assert depends on torch's state: not modelled).
  if (a.return_intermediate_states && a.disable_recompute &&
      c.fail(ids::kda_chunk_intermediate_states_recompute, arg_loc("disable_recompute")))
    return true;
  return false;
}

// kparity's structural checks: what upstream's kernels would read out of bounds or misread.
bool structural(const ChunkArgs& a, Checker& c, Facts& f) {
  const std::int64_t B = *f.B, T = *f.T, HV = *f.HV, K = *f.K;
  if (a.v.ndim() != 4 || a.v.sizes[0] != B || a.v.sizes[1] != T) {
    if (c.fail(ids::kda_chunk_v_shape, arg_loc("v", ".shape"), {{"B", str(B)}, {"T", str(T)}, {"got", tup(a.v)}})) return true;
  } else {
    f.V = a.v.sizes[3];
  }
  // K = 0 without a scale was reported where upstream divides by it.
  const bool k_bad = K < 1 && a.scale, v_bad = f.V && *f.V < 1;
  if (f.V && (k_bad || v_bad) &&
      c.fail(ids::kda_chunk_head_dims, arg_loc(k_bad ? "q" : "v", ".shape[3]"), {{"K", str(K)}, {"V", str(*f.V)}}))
    return true;
  if (const TensorView* al = used_A_log(a); al && !shape_is(*al, {HV}) &&
      c.fail(ids::kda_chunk_a_log_shape, arg_loc("A_log", ".shape"), {{"expected", py_tuple({HV})}, {"got", tup(*al)}}))
    return true;
  if (const TensorView* dt = used_dt_bias(a); dt && !shape_is(*dt, {HV * K}) && !shape_is(*dt, {HV, K}) &&
      c.fail(ids::kda_chunk_dt_bias_shape, arg_loc("dt_bias", ".shape"),
             {{"HV_K", str(HV * K)}, {"expected", py_tuple({HV, K})}, {"got", tup(*dt)}}))
    return true;
  bool cu_ok = true;
  if (a.cu_seqlens) {
    const TensorView& cu = *a.cu_seqlens;
    cu_ok = cu.ndim() == 1 && cu.sizes[0] >= 1;
    if (!cu_ok && !f.cu_0d_reported &&
        c.fail(ids::kda_chunk_cu_seqlens_shape, arg_loc("cu_seqlens", ".shape"), {{"got", tup(cu)}}))
      return true;
    if (!is_integral(cu.dtype) &&
        c.fail(ids::kda_chunk_cu_seqlens_dtype, arg_loc("cu_seqlens", ".dtype"), {{"dtype", py_dtype(cu.dtype)}}))
      return true;
  }
  if (cu_ok) f.N = a.cu_seqlens ? a.cu_seqlens->sizes[0] - 1 : B;
  if (f.N && f.V) {
    const std::int64_t V = *f.V, N = *f.N;
    const std::array<std::int64_t, 4> state = f.state_v_first ? std::array<std::int64_t, 4>{N, HV, V, K}
                                                              : std::array<std::int64_t, 4>{N, HV, K, V};
    const auto state_ok = [&](const TensorView& t, bool count_reported) {
      if (shape_is(t, state)) return true;
      // A wrong count alone was already reported (upstream's own message).
      return count_reported && t.ndim() == 4 && t.sizes[1] == state[1] && t.sizes[2] == state[2] && t.sizes[3] == state[3];
    };
    const char* layout = f.state_v_first ? "[N, HV, V, K]" : "[N, HV, K, V]";
    if (a.initial_state && !state_ok(*a.initial_state, f.varlen_count_reported) &&
        c.fail(ids::kda_chunk_initial_state_shape, arg_loc("initial_state", ".shape"),
               {{"layout", layout}, {"expected", py_tuple(state)}, {"got", tup(*a.initial_state)}}))
      return true;
    if (const TensorView* fs = written_final_state(a); fs && !state_ok(*fs, false) &&
        c.fail(ids::kda_chunk_final_state_shape, arg_loc("final_state", ".shape"),
               {{"layout", layout}, {"expected", py_tuple(state)}, {"got", tup(*fs)}}))
      return true;
  }
  if (f.V && !shape_is(a.out, {B, T, HV, *f.V}) &&
      c.fail(ids::kda_chunk_out_shape, arg_loc("out", ".shape"), {{"expected", py_tuple({B, T, HV, *f.V})}, {"got", tup(a.out)}}))
    return true;
  // Float dtypes; initial_state's dtype is upstream's assert (fp32 only), reported above.
  std::array<std::pair<const char*, const TensorView*>, 9> floats = {{{"q", &a.q},
                                                                     {"k", &a.k},
                                                                     {"v", &a.v},
                                                                     {"g", &a.g},
                                                                     {"beta", &a.beta},
                                                                     {"A_log", used_A_log(a)},
                                                                     {"dt_bias", used_dt_bias(a)},
                                                                     {"final_state", written_final_state(a)},
                                                                     {"out", &a.out}}};
  for (auto [name, t] : floats)
    if (t && !is_float_dtype(t->dtype) &&
        c.fail(ids::kda_chunk_float_dtype, arg_loc(name, ".dtype"), {{"name", name}, {"dtype", py_dtype(t->dtype)}}))
      return true;
  // One device: cu_seqlens_cpu is a host copy by design.
  const std::array<std::pair<const char*, const TensorView*>, 10> on_device = {{{"k", &a.k},
                                                                               {"v", &a.v},
                                                                               {"g", &a.g},
                                                                               {"beta", &a.beta},
                                                                               {"initial_state", opt(a.initial_state)},
                                                                               {"cu_seqlens", opt(a.cu_seqlens)},
                                                                               {"A_log", used_A_log(a)},
                                                                               {"dt_bias", used_dt_bias(a)},
                                                                               {"final_state", written_final_state(a)},
                                                                               {"out", &a.out}}};
  for (auto [name, t] : on_device) {
    if (!t || t->device == a.q.device) continue;
    if (c.fail(ids::kda_chunk_same_device, arg_loc(name, ".device"),
               {{"name", name}, {"device", t->device.str()}, {"q_device", a.q.device.str()}}))
      return true;
    break;
  }
  return false;
}

bool extras(const ChunkArgs& a, Checker& c) {
  if (a.scale && !std::isfinite(*a.scale) &&
      c.fail(ids::kda_chunk_scale_not_finite, arg_loc("scale"), {{"scale", py_float(*a.scale)}}))
    return true;
  // The bounded gate's bound; with safe_gate upstream already holds it to [-5, 0).
  if (a.use_gate_in_kernel && !a.safe_gate && a.lower_bound && (!std::isfinite(*a.lower_bound) || *a.lower_bound > 0) &&
      c.fail(ids::kda_chunk_lower_bound_invalid, arg_loc("lower_bound"), {{"lb", py_float(*a.lower_bound)}}))
    return true;
  // Outputs must not share memory with what the recurrence still reads; final_state may alias
  // initial_state (each sequence's state is read before it is written).
  using Named = std::pair<const char*, const TensorView*>;
  const Named ins[] = {{"q", &a.q},          {"k", &a.k},
                       {"v", &a.v},          {"g", &a.g},
                       {"beta", &a.beta},    {"A_log", used_A_log(a)},
                       {"dt_bias", used_dt_bias(a)}, {"cu_seqlens", opt(a.cu_seqlens)},
                       {"cu_seqlens_cpu", opt(a.cu_seqlens_cpu)}, {"initial_state", opt(a.initial_state)},
                       {"final_state", written_final_state(a)}};
  constexpr std::size_t kInputs = 9;  // up to cu_seqlens_cpu
  const Named outs[] = {{"out", &a.out}, {"final_state", written_final_state(a)}};
  for (auto [oname, o] : outs) {
    if (!o) continue;
    const std::size_t count = o == &a.out ? std::size(ins) : kInputs;
    const ByteSpan o_span = byte_span(*o);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [name, t] = ins[i];
      if (t && overlaps(*o, o_span, *t) &&
          c.fail(ids::kda_chunk_out_overlap, arg_loc(oname), {{"name", oname}, {"other", name}}))
        return true;
    }
  }
  return false;
}

bool deep(const ChunkArgs& a, const Facts& f, Checker& c) {
  const bool cu_readable = a.cu_seqlens && f.N && is_integral(a.cu_seqlens->dtype);
  if (cu_readable && f.T) {
    const TensorView cu = readable(*a.cu_seqlens);
    const std::int64_t n = cu.size(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = cu.at_int({i});
      if ((i == 0 && v != 0) || (i > 0 && v < cu.at_int({i - 1})) || (i == n - 1 && v != *f.T)) {
        if (c.fail(ids::kda_chunk_cu_seqlens_values, arg_loc("cu_seqlens", "[" + str(i) + "]"),
                   {{"T", str(*f.T)}, {"i", str(i)}, {"value", str(v)}}))
          return true;
        break;
      }
    }
  }
  // Upstream counts chunks from cu_seqlens_cpu when given and indexes with cu_seqlens.
  if (cu_readable && a.cu_seqlens_cpu) {
    const TensorView cu = readable(*a.cu_seqlens), cpu = readable(*a.cu_seqlens_cpu);
    std::optional<std::string> why;
    if (!same_shape(cpu, cu)) {
      why = "its shape is " + tup(cpu) + ", cu_seqlens' " + tup(cu);
    } else if (!is_integral(cpu.dtype)) {
      why = "its dtype is " + py_dtype(cpu.dtype);
    } else {
      for (std::int64_t i = 0; i < cu.size(0) && !why; ++i)
        if (cpu.at_int({i}) != cu.at_int({i}))
          why = "cu_seqlens_cpu[" + str(i) + "]=" + str(cpu.at_int({i})) + " but cu_seqlens[" + str(i) + "]=" + str(cu.at_int({i}));
    }
    if (why && c.fail(ids::kda_chunk_cu_seqlens_cpu_mismatch, arg_loc("cu_seqlens_cpu"), {{"why", *why}})) return true;
  }
  const std::pair<const char*, const TensorView*> ins[] = {{"q", &a.q},          {"k", &a.k},
                                                           {"v", &a.v},          {"g", &a.g},
                                                           {"beta", &a.beta},    {"A_log", used_A_log(a)},
                                                           {"dt_bias", used_dt_bias(a)}, {"initial_state", opt(a.initial_state)}};
  for (auto [name, t] : ins)
    if (t)
      if (auto hit = first_non_finite(*t);
          hit && c.fail(ids::kda_chunk_non_finite, arg_loc(name, index_str(*hit)), {{"name", name}, {"index", index_str(*hit)}}))
        return true;
  // safe_gate's sub-chunk kernel exponentiates gate sums relative to a mid-sub-chunk token
  // (chunk_intra.py, chunk_kda_fwd_kernel_intra_sub_chunk); the bounded gate keeps them in range,
  // a precomputed g has to.
  if (a.safe_gate && !a.use_gate_in_kernel && is_floating(a.g.dtype) && a.g.data) {
    const TensorView g = readable(a.g);
    std::optional<std::vector<std::int64_t>> hit;
    double value = 0;
    for_each_index(g.shape(), [&](std::span<const std::int64_t> idx) {
      if (hit) return;
      const double x = g.load(idx);
      if (std::isfinite(x) && (x < -5 || x > 0)) hit.emplace(idx.begin(), idx.end()), value = x;
    });
    if (hit && c.fail(ids::kda_chunk_safe_gate_g_range, arg_loc("g", index_str(*hit)),
                      {{"index", index_str(*hit)}, {"value", py_float(value)}}))
      return true;
  }
  return false;
}

void chunk_contract(const ChunkArgs& a, Checker& c) {
  Facts f;
  if (upstream_walk(a, c, f) || !f.B) return;
  if (structural(a, c, f) || !c.extra()) return;
  if (extras(a, c)) return;
  if (c.deep()) deep(a, f, c);
}

}  // namespace

std::vector<Diagnostic> validate_chunk(const ChunkArgs& a, const ValidateOptions& o) {
  return run_validate<ChunkArgs>(kChunkOp, &chunk_contract, a, o);
}
std::vector<Diagnostic> check_chunk(const ChunkArgs& a, const ValidateOptions& o) {
  return run_check<ChunkArgs>(kChunkOp, &chunk_contract, a, o);
}
Status try_check_chunk(const ChunkArgs& a, const ValidateOptions& o) noexcept {
  return run_status<ChunkArgs>(kChunkOp, &chunk_contract, a, o);
}

ChunkDims chunk_dims(const ChunkArgs& a) {
  Checker c(kChunkOp, Checker::Mode::first_error, ValidateOptions::upstream());
  Facts f;
  if (!upstream_walk(a, c, f) && f.B) structural(a, c, f);
  if (c.has_error() || !f.V || !f.N) throw std::invalid_argument("chunk_dims: the arguments do not pass the contract");
  return {*f.B, *f.T, *f.N, *f.H, *f.HV, *f.K, *f.V, f.state_v_first};
}

ChunkArgs chunk_args(const ArgBag& bag) {
  ChunkArgs a;
  a.q = bag.required("q");
  a.k = bag.required("k");
  a.v = bag.required("v");
  a.g = bag.required("g");
  a.beta = bag.required("beta");
  const auto tensor = [&](const char* name) -> std::optional<TensorView> {
    if (const TensorView* t = bag.tensor(name)) return *t;
    return std::nullopt;
  };
  a.scale = bag.scalar("scale");
  a.initial_state = tensor("initial_state");
  a.output_final_state = bag.flag("output_final_state");
  a.use_qk_l2norm_in_kernel = bag.flag("use_qk_l2norm_in_kernel");
  a.use_gate_in_kernel = bag.flag("use_gate_in_kernel");
  a.use_beta_sigmoid_in_kernel = bag.flag("use_beta_sigmoid_in_kernel");
  a.allow_neg_eigval = bag.flag("allow_neg_eigval");
  a.safe_gate = bag.flag("safe_gate");
  a.lower_bound = bag.scalar("lower_bound");
  a.disable_recompute = bag.flag("disable_recompute");
  a.return_intermediate_states = bag.flag("return_intermediate_states");
  a.state_v_first = bag.flag("state_v_first");
  a.cu_seqlens = tensor("cu_seqlens");
  a.cu_seqlens_cpu = tensor("cu_seqlens_cpu");
  a.A_log = tensor("A_log");
  a.dt_bias = tensor("dt_bias");
  a.chunk_size = bag.scalar("chunk_size");
  if (auto it = bag.flags.find("transpose_state_layout"); it != bag.flags.end()) a.transpose_state_layout = it->second;
  if (const TensorView* out = bag.tensor("out")) {
    a.out = *out;
  } else if (const TensorView* o = bag.tensor("o")) {
    a.out = *o;
  } else {
    throw std::invalid_argument("missing required argument `out` (or `o`)");
  }
  a.final_state = tensor("final_state");
  return a;
}

}  // namespace kparity::kda
