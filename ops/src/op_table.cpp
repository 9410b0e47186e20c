// The op table (op_table.hpp): one row per op. Positional orders are upstream's signatures as the
// specs give them (kda.md B.1/B.2.1, sparse_attention.md A.2/F.0); kda/recurrent has no upstream
// wrapper and follows flash-linear-attention's fused_recurrent_kda (fla/ops/kda/fused_recurrent.py);
// kda/chunk is fla's chunk_kda (fla/ops/kda/chunk.py).
#include "kparity/ops/op_table.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/reference/kda.hpp"
#include "kparity/reference/kda_chunk.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::ops {
namespace {

using reference::Precision;
constexpr ArgKind T = ArgKind::tensor;
constexpr ArgKind S = ArgKind::scalar;
constexpr ArgKind F = ArgKind::flag;

bool has(const ArgBag& bag, std::string_view name) { return bag.tensors.count(std::string(name)) != 0; }

// Set while output_views() runs the allocate functions: provide() then records each output as a view
// without storage instead of allocating it, so the allocate functions stay the one derivation of
// upstream's output shapes for both uses.
thread_local std::map<std::string, TensorView>* views_only = nullptr;

// Adds a zero tensor under `name` unless the bag has one.
void provide(ArgBag& bag, std::map<std::string, Tensor>& owned, const std::string& name, DType t, Shape shape) {
  if (has(bag, name)) return;
  if (views_only) {
    const TensorView v(nullptr, t, std::span<const std::int64_t>(shape));
    views_only->insert_or_assign(name, v);
    bag.tensors[name] = v;
    return;
  }
  auto [it, _] = owned.insert_or_assign(name, Tensor(t, std::move(shape)));
  bag.tensors[name] = it->second.view();
}

// out [T, HV, V] like v; final_state [N, HV, V, K] like initial_state (fp32 without one).
void allocate_recurrent(ArgBag& bag, std::map<std::string, Tensor>& owned) {
  const TensorView* q = bag.tensor("q");
  const TensorView* v = bag.tensor("v");
  if (!v) return;
  provide(bag, owned, "out", v->dtype, v->shape());  // like fla's empty_like(v)
  if (!q || q->ndim() != 3 || v->ndim() != 3) return;
  std::int64_t n = 1;
  if (const TensorView* cu = bag.tensor("cu_seqlens")) {
    if (cu->ndim() != 1 || cu->size(0) < 1) return;
    n = cu->size(0) - 1;
  }
  const TensorView* s0 = bag.tensor("initial_state");
  provide(bag, owned, "final_state", s0 ? s0->dtype : DType::f32, {n, v->size(1), v->size(2), q->size(2)});
}

// chunk_kda's returns: o [B, T, HV, V] in q's dtype (`o.type_as(q)`); with output_final_state an
// fp32 final state [N, HV, K, V] ([N, HV, V, K] with state_v_first), as chunk_delta_h.py allocates it.
void allocate_chunk(ArgBag& bag, std::map<std::string, Tensor>& owned) {
  const TensorView* q = bag.tensor("q");
  const TensorView* v = bag.tensor("v");
  if (!q || !v) return;
  provide(bag, owned, "out", q->dtype, v->shape());  // v's shape, so a malformed v reaches its own check
  if (!bag.flag("output_final_state") || q->ndim() != 4 || v->ndim() != 4) return;
  std::int64_t n = q->size(0);
  if (const TensorView* cu = bag.tensor("cu_seqlens")) {
    if (cu->ndim() != 1 || cu->size(0) < 1) return;
    n = cu->size(0) - 1;
  }
  const auto layout = bag.flags.find("transpose_state_layout");
  const bool v_first = layout != bag.flags.end() ? layout->second : bag.flag("state_v_first");
  const std::int64_t K = q->size(3), V = v->size(3);
  provide(bag, owned, "final_state", DType::f32, {n, v->size(2), v_first ? V : K, v_first ? K : V});
}

// out [B, 1, HV, V] like mixed_qkv (sglang allocates it that way).
void allocate_decode(ArgBag& bag, std::map<std::string, Tensor>& owned) {
  const TensorView* x = bag.tensor("mixed_qkv");
  const TensorView* s = bag.tensor("initial_state");
  if (!x || !s || x->ndim() < 1 || s->ndim() != 4) return;
  provide(bag, owned, "out", x->dtype, {x->size(0), 1, s->size(1), s->size(2)});
}

// out like q (upstream's empty_like, so a malformed q still reaches its own check); lse [T, H] fp32
// when return_lse.
void allocate_sparse(ArgBag& bag, std::map<std::string, Tensor>& owned) {
  const TensorView* q = bag.tensor("q");
  if (!q) return;
  provide(bag, owned, "out", q->dtype, q->shape());
  if (bag.flag("return_lse") && q->ndim() >= 2) provide(bag, owned, "lse", DType::f32, {q->size(0), q->size(1)});
}

// The decode ops' shared head: sglang's packed decode signature, ReplaySSM's first eleven.
std::vector<Param> decode_params(std::vector<Param> between_state_and_out, std::vector<Param> after_indices) {
  std::vector<Param> p = {{"mixed_qkv", T}, {"a", T}, {"b", T}, {"A_log", T}, {"dt_bias", T}, {"scale", S},
                          {"initial_state", T}};
  p.insert(p.end(), between_state_and_out.begin(), between_state_and_out.end());
  p.push_back({"out", T});
  p.push_back({"ssm_state_indices", T});
  p.insert(p.end(), after_indices.begin(), after_indices.end());
  p.push_back({"use_qk_l2norm_in_kernel", F, "False"});
  p.push_back({"lower_bound", S, "None"});
  return p;
}

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> rows = {
      {kda::kRecurrentOp,
       "fla.ops.kda.fused_recurrent_kda",
       // fla's positional order (its output_final_state switch included: kparity writes
       // final_state whenever the tensor is passed), then kparity's gate, beta and output extras.
       {{"q", T},
        {"k", T},
        {"v", T},
        {"g", T, "None"},
        {"beta", T, "None"},
        {"scale", S, "None"},
        {"initial_state", T, "None"},
        {"output_final_state", F, "False"},
        {"use_qk_l2norm_in_kernel", F, "False"},
        {"cu_seqlens", T, "None"},
        {"a", T, "None", true},
        {"dt_bias", T, "None", true},
        {"A_log", T, "None", true},
        {"lower_bound", S, "None", true},
        {"beta_is_logits", F, "False", true},
        {"out", T, "None", true},
        {"final_state", T, "None", true}},
       {{"out", true}, {"final_state", true}},
       {{"o", "out"}, {"use_qk_l2norm", "use_qk_l2norm_in_kernel"}, {"b", "beta", "beta_is_logits", "probabilities", "logits"}},
       &allocate_recurrent,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::recurrent(kda::recurrent_args(b), p, o);
       }},
      {kda::kChunkOp,
       "fla.ops.kda.chunk_kda",
       // chunk_kda's positional order (cp_context, the 20th, is not modelled: context parallelism
       // spans devices), then the **kwargs it reads (A_log, dt_bias, chunk_size and the deprecated
       // transpose_state_layout), then the outputs it returns, o and final_state.
       {{"q", T},
        {"k", T},
        {"v", T},
        {"g", T},
        {"beta", T},
        {"scale", S, "None"},
        {"initial_state", T, "None"},
        {"output_final_state", F, "False"},
        {"use_qk_l2norm_in_kernel", F, "False"},
        {"use_gate_in_kernel", F, "False"},
        {"use_beta_sigmoid_in_kernel", F, "False"},
        {"allow_neg_eigval", F, "False"},
        {"safe_gate", F, "False"},
        {"lower_bound", S, "None"},
        {"disable_recompute", F, "False"},
        {"return_intermediate_states", F, "False"},
        {"state_v_first", F, "False"},
        {"cu_seqlens", T, "None"},
        {"cu_seqlens_cpu", T, "None"},
        {"A_log", T, "None", true},
        {"dt_bias", T, "None", true},
        {"chunk_size", S, "64", true},
        {"transpose_state_layout", F, "None", true},
        {"out", T, "None", true},
        {"final_state", T, "None", true}},
       {{"out", true}, {"final_state", true, "output_final_state"}},
       {{"o", "out"}},
       &allocate_chunk,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) { reference::kda::chunk(kda::chunk_args(b), p, o); }},
      {kda::kPackedDecodeOp,
       "sglang helion_fused_recurrent_kda_packed_decode",
       decode_params({}, {}),
       {{"out", true}, {"initial_state"}},
       {},
       &allocate_decode,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::packed_decode(kda::packed_decode_args(b), p, o);
       }},
      {kda::kReplaySsmDecodeOp,
       "sglang helion_fused_recurrent_kda_replayssm_decode",
       [] {
         auto p = decode_params({{"d_cache", T}, {"k_cache", T}, {"g_cache", T}},
                                {{"write_pos", T}, {"force_flush", T, "None"}});
         // Not upstream (spec A.4 item 6): fp32 beta, for parity with the packed decode.
         p.push_back({"beta_in_fp32", F, "False", true});
         return p;
       }(),
       {{"out", true}, {"initial_state"}, {"d_cache"}, {"k_cache"}, {"g_cache"}},
       {},
       &allocate_decode,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::replayssm_decode(kda::replayssm_decode_args(b), p, o);
       }},
      {sparse::kPagedPrefillOp,
       "sglang sparse_attn_v4_paged_prefill",
       {{"q", T},
        {"unified_kv", T},
        {"kv_indices_prefix", T},
        {"kv_indptr_prefix", T},
        {"kv", T},
        {"kv_indices_extend", T},
        {"kv_indptr_extend", T},
        {"attn_sink", T},
        {"softmax_scale", S},
        {"return_lse", F, "False", true},
        {"replicated_logit_shift", S, "0.0", true},
        {"out", T, "None", true},
        {"lse", T, "None", true}},
       {{"out", true}, {"lse", true, "return_lse"}},
       {},
       &allocate_sparse,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::sparse::paged_prefill(sparse::paged_prefill_args(b), p, o);
       }},
      {sparse::kPagedDecodeOp,
       // kv_scales (fp8 KV, the seventh positional parameter upstream) is not modelled.
       "sglang sparse_attn_v4_paged_decode",
       {{"q", T},
        {"unified_kv", T},
        {"kv_indices", T},
        {"kv_indptr", T},
        {"attn_sink", T},
        {"softmax_scale", S},
        {"return_lse", F, "False", true},
        {"out", T, "None", true},
        {"lse", T, "None", true}},
       {{"out", true}, {"lse", true, "return_lse"}},
       {},
       &allocate_sparse,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::sparse::paged_decode(sparse::paged_decode_args(b), p, o);
       }},
  };
  return rows;
}

}  // namespace

