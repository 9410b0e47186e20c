#pragma once
// A random, valid KDA decode problem that both decode ops can run on: the same state pool, token
// stream and slot map, seen as ReplaySSM arguments (rings + cursors) or as packed-decode arguments.
#include <cstdint>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"

namespace kparity::fuzz {

struct KdaDecodeShape {
  std::int64_t B = 1, H = 1, G = 1, K = 16, V = 16, L = 4, slots = 2;
  std::int64_t slot_pad = 0;  // extra elements between state slots (a strided pool)
  DType act = DType::bf16;    // mixed_qkv, a, b, out, d/k rings
  DType state = DType::f32;
  bool l2norm = true;
  bool bounded = false;  // lower_bound gate instead of softplus
  bool forced = false;   // random force_flush flags
  int padding_rows = 0;  // rows with a negative slot
  std::int64_t HV() const { return H * G; }
};

class KdaDecodeCase {
 public:
  KdaDecodeCase(const KdaDecodeShape& s, std::uint64_t seed);

  // Fresh token inputs (mixed_qkv, a, b, force flags) for step `step`.
  void draw_step(int step);
  kda::ReplaySsmDecodeArgs replay_args();
  // The packed-decode view of the same inputs, on `pool` (a state pool of the same layout).
  kda::PackedDecodeArgs packed_args(Tensor& pool, Tensor& out);
  Tensor make_pool_copy() const { return state; }
  Tensor make_out() const;
  const KdaDecodeShape& shape() const { return s_; }
  std::int64_t slot_of(std::int64_t row) const { return slots_[static_cast<std::size_t>(row)]; }

  Tensor mixed_qkv, a, b, A_log, dt_bias, state, d_cache, k_cache, g_cache, out, indices, write_pos,
      force_flush;
  double scale = 0.0;

 private:
  KdaDecodeShape s_;
  std::uint64_t seed_;
  std::vector<std::int64_t> slots_;
};

}  // namespace kparity::fuzz
