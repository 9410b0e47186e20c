#pragma once
// Host and device tensor sets for the two decode ops, built from one seed (testing guide 2.1).
#include <optional>
#include <vector>

#include "support/gpu_env.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::gpu_test {

using kparity::kda::PackedDecodeArgs;
using kparity::kda::ReplaySsmDecodeArgs;

struct DecodeCfg {
  std::int64_t B = 3, H = 2, HV = 4, K = 128, V = 128, L = 4, slots = 5;
  DType state = DType::f32, act = DType::bf16, ring = DType::bf16, out = DType::bf16;
  bool l2norm = true;
  std::optional<double> lower_bound;
  bool a3d = true;  // ReplaySSM takes a as [B, HV, K] and dt_bias as [HV, K] (sglang backend form)
  std::int64_t slot_pad = 0, state_offset = 0;  // strided state (AP-K11)
  std::int64_t ring_pad = 0;                    // strided rings: extra elements per ring slot
  double state_std = 0.01;
  kparity::kda::BetaRounding beta_rounding = kparity::kda::BetaRounding::through_b_dtype;
  std::vector<std::int64_t> idx;  // empty: 0..B-1
  std::vector<std::int64_t> write_pos;  // empty: zeros
  bool with_force = true;
};

struct HostDecode {
  DecodeCfg cfg;
  Tensor qkv, a, b, A_log, dt_bias, state, d, k, g, out, idx, wp, ff;

  HostDecode(const DecodeCfg& c, std::uint64_t seed);
  // Fresh token inputs: mixed_qkv ~ N(0,1), gate logits ~ N(0,0.5), beta logits ~ N(0,1).
  void fresh_inputs(std::uint64_t seed);
  // Rings full of finite garbage (d ~ N(0,.02), k ~ N(0,1), g ~ U(-.1,0)), as upstream's test.
  void garbage_rings(std::uint64_t seed);
  ReplaySsmDecodeArgs replay_args() const;
  PackedDecodeArgs packed_args() const;
};

struct DevDecode {
  DevTensor qkv, a, b, A_log, dt_bias, state, d, k, g, out, idx, wp, ff;
  explicit DevDecode(const HostDecode& h);
  void upload_inputs(const HostDecode& h);  // qkv, a, b, cursors, flags
  void download_all(HostDecode& h) const;   // state, rings, out
  ReplaySsmDecodeArgs replay_args(const HostDecode& h) const;
  PackedDecodeArgs packed_args(const HostDecode& h) const;
};

}  // namespace kparity::gpu_test