const Param* OpInfo::param(std::string_view name) const {
  for (const auto& p : params)
    if (p.name == name) return &p;
  return nullptr;
}

std::vector<std::string_view> OpInfo::names(ArgKind kind) const {
  std::vector<std::string_view> out;
  for (const auto& p : params)
    if (p.kind == kind) out.push_back(p.name);
  return out;
}

std::vector<std::string_view> OpInfo::positional() const {
  std::vector<std::string_view> out;
  for (const auto& p : params)
    if (!p.keyword_only) out.push_back(p.name);
  return out;
}

std::vector<std::string_view> OpInfo::written_names() const {
  std::vector<std::string_view> out;
  for (const auto& w : written) out.push_back(w.name);
  return out;
}

std::vector<std::string_view> OpInfo::pure_outputs() const {
  std::vector<std::string_view> out;
  for (const auto& w : written)
    if (w.pure) out.push_back(w.name);
  return out;
}

bool OpInfo::writes(std::string_view name) const {
  return std::any_of(written.begin(), written.end(), [&](const Output& w) { return w.name == name; });
}

std::vector<std::string> OpInfo::written_by(const ArgBag& bag) const {
  std::vector<std::string> out;
  for (const auto& w : written) {
    if (!w.only_if.empty() && !bag.flag(w.only_if)) continue;
    if (has(bag, w.name)) out.emplace_back(w.name);
  }
  return out;
}

