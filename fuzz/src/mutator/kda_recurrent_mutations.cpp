// Mutations of the kda/recurrent checks (diagnostics/contracts/kda_recurrent.cpp).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "table.hpp"

namespace kparity::fuzz::detail {
namespace {

struct Rec {
  std::int64_t T = 0, H = 0, K = 0, HV = 0, V = 0, N = 1;
};

Rec rec(const Mutant& m) {
  Rec d;
  d.T = dim(m, "q", 0), d.H = dim(m, "q", 1), d.K = dim(m, "q", 2);
  d.HV = dim(m, "v", 1), d.V = dim(m, "v", 2);
  if (has(m, "cu_seqlens")) d.N = view(m, "cu_seqlens").numel() - 1;
  return d;
}

void ensure_cu_seqlens(Mutant& m) {
  if (!has(m, "cu_seqlens")) make(m, "cu_seqlens", DType::i32, {2}, {0.0, static_cast<double>(dim(m, "q", 0))});
}

}  // namespace

void add_kda_recurrent_mutations(Table& t) {
  // diagnostics/contracts/kda_recurrent.cpp items 1-18, then the kparity extras and deep checks.
  const auto R = ops({kRecurrent});
  t.add(ids::kda_recurrent_q_shape, R, K::rank, "q [T, H, K] -> [T, H*K]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "q", {d.T, d.H * d.K});
    return true;
  });
  t.add(ids::kda_recurrent_k_shape, R, K::shape, "k's T, H or K one larger than q's", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    Shape s{d.T, d.H, d.K};
    ++s[static_cast<std::size_t>(p.below(3))];
    reshape(m, "k", s);
    return true;
  });
  t.add(ids::kda_recurrent_v_shape, R, K::shape, "v gets T+1 tokens or loses a dim", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    if (p.below(2) == 0) reshape(m, "v", {d.T + 1, d.HV, d.V});
    else reshape(m, "v", {d.T, d.HV * d.V});
    return true;
  });
  t.add(ids::kda_recurrent_head_dims, R, K::shape, "q and k with K = 0, or v with V = 0", [](Mutant& m, Pick& p) {
    const Rec d = rec(m);
    if (p.below(2) == 0) {
      reshape(m, "q", {d.T, d.H, 0});
      reshape(m, "k", {d.T, d.H, 0});
    } else {
      reshape(m, "v", {d.T, d.HV, 0});
    }
    return true;
  });
  t.add(ids::kda_recurrent_head_ratio, R, K::shape, "q and k with HV+1 heads (more than v)", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "q", {d.T, d.HV + 1, d.K});
    reshape(m, "k", {d.T, d.HV + 1, d.K});
    return true;
  });
  t.add(ids::kda_recurrent_gate_form, R, K::absent, "a gate input removed (A_log, dt_bias, a, or g)", [](Mutant& m, Pick& p) {
    if (has(m, "g")) {
      m.call.tensors.erase("g");
    } else {
      static const std::vector<std::string> raw = {"a", "dt_bias", "A_log"};
      m.call.tensors.erase(one_of(raw, p));
    }
    return true;
  });
  t.add(ids::kda_recurrent_g_shape, R, K::shape, "g's K one larger (precomputed-gate calls)", [](Mutant& m, Pick&) {
    if (!has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "g", {d.T, d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_a_shape, R, K::shape, "a's K one larger (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "a", {d.T, d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_dt_bias_shape, R, K::shape, "dt_bias [HV, K+1] (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    const Rec d = rec(m);
    reshape(m, "dt_bias", {d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_recurrent_a_log_shape, R, K::shape, "A_log gets HV+1 entries (raw-gate calls)", [](Mutant& m, Pick&) {
    if (has(m, "g")) return false;
    reshape(m, "A_log", {rec(m).HV + 1});
    return true;
  });
  t.add(ids::kda_recurrent_beta_shape, R, K::shape, "beta [T, HV+1]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "beta", {d.T, d.HV + 1});
    return true;
  });
  t.add(ids::kda_recurrent_cu_seqlens_shape, R, K::rank, "cu_seqlens 2-D (added when absent)", [](Mutant& m, Pick&) {
    ensure_cu_seqlens(m);
    reshape(m, "cu_seqlens", {1, view(m, "cu_seqlens").numel()});
    return true;
  });
  t.add(ids::kda_recurrent_cu_seqlens_dtype, R, K::dtype, "cu_seqlens float32 (added when absent)", [](Mutant& m, Pick&) {
    ensure_cu_seqlens(m);
    retype(m, "cu_seqlens", DType::f32);
    return true;
  });
  t.add(ids::kda_recurrent_initial_state_shape, R, K::shape, "initial_state for N+1 sequences (added when absent)",
        [](Mutant& m, Pick&) {
          const Rec d = rec(m);
          if (has(m, "initial_state")) reshape(m, "initial_state", {d.N + 1, d.HV, d.V, d.K});
          else make(m, "initial_state", DType::f32, {d.N + 1, d.HV, d.V, d.K}, {});
          return true;
        });
  t.add(ids::kda_recurrent_final_state_shape, R, K::shape, "final_state for N+1 sequences (added when absent)",
        [](Mutant& m, Pick&) {
          const Rec d = rec(m);
          if (has(m, "final_state")) reshape(m, "final_state", {d.N + 1, d.HV, d.V, d.K});
          else make(m, "final_state", DType::f32, {d.N + 1, d.HV, d.V, d.K}, {});
          return true;
        });
  t.add(ids::kda_recurrent_out_shape, R, K::shape, "out [T, HV, V+1]", [](Mutant& m, Pick&) {
    const Rec d = rec(m);
    reshape(m, "out", {d.T, d.HV, d.V + 1});
    return true;
  });
  t.add(ids::kda_recurrent_float_dtype, R, K::dtype, "beta or out becomes int32", [](Mutant& m, Pick& p) {
    retype(m, p.below(2) ? "beta" : "out", DType::i32);
    return true;
  });
  t.add(ids::kda_recurrent_same_device, R, K::device, "one tensor other than q on the CPU", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : m.call.tensors)
      if (name != "q") names.push_back(name);
    m.devices[one_of(names, p)] = Device::cpu();
    return true;
  });
  t.add(ids::kda_recurrent_scale_not_finite, R, K::scalar, "scale = inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["scale"] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(ids::kda_recurrent_lower_bound_invalid, R, K::scalar, "lower_bound = 0.5, inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["lower_bound"] = one_of(std::vector<double>{0.5, kInf, kNaN}, p);
    return true;
  });
  t.add(ids::kda_recurrent_out_overlap, R, K::alias, "out aliases q, k, v or beta", [](Mutant& m, Pick& p) {
    return alias_one_of(m, "out", {"q", "k", "v", "beta"}, p);
  });
  t.add(ids::kda_recurrent_cu_seqlens_values, R, K::index_value, "cu_seqlens ends at T+1 or starts at 1 (added when absent)",
        [](Mutant& m, Pick& p) {
          ensure_cu_seqlens(m);
          const std::int64_t n = view(m, "cu_seqlens").numel();
          if (p.below(2) == 0) set(m, "cu_seqlens", n - 1, static_cast<double>(rec(m).T + 1));
          else set(m, "cu_seqlens", 0, 1.0);
          return true;
        });
  t.add(ids::kda_recurrent_non_finite, R, K::value, "a NaN or Inf in q, k or v", [](Mutant& m, Pick& p) {
    static const std::vector<std::string> names = {"q", "k", "v"};
    const std::string& name = one_of(names, p);
    const std::int64_t n = view(m, name).numel();
    if (n == 0) return false;
    set(m, name, p.below(n), one_of(std::vector<double>{kNaN, kInf, -kInf}, p));
    return true;
  });
}

}  // namespace kparity::fuzz::detail
