// Mutations of the checks both KDA decode ops share (spec kda.md C.2, C.3): the packed decode's
// walk, which ReplaySSM runs on its flattened a / dt_bias, and the kparity extras of both.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "table.hpp"

namespace kparity::fuzz::detail {
namespace {

void kda_decode_walk(Table& t) {
  // spec kda.md C.2, shared by both decode ops (ReplaySSM runs it on its flattened a / dt_bias).
  t.add(ids::kda_mixed_qkv_ndim, ops({kPacked, kReplay}), K::rank, "mixed_qkv [B, W] -> [B, 1, W]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "mixed_qkv", {d.B, 1, d.W});
    return true;
  });
  t.add(ids::kda_mixed_qkv_last_dim_stride, ops({kPacked, kReplay}), K::stride, "mixed_qkv read every other element",
        [](Mutant& m, Pick&) {
          restride(m, "mixed_qkv", padded_strides(view(m, "mixed_qkv").shape(), 2));
          return true;
        });
  t.add(ids::kda_a_b_ndim, ops({kPacked, kReplay}), K::rank, "b [B, HV] -> [B, HV, 1]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B, d.HV, 1});
    return true;
  });
  t.add(ids::kda_a_b_last_dim_stride, ops({kPacked, kReplay}), K::stride, "b read every other element", [](Mutant& m, Pick&) {
    restride(m, "b", padded_strides(view(m, "b").shape(), 2));
    return true;
  });
  t.add(ids::kda_a_log_dt_bias_ndim, ops({kPacked, kReplay}), K::rank, "A_log [HV] -> [HV, 1]", [](Mutant& m, Pick&) {
    reshape(m, "A_log", {kda(m).HV, 1});
    return true;
  });
  t.add(ids::kda_a_log_dt_bias_stride, ops({kPacked, kReplay}), K::stride, "A_log read every other element", [](Mutant& m, Pick&) {
    restride(m, "A_log", {2});
    return true;
  });
  t.add(ids::kda_ssm_state_indices_ndim, ops({kPacked, kReplay}), K::rank, "ssm_state_indices [B] -> [B, 1]", [](Mutant& m, Pick&) {
    reshape(m, "ssm_state_indices", {kda(m).B, 1});
    return true;
  });
  t.add(ids::kda_out_contiguous, ops({kPacked, kReplay}), K::stride, "out not contiguous",
        [](Mutant& m, Pick&) { return noncontiguous(m, "out"); });
  t.add(ids::kda_inputs_same_device, ops({kPacked, kReplay}), K::device, "one of a, b, A_log, dt_bias, initial_state, out, ssm_state_indices on the CPU",
        [](Mutant& m, Pick& p) {
          static const std::vector<std::string> names = {"a", "b", "A_log", "dt_bias", "initial_state", "out", "ssm_state_indices"};
          m.devices[one_of(names, p)] = Device::cpu();
          return true;
        });
  t.add(ids::kda_batch_size_mismatch, ops({kPacked, kReplay}), K::shape, "b gets B+1 rows", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B + 1, d.HV});
    return true;
  });
  t.add(ids::kda_ssm_state_indices_shape, ops({kPacked, kReplay}), K::shape, "ssm_state_indices gets B+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "ssm_state_indices", {kda(m).B + 1});
    return true;
  });
  t.add(ids::kda_initial_state_ndim, ops({kPacked, kReplay}), K::rank, "initial_state [slots, HV, V, K] -> [slots, HV, V*K]",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "initial_state", {d.slots, d.HV, d.V * d.K});
          return true;
        });
  t.add(ids::kda_initial_state_last_dim_stride, ops({kPacked, kReplay}), K::stride, "initial_state read every other element",
        [](Mutant& m, Pick&) {
          restride(m, "initial_state", padded_strides(view(m, "initial_state").shape(), 2));
          return true;
        });
  t.add(ids::kda_head_dims_power_of_two, ops({kPacked, kReplay}), K::shape, "initial_state's K or V tripled (not a power of two)",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (p.below(2) == 0) reshape(m, "initial_state", {d.slots, d.HV, d.V, 3 * d.K});
          else reshape(m, "initial_state", {d.slots, d.HV, 3 * d.V, d.K});
          return true;
        });
  t.add(ids::kda_a_shape, ops({kPacked, kReplay}), K::shape, "a [B, HV*K] -> [B, (HV+1)*K]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "a", {d.B, (d.HV + 1) * d.K});
    return true;
  });
  t.add(ids::kda_b_shape, ops({kPacked, kReplay}), K::shape, "b [B, HV] -> [B, HV+1]", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "b", {d.B, d.HV + 1});
    return true;
  });
  t.add(ids::kda_a_log_numel, ops({kPacked, kReplay}), K::shape, "A_log gets HV+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "A_log", {kda(m).HV + 1});
    return true;
  });
  t.add(ids::kda_dt_bias_numel, ops({kPacked, kReplay}), K::shape, "dt_bias gets HV*K+1 entries", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "dt_bias", {d.HV * d.K + 1});
    return true;
  });
  t.add(ids::kda_out_shape, ops({kPacked, kReplay}), K::shape, "out's V or HV one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    if (p.below(2) == 0) reshape(m, "out", {d.B, 1, d.HV, d.V + 1});
    else reshape(m, "out", {d.B, 1, d.HV + 1, d.V});
    return true;
  });
  t.add(ids::kda_mixed_qkv_last_dim, ops({kPacked, kReplay}), K::shape, "mixed_qkv's last dim one larger (odd q+k part)",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "mixed_qkv", {d.B, d.W + 1});
          return true;
        });
  t.add(ids::kda_q_size_divisible, ops({kPacked, kReplay}), K::shape, "mixed_qkv's q part H*K + r, 0 < r < K",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (d.K < 2) return false;  // every q size is a multiple of K = 1
          reshape(m, "mixed_qkv", {d.B, d.W + 2 * (1 + p.below(d.K - 1))});
          return true;
        });
  t.add(ids::kda_head_config, ops({kPacked, kReplay}), K::shape, "mixed_qkv sized for HV+1 q/k heads (HV % H != 0)",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          reshape(m, "mixed_qkv", {d.B, 2 * (d.HV + 1) * d.K + d.HV * d.V});
          return true;
        });
}

