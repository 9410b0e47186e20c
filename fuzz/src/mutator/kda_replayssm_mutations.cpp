// Mutations of the ReplaySSM-only checks (spec kda.md C.1 #0-#14 and the ReplaySSM C.3 checks).
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "table.hpp"

namespace kparity::fuzz::detail {

void add_kda_replayssm_mutations(Table& t) {
  // spec kda.md C.1 #0-#14 (upstream) and the ReplaySSM-only C.3 checks.
  const auto R = ops({kReplay});
  t.add(ids::kda_replayssm_batch_dim, R, K::rank, "mixed_qkv becomes 0-D", [](Mutant& m, Pick&) {
    reshape(m, "mixed_qkv", {});
    return true;
  });
  t.add(ids::kda_replayssm_a_layout, R, K::rank, "a 1-D, 4-D or not contiguous", [](Mutant& m, Pick& p) {
    const TensorView a = view(m, "a");
    switch (p.below(3)) {
      case 0: reshape(m, "a", {a.numel()}); return true;
      case 1: reshape(m, "a", {a.size(0), kda(m).HV, kda(m).K, 1}); return true;
      default: return noncontiguous(m, "a");
    }
  });
  t.add(ids::kda_replayssm_dt_bias_layout, R, K::stride, "dt_bias 3-D or not contiguous", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    if (p.below(2) == 0) {
      reshape(m, "dt_bias", {d.HV, d.K, 1});
      return true;
    }
    return noncontiguous(m, "dt_bias");
  });
  // Upstream's `a.view(batch, -1)` fails when a's size is not a multiple of the batch; with B = 1 no
  // size is, so the batch goes to 0 instead (which kparity's own batch-zero check would name first).
  t.add(ids::kda_replayssm_a_view, R, K::shape, "a one element larger than B rows (B >= 2), or an empty batch",
        [](Mutant& m, Pick&) {
          const Kda d = kda(m);
          if (d.B >= 2) reshape(m, "a", {1, 1, view(m, "a").numel() + 1});
          else reshape(m, "mixed_qkv", {0, d.W});
          return true;
        },
        kUpstreamOnly);
  t.add(ids::kda_replayssm_batch_zero, R, K::shape, "mixed_qkv gets 0 rows", [](Mutant& m, Pick&) {
    reshape(m, "mixed_qkv", {0, kda(m).W});
    return true;
  });
  t.add(ids::kda_write_pos_dtype, R, K::dtype, "write_pos int64, float32 or 2-D", [](Mutant& m, Pick& p) {
    switch (p.below(3)) {
      case 0: retype(m, "write_pos", DType::i64); break;
      case 1: retype(m, "write_pos", DType::f32); break;
      default: reshape(m, "write_pos", {kda(m).B, 1}); break;
    }
    return true;
  });
  t.add(ids::kda_write_pos_shape, R, K::shape, "write_pos gets B+1 entries", [](Mutant& m, Pick&) {
    reshape(m, "write_pos", {kda(m).B + 1});
    return true;
  });
  t.add(ids::kda_force_flush_layout, R, K::dtype, "force_flush int64, B+1 entries or 2-D", [](Mutant& m, Pick& p) {
    ensure_force_flush(m);
    const std::int64_t B = kda(m).B;
    switch (p.below(3)) {
      case 0: retype(m, "force_flush", DType::i64); break;
      case 1: reshape(m, "force_flush", {B + 1}); break;
      default: reshape(m, "force_flush", {B, 1}); break;
    }
    return true;
  });
  t.add(ids::kda_d_cache_ndim, R, K::rank, "d_cache [slots, HV, L, V] -> [slots, HV*L*V]", [](Mutant& m, Pick&) {
    const TensorView d = view(m, "d_cache");
    reshape(m, "d_cache", {d.size(0), d.numel() / std::max<std::int64_t>(d.size(0), 1)});
    return true;
  });
  t.add(ids::kda_cache_length, R, K::shape, "d_cache's ring length L = 0", [](Mutant& m, Pick&) {
    const Kda d = kda(m);
    reshape(m, "d_cache", {dim(m, "d_cache", 0), d.HV, 0, d.V});
    return true;
  });
  t.add(ids::kda_d_cache_shape, R, K::shape, "d_cache's HV or V one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    const std::int64_t s = dim(m, "d_cache", 0);
    if (p.below(2) == 0) reshape(m, "d_cache", {s, d.HV + 1, d.L, d.V});
    else reshape(m, "d_cache", {s, d.HV, d.L, d.V + 1});
    return true;
  });
  t.add(ids::kda_k_cache_shape, R, K::shape, "k_cache's H, L or K one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    Shape s{dim(m, "k_cache", 0), d.H, d.L, d.K};
    ++s[static_cast<std::size_t>(1 + p.below(3))];
    reshape(m, "k_cache", s);
    return true;
  });
  t.add(ids::kda_g_cache_shape, R, K::shape, "g_cache's HV, L or K one larger", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    Shape s{dim(m, "g_cache", 0), d.HV, d.L, d.K};
    ++s[static_cast<std::size_t>(1 + p.below(3))];
    reshape(m, "g_cache", s);
    return true;
  });
  t.add(ids::kda_g_cache_dtype, R, K::dtype, "g_cache bf16, f16 or int32", [](Mutant& m, Pick& p) {
    retype(m, "g_cache", one_of(std::vector<DType>{DType::bf16, DType::f16, DType::i32}, p));
    return true;
  });
  t.add(ids::kda_replayssm_same_device, R, K::device, "one of d_cache, k_cache, g_cache, write_pos on the CPU",
        [](Mutant& m, Pick& p) {
          static const std::vector<std::string> names = {"d_cache", "k_cache", "g_cache", "write_pos"};
          m.devices[one_of(names, p)] = Device::cpu();
          return true;
        });
  t.add(ids::kda_force_flush_device, R, K::device, "force_flush on the CPU", [](Mutant& m, Pick&) {
    ensure_force_flush(m);
    m.devices["force_flush"] = Device::cpu();
    return true;
  });
  static const std::vector<std::string> rings = {"d_cache", "k_cache", "g_cache"};
  t.add(ids::kda_ring_slots_fewer, R, K::shape, "a ring with one slot fewer than the state pool",
        [](Mutant& m, Pick& p) {
          const Kda d = kda(m);
          if (d.slots < 1) return false;
          const std::string& ring = one_of(rings, p);
          Shape s = view(m, ring).shape();
          s[0] = d.slots - 1;
          reshape(m, ring, s);
          return true;
        },
        kShapeExtras);
  t.add(ids::kda_ring_slots_differ, R, K::shape, "a ring with more slots than the state pool", [](Mutant& m, Pick& p) {
    const Kda d = kda(m);
    for (const auto& r : rings)
      if (dim(m, r, 0) != d.slots) return false;  // already warned before the mutation
    const std::string& ring = one_of(rings, p);
    Shape s = view(m, ring).shape();
    s[0] = d.slots + 1 + p.below(2);
    reshape(m, ring, s);
    return true;
  });
  t.add(ids::kda_replayssm_control_contiguous, R, K::stride, "write_pos or force_flush not contiguous",
        [](Mutant& m, Pick& p) {
          if (p.below(2) == 0) return noncontiguous(m, "write_pos");
          ensure_force_flush(m);
          return noncontiguous(m, "force_flush");
        });
  t.add(ids::kda_ring_slot_out_of_range, R, K::shape, "a ring shrunk below the largest live slot",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          std::int64_t smax = 0;
          for (std::int64_t r : rows) smax = std::max(smax, get_int(m, "ssm_state_indices", r));
          const std::string& ring = one_of(rings, p);
          Shape s = view(m, ring).shape();
          s[0] = smax;
          reshape(m, ring, s);
          return true;
        });
  t.add(ids::kda_write_pos_out_of_range, R, K::cursor_value, "write_pos[r] = L, L+1 or -1 for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          const std::int64_t L = kda(m).L;
          set(m, "write_pos", one_of(rows, p), static_cast<double>(one_of(std::vector<std::int64_t>{L, L + 1, -1}, p)));
          return true;
        });
  t.add(ids::kda_force_flush_value, R, K::cursor_value, "force_flush[r] = 2, -1 or 7 for a live row r",
        [](Mutant& m, Pick& p) {
          const auto rows = live_rows(m);
          if (rows.empty()) return false;
          ensure_force_flush(m);
          for (std::int64_t r : rows)
            if (const auto v = get_int(m, "force_flush", r); v != 0 && v != 1) return false;  // already warned
          set(m, "force_flush", one_of(rows, p), static_cast<double>(one_of(std::vector<std::int64_t>{2, -1, 7}, p)));
          return true;
        });
}

}  // namespace kparity::fuzz::detail
