#pragma once
// POD kernel parameters (style habit 6): raw pointers, explicit int64 element strides for every
// dimension, dtype codes (common/dtype_code.hpp) for the small inputs that are loaded through a
// run-time dtype switch. No tensor type and no CUDA type appears here, so host code fills it without
// nvcc.
//
// An optional argument's presence is its own has_* flag, set by the launcher from the optional,
// never the pointer's nullness: an empty tensor (T = 0, no slots) legitimately has a null data
// pointer (PyTorch and DLPack give one), and a present-but-empty g read as "absent" sent the
// recurrence down the raw-gate path to load A_log through a null pointer (issue 23 item 2).
#include <cstdint>

#include "common/dtype_code.hpp"

namespace kparity::kernels::kda {

// Per-row inputs shared by both decode ops (spec kda.md B.0).
struct DecodeInputs {
  const void* qkv = nullptr;  int qkv_dt = kF32;  std::int64_t qkv_s0 = 0, qkv_s1 = 0;
  const void* a = nullptr;    int a_dt = kF32;    std::int64_t a_s0 = 0, a_sh = 0, a_sk = 0;
  const void* b = nullptr;    int b_dt = kF32;    std::int64_t b_s0 = 0, b_s1 = 0;
  const void* A_log = nullptr; int A_dt = kF32;   std::int64_t A_s0 = 0;
  const void* dt_bias = nullptr; int dtb_dt = kF32; std::int64_t dtb_sh = 0, dtb_sk = 0;
  const void* idx = nullptr;  int idx_dt = kI32;  std::int64_t idx_s0 = 0;
  void* state = nullptr;      std::int64_t st_s0 = 0, st_s1 = 0, st_s2 = 0;  // last-dim stride 1
  void* out = nullptr;        std::int64_t out_s0 = 0, out_s2 = 0, out_s3 = 0;
  std::int64_t B = 0, H = 0, HV = 0, G = 1, K = 0, V = 0;
  std::int64_t vtile = 0, n_vtiles = 0;  // rows of V per CTA, CTAs per (row, head)
  float scale = 0.f;
  float lower_bound = 0.f;
  int has_lower_bound = 0;
  int l2norm = 0;
};

struct PackedParams {
  DecodeInputs in;
  int norm_multiply = 0;  // bf16 state: x * (1/sqrt(n)); otherwise x / sqrt(n) (kda.md A.5)
  int early_state = 0;    // the kEarly instance of packed_decode_kernel (LaunchOptions::decode_variant 2)
  int form = 0;           // 1: packed_decode_wide_kernel (KPARITY_PACKED_DECODE_FORM=wide; packed_decode_wide.hpp)
};

struct ReplayParams {
  DecodeInputs in;
  void* d_cache = nullptr; std::int64_t d_s0 = 0, d_s1 = 0, d_s2 = 0, d_s3 = 0;
  void* k_cache = nullptr; std::int64_t k_s0 = 0, k_s1 = 0, k_s2 = 0, k_s3 = 0;
  float* g_cache = nullptr; std::int64_t g_s0 = 0, g_s1 = 0, g_s2 = 0, g_s3 = 0;
  const std::int32_t* write_pos = nullptr; std::int64_t wp_s0 = 0;
  const std::int32_t* force_flush = nullptr; std::int64_t ff_s0 = 0;
  int has_force_flush = 0;
  std::int64_t L = 0;
  int beta_round_dt = -1;  // -1: beta stays fp32; else rt(beta, dtype(b)) (kda.md A.4)
};

struct RecurrentParams {
  const void* q = nullptr; int q_dt = kF32; std::int64_t q_s0 = 0, q_s1 = 0, q_s2 = 0;
  const void* k = nullptr; int k_dt = kF32; std::int64_t k_s0 = 0, k_s1 = 0, k_s2 = 0;
  const void* v = nullptr; int v_dt = kF32; std::int64_t v_s0 = 0, v_s1 = 0, v_s2 = 0;
  const void* g = nullptr; int g_dt = kF32; std::int64_t g_s0 = 0, g_s1 = 0, g_s2 = 0;
  const void* a = nullptr; int a_dt = kF32; std::int64_t a_s0 = 0, a_s1 = 0, a_s2 = 0;
  const void* dt_bias = nullptr; int dtb_dt = kF32; std::int64_t dtb_s0 = 0, dtb_s1 = 0;
  const void* A_log = nullptr; int A_dt = kF32; std::int64_t A_s0 = 0;
  const void* beta = nullptr; int beta_dt = kF32; std::int64_t beta_s0 = 0, beta_s1 = 0;
  const void* init = nullptr; int init_dt = kF32; std::int64_t init_s0 = 0, init_s1 = 0, init_s2 = 0, init_s3 = 0;
  void* final_state = nullptr; int fin_dt = kF32; std::int64_t fin_s0 = 0, fin_s1 = 0, fin_s2 = 0, fin_s3 = 0;
  void* out = nullptr; std::int64_t out_s0 = 0, out_s1 = 0, out_s2 = 0;
  const void* cu_seqlens = nullptr; int cu_dt = kI32; std::int64_t cu_s0 = 0;
  std::int64_t T = 0, N = 0, H = 0, HV = 0, G = 1, K = 0, V = 0, vtile = 0, n_vtiles = 0;
  float scale = 0.f, lower_bound = 0.f;
  int has_lower_bound = 0, l2norm = 0, beta_is_logits = 0;
  int has_g = 0;      // 0: the raw gate a + dt_bias + A_log (kda.md A.3)
  int has_init = 0;   // 0: the state starts at zero
  int has_final = 0;  // 0: the state is not stored
  int has_cu = 0;     // 0: the whole batch is one sequence of T tokens
};

}  // namespace kparity::kernels::kda