const std::vector<OpInfo>& op_table() { return table(); }

const OpInfo* find_op(std::string_view op) {
  for (const auto& r : table())
    if (r.op == op) return &r;
  return nullptr;
}

std::string known_ops() {
  std::string s;
  for (const auto& r : table()) s += fmt::format("{}{}", s.empty() ? "" : ", ", r.op);
  return s;
}

const OpInfo& op_info(std::string_view op) {
  if (const OpInfo* r = find_op(op)) return *r;
  throw std::invalid_argument(fmt::format("unknown op '{}' (known: {})", op, known_ops()));
}

void run_reference(std::string_view op, const ArgBag& bag, reference::Precision p, const ValidateOptions& o) {
  const OpInfo* r = find_op(op);
  if (r == nullptr) throw std::invalid_argument("no reference for op '" + std::string(op) + "'");
  r->run(bag, p, o);
}

void allocate_outputs(std::string_view op, ArgBag& bag, std::map<std::string, Tensor>& owned) {
  op_info(op).allocate(bag, owned);
}

std::map<std::string, TensorView> output_views(std::string_view op, const ArgBag& bag) {
  const OpInfo& info = op_info(op);
  std::map<std::string, TensorView> views;
  ArgBag scratch = bag;
  std::map<std::string, Tensor> none;
  struct Reset {
    ~Reset() { views_only = nullptr; }
  } reset;
  views_only = &views;
  info.allocate(scratch, none);
  return views;
}

}  // namespace kparity::ops
