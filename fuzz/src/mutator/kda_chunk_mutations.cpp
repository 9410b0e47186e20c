// Mutations of the kda/chunk checks (diagnostics/contracts/kda_chunk.cpp), in its order: chunk_kda's
// wrapper walk, kparity's structural checks, then the extra and deep ones.
#include "kparity/diagnostics/catalog_ids.hpp"
#include "table.hpp"

namespace kparity::fuzz::detail {
namespace {

constexpr std::string_view kChunk = "kda/chunk";

struct Chunk {
  std::int64_t B = 0, T = 0, H = 0, K = 0, HV = 0, V = 0, N = 0;
  bool varlen = false, v_first = false, gate = false;
  // The state shape of this call, with `dhv` added to HV.
  Shape state(std::int64_t dhv = 0) const { return v_first ? Shape{N, HV + dhv, V, K} : Shape{N, HV + dhv, K, V}; }
};

bool flag(const Mutant& m, const char* name) {
  auto it = m.call.flags.find(name);
  return it != m.call.flags.end() && it->second;
}

Chunk chunk(const Mutant& m) {
  Chunk d;
  d.B = dim(m, "q", 0), d.T = dim(m, "q", 1), d.H = dim(m, "q", 2), d.K = dim(m, "q", 3);
  d.HV = dim(m, "v", 2), d.V = dim(m, "v", 3);
  d.varlen = has(m, "cu_seqlens");
  d.N = d.varlen ? view(m, "cu_seqlens").numel() - 1 : d.B;
  auto t = m.call.flags.find("transpose_state_layout");
  d.v_first = t != m.call.flags.end() ? t->second : flag(m, "state_v_first");
  d.gate = flag(m, "use_gate_in_kernel");
  return d;
}

void ensure_cu_seqlens(Mutant& m) {
  if (!has(m, "cu_seqlens")) make(m, "cu_seqlens", DType::i64, {2}, {0.0, static_cast<double>(dim(m, "q", 1))});
}

// A valid fp32 initial state when the call has none.
void ensure_initial_state(Mutant& m, const Chunk& d) {
  if (!has(m, "initial_state")) make(m, "initial_state", DType::f32, d.state(), {});
}

}  // namespace

void add_kda_chunk_mutations(Table& t) {
  const auto C = ops({kChunk});
  // ---- chunk_kda's wrapper (fla/ops/kda/chunk.py lines 354-418, then line 100) ----
  t.add(ids::kda_chunk_transpose_state_layout_conflict, C, K::flag,
        "state_v_first=True next to transpose_state_layout (which keeps the call's layout)", [](Mutant& m, Pick&) {
          const bool layout = chunk(m).v_first;
          m.call.flags["state_v_first"] = true;
          m.call.flags["transpose_state_layout"] = layout;
          return true;
        });
  t.add(ids::kda_chunk_varlen_batch_dim, C, K::rank, "q 0-D with cu_seqlens (added when absent)", [](Mutant& m, Pick&) {
    ensure_cu_seqlens(m);
    reshape(m, "q", {});
    return true;
  });
  t.add(ids::kda_chunk_varlen_batch_size, C, K::shape, "a second batch row with cu_seqlens (added when absent)",
        [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          ensure_cu_seqlens(m);
          if (d.B == 1) reshape(m, "q", {2, d.T, d.H, d.K});
          return true;
        });
  t.add(ids::kda_chunk_varlen_initial_state_dim, C, K::rank, "initial_state 0-D (varlen calls)", [](Mutant& m, Pick&) {
    if (!chunk(m).varlen) return false;
    make(m, "initial_state", DType::f32, {}, {0.0});
    return true;
  });
  t.add(ids::kda_chunk_cu_seqlens_0d, C, K::rank, "cu_seqlens 0-D with an initial state (varlen calls)",
        [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          if (!d.varlen) return false;
          ensure_initial_state(m, d);
          reshape(m, "cu_seqlens", {});
          return true;
        });
  t.add(ids::kda_chunk_initial_state_count, C, K::shape, "N+1 initial states (varlen calls; added when absent)",
        [](Mutant& m, Pick&) {
          Chunk d = chunk(m);
          if (!d.varlen) return false;
          ++d.N;
          if (has(m, "initial_state")) reshape(m, "initial_state", d.state());
          else make(m, "initial_state", DType::f32, d.state(), {});
          return true;
        });
  t.add(ids::kda_chunk_initial_state_dtype, C, K::dtype, "initial_state bf16 or f16 (added when absent)",
        [](Mutant& m, Pick& p) {
          ensure_initial_state(m, chunk(m));
          retype(m, "initial_state", p.below(2) ? DType::bf16 : DType::f16);
          return true;
        });
  t.add(ids::kda_chunk_a_log_required, C, K::absent, "use_gate_in_kernel without A_log and lower_bound",
        [](Mutant& m, Pick&) {
          m.call.flags["use_gate_in_kernel"] = true;
          m.call.tensors.erase("A_log");
          m.call.scalars.erase("lower_bound");
          return true;
        });
  t.add(ids::kda_chunk_chunk_size, C, K::scalar, "chunk_size 16, 48 or 128", [](Mutant& m, Pick& p) {
    m.call.scalars["chunk_size"] = one_of(std::vector<double>{16, 48, 128}, p);
    return true;
  });
  t.add(ids::kda_chunk_safe_gate_lower_bound_required, C, K::scalar,
        "safe_gate with the in-kernel gate and no lower_bound (A_log added when absent)", [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          m.call.flags["use_gate_in_kernel"] = m.call.flags["safe_gate"] = true;
          m.call.scalars.erase("lower_bound");
          if (!has(m, "A_log")) make(m, "A_log", DType::f32, {d.HV}, {});
          return true;
        });
  t.add(ids::kda_chunk_safe_gate_lower_bound_range, C, K::scalar,
        "safe_gate with the in-kernel gate and lower_bound -8, 0, 1 or nan", [](Mutant& m, Pick& p) {
          m.call.flags["use_gate_in_kernel"] = m.call.flags["safe_gate"] = true;
          m.call.scalars["lower_bound"] = one_of(std::vector<double>{-8.0, 0.0, 1.0, kNaN}, p);
          return true;
        });
  t.add(ids::kda_chunk_allow_neg_eigval, C, K::flag, "allow_neg_eigval without use_beta_sigmoid_in_kernel",
        [](Mutant& m, Pick&) {
          m.call.flags["allow_neg_eigval"] = true;
          m.call.flags["use_beta_sigmoid_in_kernel"] = false;
          return true;
        });
  t.add(ids::kda_chunk_v_ndim, C, K::rank, "v [B, T, HV, V] -> [B*T, HV*V]", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "v", {d.B * d.T, d.HV * d.V});
    return true;
  });
  t.add(ids::kda_chunk_q_ndim, C, K::rank, "q [B, T, H, K] -> [B, T, H*K]", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "q", {d.B, d.T, d.H * d.K});
    return true;
  });
  t.add(ids::kda_chunk_qk_shape, C, K::shape, "k's H or K one larger than q's", [](Mutant& m, Pick& p) {
    const Chunk d = chunk(m);
    if (p.below(2)) reshape(m, "k", {d.B, d.T, d.H + 1, d.K});
    else reshape(m, "k", {d.B, d.T, d.H, d.K + 1});
    return true;
  });
  t.add(ids::kda_chunk_key_head_dim, C, K::shape, "q and k with K = 272", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "q", {d.B, d.T, d.H, 272});
    reshape(m, "k", {d.B, d.T, d.H, 272});
    return true;
  });
  t.add(ids::kda_chunk_num_qk_heads_zero, C, K::shape, "q and k with no heads", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "q", {d.B, d.T, 0, d.K});
    reshape(m, "k", {d.B, d.T, 0, d.K});
    return true;
  });
  t.add(ids::kda_chunk_head_ratio, C, K::shape, "q and k with HV+1 heads (more than v)", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "q", {d.B, d.T, d.HV + 1, d.K});
    reshape(m, "k", {d.B, d.T, d.HV + 1, d.K});
    return true;
  });
  t.add(ids::kda_chunk_g_shape, C, K::shape, "g's K one larger", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "g", {d.B, d.T, d.HV, d.K + 1});
    return true;
  });
  t.add(ids::kda_chunk_beta_shape, C, K::shape, "beta [B, T, HV+1]", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "beta", {d.B, d.T, d.HV + 1});
    return true;
  });
  t.add(ids::kda_chunk_default_scale_k_zero, C, K::shape, "q, k and g with K = 0, scale left out", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    m.call.scalars.erase("scale");
    reshape(m, "q", {d.B, d.T, d.H, 0});
    reshape(m, "k", {d.B, d.T, d.H, 0});
    reshape(m, "g", {d.B, d.T, d.HV, 0});
    return true;
  });
  t.add(ids::kda_chunk_intermediate_states_recompute, C, K::flag, "return_intermediate_states with disable_recompute",
        [](Mutant& m, Pick&) {
          m.call.flags["return_intermediate_states"] = m.call.flags["disable_recompute"] = true;
          return true;
        });
  // ---- kparity's structural checks ----
  t.add(ids::kda_chunk_v_shape, C, K::shape, "v with T+1 tokens", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "v", {d.B, d.T + 1, d.HV, d.V});
    return true;
  });
  t.add(ids::kda_chunk_head_dims, C, K::shape, "v with V = 0, or q, k, g with K = 0 and a scale", [](Mutant& m, Pick& p) {
    const Chunk d = chunk(m);
    if (p.below(2)) {
      reshape(m, "v", {d.B, d.T, d.HV, 0});
    } else {
      if (!m.call.scalars.count("scale")) m.call.scalars["scale"] = 0.25;
      reshape(m, "q", {d.B, d.T, d.H, 0});
      reshape(m, "k", {d.B, d.T, d.H, 0});
      reshape(m, "g", {d.B, d.T, d.HV, 0});
    }
    return true;
  });
  t.add(ids::kda_chunk_a_log_shape, C, K::shape, "A_log with HV+1 entries (in-kernel gate calls)", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    if (!d.gate) return false;
    make(m, "A_log", DType::f32, {d.HV + 1}, {});
    return true;
  });
  t.add(ids::kda_chunk_dt_bias_shape, C, K::shape, "dt_bias with HV*K+1 entries (in-kernel gate calls)",
        [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          if (!d.gate) return false;
          make(m, "dt_bias", DType::f32, {d.HV * d.K + 1}, {});
          return true;
        });
  t.add(ids::kda_chunk_cu_seqlens_shape, C, K::rank, "cu_seqlens [N+1] -> [N+1, 1] (varlen calls)", [](Mutant& m, Pick&) {
    if (!chunk(m).varlen) return false;
    reshape(m, "cu_seqlens", {view(m, "cu_seqlens").numel(), 1});
    return true;
  });
  t.add(ids::kda_chunk_cu_seqlens_dtype, C, K::dtype, "cu_seqlens float32 (varlen calls)", [](Mutant& m, Pick&) {
    if (!chunk(m).varlen) return false;
    retype(m, "cu_seqlens", DType::f32);
    return true;
  });
  t.add(ids::kda_chunk_initial_state_shape, C, K::shape, "initial_state with HV+1 heads (added when absent)",
        [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          make(m, "initial_state", DType::f32, d.state(1), {});
          return true;
        });
  t.add(ids::kda_chunk_final_state_shape, C, K::shape, "final_state with HV+1 heads, output_final_state on",
        [](Mutant& m, Pick&) {
          const Chunk d = chunk(m);
          m.call.flags["output_final_state"] = true;
          make(m, "final_state", DType::f32, d.state(1), {});
          return true;
        });
  t.add(ids::kda_chunk_out_shape, C, K::shape, "out [B, T, HV, V+1]", [](Mutant& m, Pick&) {
    const Chunk d = chunk(m);
    reshape(m, "out", {d.B, d.T, d.HV, d.V + 1});
    return true;
  });
  t.add(ids::kda_chunk_float_dtype, C, K::dtype, "beta, g or out becomes int32", [](Mutant& m, Pick& p) {
    retype(m, one_of(std::vector<std::string>{"beta", "g", "out"}, p), DType::i32);
    return true;
  });
  t.add(ids::kda_chunk_same_device, C, K::device, "k, v, g, beta or out on the CPU", [](Mutant& m, Pick& p) {
    m.devices[one_of(std::vector<std::string>{"k", "v", "g", "beta", "out"}, p)] = Device::cpu();
    return true;
  });
  // ---- kparity's extra and deep checks ----
  t.add(ids::kda_chunk_scale_not_finite, C, K::scalar, "scale = inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["scale"] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(ids::kda_chunk_lower_bound_invalid, C, K::scalar,
        "lower_bound = 0.5, inf or nan without safe_gate (in-kernel gate calls)", [](Mutant& m, Pick& p) {
          if (!chunk(m).gate) return false;
          m.call.flags["safe_gate"] = false;
          m.call.scalars["lower_bound"] = one_of(std::vector<double>{0.5, kInf, kNaN}, p);
          return true;
        });
  t.add(ids::kda_chunk_out_overlap, C, K::alias, "out aliases q, k, v, g or beta", [](Mutant& m, Pick& p) {
    return alias_one_of(m, "out", {"q", "k", "v", "g", "beta"}, p);
  });
  t.add(ids::kda_chunk_cu_seqlens_values, C, K::index_value, "cu_seqlens ends at T+1 or starts at 1 (varlen calls)",
        [](Mutant& m, Pick& p) {
          const Chunk d = chunk(m);
          if (!d.varlen) return false;
          const std::int64_t n = view(m, "cu_seqlens").numel();
          if (p.below(2) == 0) set(m, "cu_seqlens", n - 1, static_cast<double>(d.T + 1));
          else set(m, "cu_seqlens", 0, 1.0);
          return true;
        });
  t.add(ids::kda_chunk_cu_seqlens_cpu_mismatch, C, K::index_value,
        "cu_seqlens_cpu one sequence longer, or one offset too large (varlen calls)", [](Mutant& m, Pick& p) {
          const Chunk d = chunk(m);
          if (!d.varlen) return false;
          std::vector<double> offsets;
          for (std::int64_t i = 0; i <= d.N; ++i) offsets.push_back(static_cast<double>(get_int(m, "cu_seqlens", i)));
          if (p.below(2)) offsets.push_back(offsets.back());
          else offsets.back() += 1;
          make(m, "cu_seqlens_cpu", DType::i64, {static_cast<std::int64_t>(offsets.size())}, offsets);
          return true;
        });
  t.add(ids::kda_chunk_non_finite, C, K::value, "a NaN or Inf in q, k or v", [](Mutant& m, Pick& p) {
    const std::string name = one_of(std::vector<std::string>{"q", "k", "v"}, p);
    const std::int64_t n = view(m, name).numel();
    if (n == 0) return false;
    set(m, name, p.below(n), one_of(std::vector<double>{kNaN, kInf, -kInf}, p));
    return true;
  });
  t.add(ids::kda_chunk_safe_gate_g_range, C, K::value, "safe_gate on a precomputed g with one entry at -6",
        [](Mutant& m, Pick& p) {
          if (chunk(m).gate) return false;
          const std::int64_t n = view(m, "g").numel();
          if (n == 0) return false;
          m.call.flags["safe_gate"] = true;
          set(m, "g", p.below(n), -6.0);
          return true;
        });
}

}  // namespace kparity::fuzz::detail
