#pragma once
// Host-visible launch geometry of the decode kernels (kept in step with the kernel headers, which
// static_assert against these numbers).
#include <cstdint>

namespace kparity::kernels::kda {

inline constexpr int kDecodeThreads = 128;
inline constexpr int kRecurrentThreads = 128;

// ReplaySSM dynamic shared memory: kw[L][K], g[L][K], d[L][VT], five K vectors, three VT vectors, scratch.
inline std::int64_t replay_smem_bytes(std::int64_t L, std::int64_t K, std::int64_t VT) {
  return 4 * (2 * L * K + L * VT + 5 * K + 3 * VT + 2 * (kDecodeThreads / 32));
}
// Packed decode: q_s, k_hat, alpha, one spare K vector, VT outputs, scratch.
inline std::int64_t packed_smem_bytes(std::int64_t K, std::int64_t VT) {
  return 4 * (4 * K + VT + 2 * (kDecodeThreads / 32));
}
// Recurrent: three K vectors, v and o tiles, scratch.
inline std::int64_t recurrent_smem_bytes(std::int64_t K, std::int64_t VT) {
  return 4 * (3 * K + 2 * VT + 2 * (kRecurrentThreads / 32));
}
// Rows of V per recurrent CTA: 4 warps x rows per warp (K/4 lanes per fp32 row) x 2 unrolled.
inline std::int64_t recurrent_vtile(std::int64_t K, std::int64_t V) {
  const std::int64_t lanes = K / 4 < 32 ? K / 4 : 32;
  const std::int64_t vt = 4 * (32 / lanes) * 2;
  return vt < V ? vt : V;
}

}  // namespace kparity::kernels::kda
