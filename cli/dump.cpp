// Dump → ArgBag, per the convention in dump.hpp.
#include "dump.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kparity/reference/kda.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::cli {
namespace {

using reference::Precision;

bool has(const ArgBag& bag, std::string_view name) { return bag.tensors.count(std::string(name)) != 0; }

// Adds a zero tensor under `name` unless the dump has one.
void provide(ArgBag& bag, std::map<std::string, Tensor>& owned, const std::string& name, DType t, Shape shape) {
  if (has(bag, name)) return;
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

const std::vector<OpRunner>& runners() {
  static const std::vector<OpRunner> table = {
      {kda::kRecurrentOp,
       {"q", "k", "v", "g", "a", "dt_bias", "A_log", "beta", "initial_state", "final_state", "out", "cu_seqlens"},
       {"out", "final_state"},
       {"out", "final_state"},
       &allocate_recurrent,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::recurrent(kda::recurrent_args(b), p, o);
       }},
      {kda::kPackedDecodeOp,
       {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "out", "ssm_state_indices"},
       {"out", "initial_state"},
       {"out"},
       &allocate_decode,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::packed_decode(kda::packed_decode_args(b), p, o);
       }},
      {kda::kReplaySsmDecodeOp,
       {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "d_cache", "k_cache", "g_cache", "out",
        "ssm_state_indices", "write_pos", "force_flush"},
       {"out", "initial_state", "d_cache", "k_cache", "g_cache"},
       {"out"},
       &allocate_decode,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::kda::replayssm_decode(kda::replayssm_decode_args(b), p, o);
       }},
      {sparse::kPagedPrefillOp,
       {"q", "unified_kv", "kv_indices_prefix", "kv_indptr_prefix", "kv", "kv_indices_extend", "kv_indptr_extend",
        "attn_sink", "out", "lse"},
       {"out", "lse"},
       {"out", "lse"},
       &allocate_sparse,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::sparse::paged_prefill(sparse::paged_prefill_args(b), p, o);
       }},
      {sparse::kPagedDecodeOp,
       {"q", "unified_kv", "kv_indices", "kv_indptr", "attn_sink", "out", "lse"},
       {"out", "lse"},
       {"out", "lse"},
       &allocate_sparse,
       [](const ArgBag& b, Precision p, const ValidateOptions& o) {
         reference::sparse::paged_decode(sparse::paged_decode_args(b), p, o);
       }},
  };
  return table;
}

// Dump names for kda/recurrent that differ from the ArgBag's (issue 3 spelling): `o` is the
// output, `use_qk_l2norm` the flag; `b` (beta as logits) is handled where tensors are read.
std::string canonical_name(std::string_view op, const std::string& name) {
  if (op == kda::kRecurrentOp && name == "o") return "out";
  if (op == kda::kRecurrentOp && name == "use_qk_l2norm") return "use_qk_l2norm_in_kernel";
  return name;
}

// "true"/"false" → flag, a decimal → scalar, "None" → absent. Anything else is an error.
void add_metadata(ArgBag& bag, const std::string& key, const std::string& value) {
  if (value == "None" || value == "none") return;
  if (value == "true" || value == "True") {
    bag.flags[key] = true;
    return;
  }
  if (value == "false" || value == "False") {
    bag.flags[key] = false;
    return;
  }
  errno = 0;
  char* end = nullptr;
  double d = std::strtod(value.c_str(), &end);  // accepts inf, -inf, nan
  if (value.empty() || end != value.c_str() + value.size() || errno == ERANGE) {
    throw DumpError(fmt::format(
        "__metadata__[\"{}\"] = \"{}\" is neither a decimal number nor true/false (write scalars with str(x), "
        "flags as \"true\"/\"false\", absent ones as \"None\")",
        key, value));
  }
  bag.scalars[key] = d;
}

}  // namespace

const OpRunner* find_runner(std::string_view op) {
  for (const auto& r : runners())
    if (r.op == op) return &r;
  return nullptr;
}

std::string known_ops() {
  std::string s;
  for (const auto& r : runners()) s += fmt::format("{}{}", s.empty() ? "" : ", ", r.op);
  return s;
}

Dump load_dump(const std::string& path) {
  Dump d;
  d.file = read_safetensors(path);
  auto op_it = d.file.metadata.find("op");
  if (op_it == d.file.metadata.end())
    throw DumpError(fmt::format("{}: __metadata__ has no \"op\" (one of {})", path, known_ops()));
  d.runner = find_runner(op_it->second);
  if (!d.runner)
    throw DumpError(fmt::format("{}: unknown op \"{}\" (known: {})", path, op_it->second, known_ops()));
  const std::string_view op = d.runner->op;

  for (const auto& [key, value] : d.file.metadata) {
    if (key == "op" || key == "format" || key.rfind("kparity.", 0) == 0) continue;
    add_metadata(d.bag, canonical_name(op, key), value);
  }

  std::map<std::string, const Tensor*> expected_raw;
  for (auto& [name, tensor] : d.file.tensors) {
    if (name.rfind("expected.", 0) == 0) {
      expected_raw[canonical_name(op, name.substr(9))] = &tensor;
      continue;
    }
    std::string arg = canonical_name(op, name);
    if (op == kda::kRecurrentOp && arg == "b") {
      if (d.file.tensors.count("beta"))
        throw DumpError("kda/recurrent: the dump has both `beta` (probabilities) and `b` (logits); keep one");
      arg = "beta";
      d.bag.flags["beta_is_logits"] = true;
    }
    const auto& args = d.runner->arguments;
    if (std::find(args.begin(), args.end(), arg) == args.end())
      d.warnings.push_back(fmt::format("tensor `{}` is not an argument of {}; ignored", name, op));
    else
      d.bag.tensors[arg] = tensor.view();
  }
  d.runner->allocate(d.bag, d.allocated);

  for (const auto& [name, tensor] : expected_raw) {
    const auto& w = d.runner->written;
    if (std::find(w.begin(), w.end(), name) == w.end())
      throw DumpError(fmt::format("expected.{}: {} writes no tensor `{}` (it writes: {})", name, op, name,
                                  fmt::join(w, ", ")));
    d.expected[name] = tensor;
  }
  return d;
}

}  // namespace kparity::cli
