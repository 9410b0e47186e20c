// exact_dots_split (exact_logits.hpp): the proof is in the header.
#include "exact_logits.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "kparity/reference/exact_sum.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KPARITY_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KPARITY_CLONES
#endif

namespace kparity::reference::sparse::detail {

// At most 26 significant bits: the low 27 bits of the fraction are zero (exact_sum.hpp's test).
bool short_value(double x) noexcept {
  return (std::bit_cast<std::uint64_t>(x) & ((std::uint64_t{1} << 27) - 1)) == 0;
}

namespace {

// Four keys at a time against every head: SH[k][h] += hi(q_hd k_kd), SL[k][h] += lo(...). Lanes run
// over heads; each lane's sums are exact in any order (header), so vectorising them is free.
KPARITY_CLONES void split_dots4(std::int64_t H, std::int64_t D, const double* __restrict QT, const double* __restrict k0,
                                const double* __restrict k1, const double* __restrict k2, const double* __restrict k3,
                                double C, double* __restrict SH, double* __restrict SL) {
  double* __restrict h0 = SH;
  double* __restrict h1 = SH + H;
  double* __restrict h2 = SH + 2 * H;
  double* __restrict h3 = SH + 3 * H;
  double* __restrict l0 = SL;
  double* __restrict l1 = SL + H;
  double* __restrict l2 = SL + 2 * H;
  double* __restrict l3 = SL + 3 * H;
  for (std::int64_t h = 0; h < 4 * H; ++h) SH[h] = 0.0, SL[h] = 0.0;
  for (std::int64_t d = 0; d < D; ++d) {
    const double* __restrict q = QT + d * H;
    const double a0 = k0[d], a1 = k1[d], a2 = k2[d], a3 = k3[d];
    for (std::int64_t h = 0; h < H; ++h) {
      const double x = q[h];
      const double p0 = x * a0, p1 = x * a1, p2 = x * a2, p3 = x * a3;
      const double e0 = (p0 + C) - C, e1 = (p1 + C) - C, e2 = (p2 + C) - C, e3 = (p3 + C) - C;
      h0[h] += e0, h1[h] += e1, h2[h] += e2, h3[h] += e3;
      l0[h] += p0 - e0, l1[h] += p1 - e1, l2[h] += p2 - e2, l3[h] += p3 - e3;
    }
  }
}

// One key against every head (the tail of the key groups above).
KPARITY_CLONES void split_dots1(std::int64_t H, std::int64_t D, const double* __restrict QT, const double* __restrict k0,
                                double C, double* __restrict SH, double* __restrict SL) {
  for (std::int64_t h = 0; h < H; ++h) SH[h] = 0.0, SL[h] = 0.0;
  for (std::int64_t d = 0; d < D; ++d) {
    const double* __restrict q = QT + d * H;
    const double a0 = k0[d];
    for (std::int64_t h = 0; h < H; ++h) {
      const double p0 = q[h] * a0;
      const double e0 = (p0 + C) - C;
      SH[h] += e0;
      SL[h] += p0 - e0;
    }
  }
}

}  // namespace

bool exact_dots_split(const double* Q, std::int64_t H, std::int64_t D, const TokenKeys& keys, const RowStats& rs,
                      std::vector<double>& hi, std::vector<double>& lo) {
  const std::int64_t n = keys.size();
  if (D > 2048 || H == 0 || n == 0) return false;
  // One pass over q without branches: the non-finite and long values, max |q|, the least lsb.
  double qmax = 0;
  int q_lsb = kNoLsb;
  std::uint64_t low = 0, special = 0;
  for (std::int64_t i = 0; i < H * D; ++i) {
    const std::uint64_t b = std::bit_cast<std::uint64_t>(Q[i]);
    const std::uint64_t biased = (b >> 52) & 0x7ff, mant = b & ((std::uint64_t{1} << 52) - 1);
    special |= biased == 0x7ff;
    low |= b;
    qmax = std::max(qmax, std::fabs(Q[i]));
    const std::uint64_t m = biased ? mant | (std::uint64_t{1} << 52) : mant;
    const int l = m ? std::countr_zero(m) + (biased ? static_cast<int>(biased) - 1075 : -1074) : kNoLsb;
    q_lsb = std::min(q_lsb, l);
  }
  if (special || (low & ((std::uint64_t{1} << 27) - 1)) != 0) return false;
  // The finite keys; a key holding a non-finite value gets NaN parts (the caller's per-key path).
  std::vector<std::int64_t> live;
  int k_lsb = kNoLsb;
  double kmax = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    if (!rs.finite[j]) continue;
    if (!rs.shortv[j]) return false;
    live.push_back(j);
    k_lsb = std::min(k_lsb, rs.lsb[j]), kmax = std::max(kmax, rs.abssum[j]);
  }
  hi.assign(static_cast<std::size_t>(H * n), std::numeric_limits<double>::quiet_NaN());
  lo.assign(hi.size(), std::numeric_limits<double>::quiet_NaN());
  if (q_lsb == kNoLsb || k_lsb == kNoLsb) {  // every product with a finite key is +-0
    for (std::int64_t j : live)
      for (std::int64_t h = 0; h < H; ++h) hi[h * n + j] = lo[h * n + j] = 0.0;
    return true;
  }
  const int L = q_lsb + k_lsb;
  if (L + 94 > 1023 || L < -1074) return false;
  // sum_d |q_d k_d| <= qmax * sum_d |k_d|; the computed sum |k| of <= 2048 terms is low by less than
  // 2^-41 relative, the products below by 2^-52 each: the margin 2^-40 covers both.
  if (!(qmax * kmax * (1 + 0x1p-40) < std::ldexp(1.0, L + 93))) return false;
  const double C = 1.5 * std::ldexp(1.0, L + 94);

  std::vector<double> QT(static_cast<std::size_t>(H * D)), SH(static_cast<std::size_t>(4 * H)), SL(SH.size());
  for (std::int64_t h = 0; h < H; ++h)
    for (std::int64_t d = 0; d < D; ++d) QT[d * H + h] = Q[h * D + d];
  const double* rows = keys.rows.data();
  const auto nl = static_cast<std::int64_t>(live.size());
  for (std::int64_t g = 0; g < nl; g += 4) {
    const std::int64_t m = std::min<std::int64_t>(4, nl - g);
    auto key = [&](std::int64_t i) { return rows + live[static_cast<std::size_t>(g + i)] * D; };
    if (m == 4) {
      split_dots4(H, D, QT.data(), key(0), key(1), key(2), key(3), C, SH.data(), SL.data());
    } else {
      for (std::int64_t i = 0; i < m; ++i) split_dots1(H, D, QT.data(), key(i), C, SH.data() + i * H, SL.data() + i * H);
    }
    for (std::int64_t i = 0; i < m; ++i) {
      const std::int64_t j = live[static_cast<std::size_t>(g + i)];
      for (std::int64_t h = 0; h < H; ++h) {
        hi[h * n + j] = SH[i * H + h];
        lo[h * n + j] = SL[i * H + h];
      }
    }
  }
  return true;
}

}  // namespace kparity::reference::sparse::detail