void kda_decode_extras(Table& t) {
  // spec kda.md C.3, the checks both decode ops share (entries owned by kda/packed_decode).
  t.add(ids::kda_float_dtype, ops({kPacked, kReplay}), K::dtype, "one float input becomes int32", [](Mutant& m, Pick& p) {
    static const std::vector<std::string> names = {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "out"};
    retype(m, one_of(names, p), DType::i32);
    return true;
  });
  t.add(ids::kda_gate_params_dtype, ops({kPacked, kReplay}), K::dtype, "an fp32 gate parameter (A_log or dt_bias) becomes bf16",
        [](Mutant& m, Pick& p) {
          std::vector<std::string> f32;
          for (const char* n : {"A_log", "dt_bias"})
            if (view(m, n).dtype == DType::f32) f32.push_back(n);
          if (f32.size() < 2) return false;  // a call with a narrow gate parameter already warns
          retype(m, one_of(f32, p), DType::bf16);
          return true;
        });
  t.add(ids::kda_state_indices_dtype, ops({kPacked, kReplay}), K::dtype, "ssm_state_indices becomes float32", [](Mutant& m, Pick&) {
    retype(m, "ssm_state_indices", DType::f32);
    return true;
  });
  t.add(ids::kda_scale_not_finite, ops({kPacked, kReplay}), K::scalar, "scale = inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["scale"] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(ids::kda_scale_not_positive, ops({kPacked, kReplay}), K::scalar, "scale = -scale or 0", [](Mutant& m, Pick& p) {
    double& s = m.call.scalars.at("scale");
    if (!(s > 0) || !std::isfinite(s)) return false;
    s = p.below(2) ? -s : 0.0;
    return true;
  });
  t.add(ids::kda_lower_bound_invalid, ops({kPacked, kReplay}), K::scalar, "lower_bound = 0.5, inf or nan", [](Mutant& m, Pick& p) {
    m.call.scalars["lower_bound"] = one_of(std::vector<double>{0.5, kInf, kNaN}, p);
    return true;
  });
  t.add(ids::kda_head_dims_small, ops({kPacked, kReplay}), K::shape, "V becomes 8 throughout (K, V >= 16 before)", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    if (d.K < 16 || d.V < 16) return false;  // already small: the call warns before the mutation
    const std::int64_t V = 8;
    reshape(m, "mixed_qkv", {d.B, 2 * d.H * d.K + d.HV * V});
    reshape(m, "initial_state", {d.slots, d.HV, V, d.K});
    reshape(m, "out", {d.B, 1, d.HV, V});
    if (has(m, "d_cache")) reshape(m, "d_cache", {dim(m, "d_cache", 0), d.HV, d.L, V});
    return true;
  });
  t.add(ids::kda_out_overlap, ops({kPacked, kReplay}), K::alias, "out aliases one of its inputs", [](Mutant& m, Pick& p) {
    return alias_one_of(m, "out", {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "ssm_state_indices"}, p);
  });
  t.add(ids::kda_state_slot_out_of_range, ops({kPacked, kReplay}), K::index_value, "ssm_state_indices[r] >= slots for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          set(m, "ssm_state_indices", one_of(rows, p), static_cast<double>(kda(m).slots + p.below(3)));
          return true;
        });
  t.add(ids::kda_state_slot_shared, ops({kPacked, kReplay}), K::index_value, "a second row takes the slot of a live row",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          const std::int64_t B = kda(m).B;
          if (rows.empty() || B < 2) return false;
          const std::int64_t r1 = one_of(rows, p);
          const std::int64_t r2 = (r1 + 1 + p.below(B - 1)) % B;
          set(m, "ssm_state_indices", r2, static_cast<double>(get_int(m, "ssm_state_indices", r1)));
          return true;
        });
  t.add(ids::kda_non_finite, ops({kPacked, kReplay}), K::value, "a NaN or Inf in what a live row reads (mixed_qkv, b or A_log)",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          const Kda d = kda(m);
          const std::int64_t r = one_of(rows, p);
          const double bad = one_of(std::vector<double>{kNaN, kInf, -kInf}, p);
          switch (p.below(3)) {
            case 0: set(m, "mixed_qkv", r * d.W + p.below(d.W), bad); break;
            case 1: set(m, "b", r * d.HV + p.below(d.HV), bad); break;
            default: set(m, "A_log", p.below(d.HV), bad); break;
          }
          return true;
        });
}

}  // namespace

void add_kda_decode_mutations(Table& t) {
  kda_decode_walk(t);
  kda_decode_extras(t);
}

}  // namespace kparity::fuzz::detail
