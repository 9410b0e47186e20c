#include "kparity/fuzz/kda_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "kparity/core/random.hpp"

namespace kparity::fuzz {

KdaDecodeCase::KdaDecodeCase(const KdaDecodeShape& s, std::uint64_t seed) : s_(s), seed_(seed) {
  const auto B = s.B, H = s.H, HV = s.HV(), K = s.K, V = s.V, L = s.L, S = s.slots;
  mixed_qkv = Tensor(s.act, {B, 2 * H * K + HV * V});
  a = Tensor(s.act, {B, HV, K});
  b = Tensor(s.act, {B, HV});
  A_log = Tensor(DType::f32, {HV});
  dt_bias = Tensor(DType::f32, {HV, K});
  const std::int64_t slot = HV * V * K + s.slot_pad;
  state = Tensor::strided(s.state, {S, HV, V, K}, {slot, V * K, K, 1}, s.slot_pad > 0 ? 3 : 0,
                          (s.slot_pad > 0 ? 3 : 0) + S * slot);
  // Rings start as garbage: positions at or past a row's cursor must never be read.
  d_cache = Tensor(s.act, {S, HV, L, V});
  k_cache = Tensor(s.act, {S, H, L, K});
  g_cache = Tensor(DType::f32, {S, HV, L, K});
  d_cache.poison();
  k_cache.poison();
  g_cache.poison();
  out = make_out();
  indices = Tensor(DType::i32, {B});
  write_pos = Tensor(DType::i32, {B});
  force_flush = Tensor(DType::i32, {B});

  A_log.fill_uniform(seed ^ 0xA1, -1.0, 0.5);
  dt_bias.fill_uniform(seed ^ 0xD7, -0.5, 0.5);
  // Small state entries keep the delta rule well inside bf16/f16 range over long streams.
  state.fill_normal(seed ^ 0x57, 0.0, 0.1);
  scale = 1.0 / std::sqrt(static_cast<double>(K));

  // Distinct slots (shared slots race upstream), a few rows marked as padding.
  Rng rng(seed ^ 0x5107);
  std::vector<std::int64_t> pool(static_cast<std::size_t>(S));
  std::iota(pool.begin(), pool.end(), 0);
  for (std::size_t i = pool.size(); i > 1; --i) std::swap(pool[i - 1], pool[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(i) - 1))]);
  slots_.resize(static_cast<std::size_t>(B));
  for (std::int64_t r = 0; r < B; ++r) slots_[static_cast<std::size_t>(r)] = pool[static_cast<std::size_t>(r)];
  for (int p = 0; p < s.padding_rows && p < B; ++p) {
    slots_[static_cast<std::size_t>(rng.integer(0, B - 1))] = -1 - rng.integer(0, 3);
  }
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t idx[1] = {r};
    indices.view().store_int(idx, slots_[static_cast<std::size_t>(r)]);
    write_pos.view().store_int(idx, 0);  // empty rings: the checkpoint is the state
  }
  draw_step(0);
}

Tensor KdaDecodeCase::make_out() const { return Tensor(s_.act, {s_.B, 1, s_.HV(), s_.V}); }

void KdaDecodeCase::draw_step(int step) {
  const std::uint64_t k = seed_ * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(step) * 7919u;
  // Without the in-kernel L2 norm, |k|^2 ~ 1 keeps the delta rule (I - beta k k^T) contractive, as
  // normalised keys do; raw unit-variance keys would grow the state by ~K per step.
  mixed_qkv.fill_normal(k ^ 1, 0.0, s_.l2norm ? 1.0 : 1.0 / std::sqrt(static_cast<double>(s_.K)));
  a.fill_normal(k ^ 2, 0.0, 1.0);
  b.fill_normal(k ^ 3, 0.0, 1.5);
  Rng rng(k ^ 4);
  for (std::int64_t r = 0; r < s_.B; ++r) {
    const std::int64_t idx[1] = {r};
    force_flush.view().store_int(idx, s_.forced && rng.uniform() < 0.25 ? 1 : 0);
  }
  out.poison();
}

kda::ReplaySsmDecodeArgs KdaDecodeCase::replay_args() {
  kda::ReplaySsmDecodeArgs r;
  r.mixed_qkv = mixed_qkv.view();
  r.a = a.view();
  r.b = b.view();
  r.A_log = A_log.view();
  r.dt_bias = dt_bias.view();
  r.scale = scale;
  r.initial_state = state.view();
  r.d_cache = d_cache.view();
  r.k_cache = k_cache.view();
  r.g_cache = g_cache.view();
  r.out = out.view();
  r.ssm_state_indices = indices.view();
  r.write_pos = write_pos.view();
  if (s_.forced) r.force_flush = force_flush.view();
  r.use_qk_l2norm_in_kernel = s_.l2norm;
  if (s_.bounded) r.lower_bound = -5.0;
  return r;
}

kda::PackedDecodeArgs KdaDecodeCase::packed_args(Tensor& pool, Tensor& packed_out) {
  kda::PackedDecodeArgs p;
  const std::int64_t a_shape[2] = {s_.B, s_.HV() * s_.K};
  const std::int64_t dt_shape[1] = {s_.HV() * s_.K};
  p.mixed_qkv = mixed_qkv.view();
  p.a = TensorView(a.view().data, a.dtype(), a_shape);
  p.b = b.view();
  p.A_log = A_log.view();
  p.dt_bias = TensorView(dt_bias.view().data, dt_bias.dtype(), dt_shape);
  p.scale = scale;
  p.initial_state = pool.view();
  p.out = packed_out.view();
  p.ssm_state_indices = indices.view();
  p.use_qk_l2norm_in_kernel = s_.l2norm;
  if (s_.bounded) p.lower_bound = -5.0;
  return p;
}

}  // namespace kparity::fuzz
