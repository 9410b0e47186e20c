// Knobs every op has (campaign/explain.hpp): the layout of each tensor the op reads (contiguous or
// not) and whether special values are present; and knobs_for, which picks an op family's knobs.
#include <algorithm>
#include <cmath>
#include <memory>

#include "explain_knobs.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"

namespace kparity::fuzz {
namespace explain_detail {

std::string describe_variant(const std::string& base) { return base.empty() ? "explain variant" : "explain variant of: " + base; }

namespace {

bool plain(const Tensor& t) { return t.view().is_contiguous() && t.storage_offset() == 0; }

bool is_float(DType d) { return d == DType::f32 || d == DType::bf16 || d == DType::f16; }

bool any_special(const Tensor& t) {
  bool special = false;
  for_each_element(t.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
    special = special || !std::isfinite(t.view().load(i));
  });
  return special;
}

}  // namespace

std::vector<Knob> generic_knobs(const Call& call, std::uint64_t /*seed*/, const Focus& /*focus*/) {
  std::vector<Knob> out;
  // The trials outlive this function: they hold their own copy of the call.
  const auto base = std::make_shared<const Call>(call);
  const auto written = [base](const std::string& n) {
    return std::find(base->written.begin(), base->written.end(), n) != base->written.end();
  };
  // KDA ops have one `layout` knob instead, as their call description has (explain_kda_shape.cpp).
  const bool kda = call.op.rfind("kda/", 0) == 0;
  for (const auto& [name, t] : call.tensors) {
    if (kda || t.view().rank == 0 || t.view().numel() == 0) continue;
    Knob k;
    k.name = name + " layout";
    k.value = plain(t) ? "contiguous" : "strided";
    const std::string n = name;
    if (!plain(t)) {
      k.trials.push_back({"contiguous", [base, n]() -> std::optional<Call> {
                            Call c = *base;
                            c.tensors[n] = c.at(n).clone_contiguous();
                            c.description = describe_variant(base->description);
                            return c;
                          }});
    } else if (!written(name)) {
      // Written tensors keep their layout: the op may require it (a state pool laid out by the caller).
      for (std::uint64_t choice : {0u, 2u})
        k.trials.push_back({choice == 0 ? "padded" : "col-strided", [base, n, choice]() -> std::optional<Call> {
                              Call c = *base;
                              c.tensors[n] = sparse_fuzz::other_layout(c.at(n), choice);
                              c.description = describe_variant(base->description);
                              return c;
                            }});
    }
    if (!k.trials.empty()) out.push_back(std::move(k));
  }
  // Switches that change the arithmetic, not the tensors the op writes (a variant the contract
  // refuses is skipped, never run).
  for (const char* flag : {"use_qk_l2norm_in_kernel", "beta_is_logits", "allow_neg_eigval", "disable_recompute", "beta_in_fp32"}) {
    const auto it = call.flags.find(flag);
    // ReplaySSM without beta_in_fp32 rounds beta through b's dtype: the flag's false.
    const bool implied = std::string_view(flag) == "beta_in_fp32" && call.op == "kda/replayssm_decode";
    if (it == call.flags.end() && !implied) continue;
    const bool now = it != call.flags.end() && it->second;
    Knob k{flag, now ? "true" : "false", false, 0, {}};
    const bool v = !now;
    k.trials.push_back({v ? "true" : "false", [base, flag = std::string(flag), v]() -> std::optional<Call> {
                          Call c = *base;
                          c.flags[flag] = v;
                          c.description = describe_variant(base->description);
                          return c;
                        }});
    out.push_back(std::move(k));
  }
  if (call.op == "kda/chunk") {
    const auto it = call.scalars.find("chunk_size");
    const int cs = it != call.scalars.end() && it->second > 0 ? static_cast<int>(it->second) : 64;
    Knob k{"chunk_size", std::to_string(cs), false, 0, {}};
    for (int v : {32, 64})
      if (v != cs)
        k.trials.push_back({std::to_string(v), [base, v]() -> std::optional<Call> {
                              Call c = *base;
                              c.scalars["chunk_size"] = v;
                              c.description = describe_variant(base->description);
                              return c;
                            }});
    out.push_back(std::move(k));
  }
  bool special = false;
  for (const auto& [name, t] : call.tensors)
    if (!written(name) && is_float(t.dtype()) && any_special(t)) special = true;
  if (special) {
    Knob k{"special values", "yes", false, 0, {}};
    k.trials.push_back({"no", [base, written]() -> std::optional<Call> {
                          Call c = *base;
                          for (auto& [name, t] : c.tensors) {
                            if (written(name) || !is_float(t.dtype())) continue;
                            const TensorView v = t.view();
                            for_each_element(v, [&](std::span<const std::int64_t> i, std::int64_t) {
                              if (!std::isfinite(v.load(i))) v.store(i, 0.5);
                            });
                          }
                          c.description = describe_variant(base->description);
                          return c;
                        }});
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace explain_detail

std::vector<Knob> knobs_for(const Call& call, std::uint64_t seed, const nlohmann::json& provenance) {
  explain_detail::Focus focus;
  if (provenance.is_object()) {
    focus.token = provenance.value("token", std::int64_t{0});
    focus.head = provenance.value("head", std::int64_t{0});
    focus.tensor = provenance.value("tensor", std::string());
    focus.row = provenance.value("row", provenance.value("sequence", std::int64_t{0}));
  }
  if (call.op.rfind("sparse/", 0) == 0) return explain_detail::sparse_knobs(call, seed, focus);
  std::vector<Knob> knobs = explain_detail::kda_sequence_knobs(call, seed, focus);
  for (auto& k : explain_detail::kda_shape_knobs(call, seed, focus)) knobs.push_back(std::move(k));
  for (auto& k : explain_detail::generic_knobs(call, seed, focus)) knobs.push_back(std::move(k));
  return knobs;
}

}  // namespace kparity::fuzz
