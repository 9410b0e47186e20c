#include "decode_case.hpp"

#include <cmath>

namespace kparity::gpu_test {
namespace {
Tensor strided4(DType t, std::int64_t n0, std::int64_t n1, std::int64_t n2, std::int64_t n3, std::int64_t pad,
                std::int64_t offset) {
  const std::int64_t per = n1 * n2 * n3;
  return Tensor::strided(t, {n0, n1, n2, n3}, {per + pad, n2 * n3, n3, 1}, offset);
}
}  // namespace

HostDecode::HostDecode(const DecodeCfg& c, std::uint64_t seed) : cfg(c) {
  const std::int64_t B = c.B, H = c.H, HV = c.HV, K = c.K, V = c.V, L = c.L, S = c.slots;
  qkv = Tensor(c.act, {B, 2 * H * K + HV * V});
  a = c.a3d ? Tensor(c.act, {B, HV, K}) : Tensor(c.act, {B, HV * K});
  b = Tensor(c.act, {B, HV});
  A_log = Tensor(DType::f32, {HV});
  dt_bias = c.a3d ? Tensor(DType::f32, {HV, K}) : Tensor(DType::f32, {HV * K});
  A_log.fill_normal(seed + 1, 0.0, 0.3);
  dt_bias.fill_normal(seed + 2, 0.0, 0.1);
  state = strided4(c.state, S, HV, V, K, c.slot_pad, c.state_offset);
  state.fill_normal(seed + 3, 0.0, c.state_std);
  d = strided4(c.ring, S, HV, L, V, c.ring_pad, 0);
  k = strided4(c.ring, S, H, L, K, c.ring_pad, 0);
  g = strided4(DType::f32, S, HV, L, K, c.ring_pad, 0);
  out = Tensor(c.out, {B, 1, HV, V});
  idx = Tensor(DType::i32, {B});
  wp = Tensor(DType::i32, {B});
  ff = Tensor(DType::i32, {B});
  for (std::int64_t r = 0; r < B; ++r) {
    idx.view().store_flat(r, static_cast<double>(c.idx.empty() ? r : c.idx[r]));
    wp.view().store_flat(r, static_cast<double>(c.write_pos.empty() ? 0 : c.write_pos[r]));
  }
  fresh_inputs(seed + 10);
}

void HostDecode::fresh_inputs(std::uint64_t seed) {
  qkv.fill_normal(seed, 0.0, 1.0);
  a.fill_normal(seed + 1, 0.0, 0.5);
  b.fill_normal(seed + 2, 0.0, 1.0);
}

void HostDecode::garbage_rings(std::uint64_t seed) {
  d.fill_normal(seed, 0.0, 0.02);
  k.fill_normal(seed + 1, 0.0, 1.0);
  g.fill_uniform(seed + 2, -0.1, 0.0);
}

ReplaySsmDecodeArgs HostDecode::replay_args() const {
  ReplaySsmDecodeArgs r;
  r.mixed_qkv = qkv; r.a = a; r.b = b; r.A_log = A_log; r.dt_bias = dt_bias; r.scale = 1.0 / std::sqrt(double(cfg.K));
  r.initial_state = state; r.d_cache = d; r.k_cache = k; r.g_cache = g; r.out = out;
  r.ssm_state_indices = idx; r.write_pos = wp;
  if (cfg.with_force) r.force_flush = ff.view();
  r.use_qk_l2norm_in_kernel = cfg.l2norm; r.lower_bound = cfg.lower_bound; r.beta_rounding = cfg.beta_rounding;
  return r;
}

PackedDecodeArgs HostDecode::packed_args() const {
  PackedDecodeArgs p;
  p.mixed_qkv = qkv; p.a = a; p.b = b; p.A_log = A_log; p.dt_bias = dt_bias; p.scale = 1.0 / std::sqrt(double(cfg.K));
  p.initial_state = state; p.out = out; p.ssm_state_indices = idx;
  p.use_qk_l2norm_in_kernel = cfg.l2norm; p.lower_bound = cfg.lower_bound;
  return p;
}

DevDecode::DevDecode(const HostDecode& h)
    : qkv(h.qkv), a(h.a), b(h.b), A_log(h.A_log), dt_bias(h.dt_bias), state(h.state), d(h.d), k(h.k), g(h.g),
      out(h.out), idx(h.idx), wp(h.wp), ff(h.ff) {}

void DevDecode::upload_inputs(const HostDecode& h) {
  qkv.upload(h.qkv); a.upload(h.a); b.upload(h.b); wp.upload(h.wp); ff.upload(h.ff); idx.upload(h.idx);
}

void DevDecode::download_all(HostDecode& h) const {
  state.download(h.state); d.download(h.d); k.download(h.k); g.download(h.g); out.download(h.out);
}

ReplaySsmDecodeArgs DevDecode::replay_args(const HostDecode& h) const {
  ReplaySsmDecodeArgs r = h.replay_args();
  r.mixed_qkv = qkv.view(); r.a = a.view(); r.b = b.view(); r.A_log = A_log.view(); r.dt_bias = dt_bias.view();
  r.initial_state = state.view(); r.d_cache = d.view(); r.k_cache = k.view(); r.g_cache = g.view(); r.out = out.view();
  r.ssm_state_indices = idx.view(); r.write_pos = wp.view();
  if (h.cfg.with_force) r.force_flush = ff.view();
  return r;
}

PackedDecodeArgs DevDecode::packed_args(const HostDecode& h) const {
  PackedDecodeArgs p = h.packed_args();
  p.mixed_qkv = qkv.view(); p.a = a.view(); p.b = b.view(); p.A_log = A_log.view(); p.dt_bias = dt_bias.view();
  p.initial_state = state.view(); p.out = out.view(); p.ssm_state_indices = idx.view();
  return p;
}

}  // namespace kparity::gpu_test
