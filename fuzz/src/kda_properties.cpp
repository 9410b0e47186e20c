// Metamorphic properties of the KDA references: ReplaySSM under the caller's cursor protocol is the
// packed decode computed another way (kda.md D.2, D.4 AP-K7), whatever the shapes and layouts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <rapidcheck.h>

#include "kparity/fuzz/kda_case.hpp"
#include "kparity/fuzz/kda_gen.hpp"
#include "kparity/fuzz/property.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::fuzz {
namespace {


// AP-K7's bars (upstream Triton parity test, kda.md D.2), chosen by the activation and ring dtype
// (upstream's "fp32"/"bf16" configurations; its state is fp32): outputs at every step, the state at
// every flush. fp16 has three more mantissa bits than bf16, so bf16's bar is an upper bound for it.
struct Bars {
  double out_atol, out_rtol, state_atol, state_rtol;
};
Bars bars_for(DType act) {
  if (act == DType::f32) return {1e-4, 1e-3, 1.5e-3, 1e-3};
  return {1e-3, 1e-2, 3e-3, 1e-2};
}

std::string describe(const KdaDecodeShape& s, std::uint64_t seed, int steps) {
  return "B=" + std::to_string(s.B) + " H=" + std::to_string(s.H) + " G=" + std::to_string(s.G) +
         " K=" + std::to_string(s.K) + " V=" + std::to_string(s.V) + " L=" + std::to_string(s.L) +
         " slots=" + std::to_string(s.slots) + " pad=" + std::to_string(s.slot_pad) + " act=" +
         std::string(dtype_name(s.act)) + " state=" + std::string(dtype_name(s.state)) +
         " l2=" + std::to_string(s.l2norm) + " bounded=" + std::to_string(s.bounded) +
         " forced=" + std::to_string(s.forced) + " steps=" + std::to_string(steps) + " seed=" + std::to_string(seed);
}

void replay_equals_packed() {
  const KdaDecodeShape s = draw_kda_decode_shape({16, 32}, 4);
  const int steps = *rc::gen::inRange<int>(1, static_cast<int>(2 * s.L + 3));
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed, steps) << "\n";
  const auto p = reference::Precision::faithful;

  KdaDecodeCase c(s, seed);
  Tensor pool = c.make_pool_copy();
  Tensor packed_out = c.make_out();
  const Tensor untouched_before = c.state;
  const Bars bar = bars_for(s.act);
  for (int step = 0; step < steps; ++step) {
    c.draw_step(step);
    packed_out.poison();
    // The flush decision of each row, taken before the call (kda.md B.2.3).
    std::vector<bool> flushed(static_cast<std::size_t>(s.B));
    for (std::int64_t r = 0; r < s.B; ++r) {
      const std::int64_t i[1] = {r};
      flushed[static_cast<std::size_t>(r)] =
          c.slot_of(r) >= 0 && (c.write_pos.view().load_int(i) == s.L - 1 || (s.forced && c.force_flush.view().load_int(i) != 0));
    }
    auto ra = c.replay_args();
    ra.beta_rounding = kda::BetaRounding::fp32;  // the packed decode keeps beta in fp32 (A.4)
    reference::kda::replayssm_decode(ra, p);
    reference::kda::packed_decode(c.packed_args(pool, packed_out), p);
    // AP-K7 assumes an fp32 state. A 16-bit state is rounded by the packed decode at every step but
    // by ReplaySSM only at a flush; between flushes (at most L steps, the pool is re-synced at each
    // flush) the two drift by up to one rounding u of each state entry per step, seen through a
    // K-long dot product with unit-norm keys and queries: 2 (L + 1) u sqrt(K) max|S|.
    double drift = 0.0;
    if (s.state != DType::f32) {
      double max_s = 0.0;
      for_each_element(pool.view(), [&](std::span<const std::int64_t> i, std::int64_t) {
        max_s = std::max(max_s, std::fabs(pool.view().load(i)));
      });
      const double u = s.state == DType::bf16 ? 1.0 / 256 : 1.0 / 2048;
      drift = 2.0 * static_cast<double>(s.L + 1) * u * std::sqrt(static_cast<double>(s.K)) * max_s;
    }
    const std::string out_diff = compare_close(c.out.view(), packed_out.view(), bar.out_atol + drift, bar.out_rtol);
    RC_LOG() << "step " << step << " out: " << out_diff << "\n";
    RC_ASSERT(out_diff.empty());
    for (std::int64_t r = 0; r < s.B; ++r) {
      const std::int64_t slot = c.slot_of(r);
      if (slot < 0 || !flushed[static_cast<std::size_t>(r)]) continue;
      const TensorView replay_slot = c.state.view().select(0, slot), packed_slot = pool.view().select(0, slot);
      const std::string d = compare_close(replay_slot, packed_slot, bar.state_atol + drift, bar.state_rtol);
      RC_LOG() << "step " << step << " row " << r << " state: " << d << "\n";
      RC_ASSERT(d.empty());
      copy_convert(replay_slot, packed_slot);  // re-sync so drift never spans more than one ring cycle
    }
    reference::kda::advance_cursors(ra);
  }
  // Slots no row refers to are bit-identical (AP-K3).
  for (std::int64_t slot = 0; slot < s.slots; ++slot) {
    bool used = false;
    for (std::int64_t r = 0; r < s.B; ++r) used = used || c.slot_of(r) == slot;
    if (used) continue;
    const auto before = untouched_before.view().select(0, slot), after = c.state.view().select(0, slot);
    bool same = true;
    for_each_element(before, [&](std::span<const std::int64_t> idx, std::int64_t) {
      same = same && std::memcmp(static_cast<const char*>(before.data) + before.offset_of(idx) * before.element_size(),
                                 static_cast<const char*>(after.data) + after.offset_of(idx) * after.element_size(),
                                 before.element_size()) == 0;
    });
    RC_ASSERT(same);
  }
}

// Faithful and oracle agree to the precision of the storage types: the same function, rounded
// differently (testing guide 1.3). Bars: AP-K1's packed-decode output bar for fp32 activations,
// bf16's one ulp (2^-8 relative) plus the fp32 accumulation slack otherwise.
void packed_faithful_near_oracle() {
  KdaDecodeShape s = draw_kda_decode_shape({16, 32}, 4);
  s.state = DType::f32;
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  RC_LOG() << describe(s, seed, 1) << "\n";
  KdaDecodeCase c(s, seed);
  Tensor pool_o = c.make_pool_copy(), pool_f = c.make_pool_copy();
  Tensor out_o = c.make_out(), out_f = c.make_out();
  out_o.poison();
  out_f.poison();
  reference::kda::packed_decode(c.packed_args(pool_o, out_o), reference::Precision::oracle);
  reference::kda::packed_decode(c.packed_args(pool_f, out_f), reference::Precision::faithful);
  const double rtol = s.act == DType::f32 ? 1e-4 : (s.act == DType::bf16 ? 2.0 / 256 : 2.0 / 2048);
  const std::string d = compare_close(out_f.view(), out_o.view(), 1e-4, rtol);
  RC_LOG() << d << "\n";
  RC_ASSERT(d.empty());
  const std::string ds = compare_close(pool_f.view(), pool_o.view(), 1e-5, 1e-4);
  RC_LOG() << ds << "\n";
  RC_ASSERT(ds.empty());
}

}  // namespace

std::vector<Property> kda_properties() {
  return {
      {"kda/replayssm_decode/equals-packed-decode", "metamorphic", replay_equals_packed},
      {"kda/packed_decode/faithful-near-oracle", "metamorphic", packed_faithful_near_oracle},
  };
}

}  // namespace kparity::fuzz
