#pragma once
// Private to reference/sparse: the per-token loops of the faithful model and the a-priori bound laid
// out for SIMD lanes (issue 25). Each lane is one sum, over heads (q.k) or channels (P.V), taken in
// the same order and with the same operations as the scalar loop it replaces, so every lane gives
// the scalar loop's bits; only independent sums share a vector. Measured: the faithful P.V walked
// the keys' rows column by column (a stride of D doubles) and the bound recomputed per head what
// only depends on the token (bench/results/oracle_2026-12-02.md).
#include <algorithm>
#include <cstdint>

namespace kparity::reference::sparse::detail {

// QT[d * H + h] = To(Q[h * D + d]): a token's q, heads minor, for the lanes over heads. In 8 x 8
// tiles: the plain loop stored with a stride of H values, and at kernel-sized H * D (past L1) its
// stores were most of the bound's own time outside the sums (issue 32).
template <class To, class From>
void transpose_heads(std::int64_t H, std::int64_t D, const From* Q, To* QT) {
  constexpr std::int64_t kTile = 8;
  for (std::int64_t h0 = 0; h0 < H; h0 += kTile)
    for (std::int64_t d0 = 0; d0 < D; d0 += kTile) {
      const std::int64_t h1 = std::min(H, h0 + kTile), d1 = std::min(D, d0 + kTile);
      for (std::int64_t d = d0; d < d1; ++d)
        for (std::int64_t h = h0; h < h1; ++h) QT[d * H + h] = static_cast<To>(Q[h * D + d]);
    }
}

// Faithful q.k (accumulate.hpp's index order): out[j * H + h] = sum over d in order, from +0, of
// fl32(QT[d * H + h] * k_j[d]) (fp32 products and sums), for the n keys rows[j * D ...] (fp32).
void faithful_dots(std::int64_t H, std::int64_t D, std::int64_t n, const float* QT, const float* rows, float* out);
// Faithful P.V: num[d] = sum over j in order, from +0, of fl32(w[j] * rows[j * D + d]).
void faithful_pv(std::int64_t D, std::int64_t n, const float* w, const float* rows, float* num);

// The bound's A_j = sum over d in order of |q_d k_jd| (fp64), every head at once: out[j * H + h].
void abs_dots(std::int64_t H, std::int64_t D, std::int64_t n, const double* QT, const double* rows, double* out);
// The bound's per-channel sums over the keys in order, for one head's weights: t1[d] += dp_j |v|,
// hv[d] += ph_j |v|, o[d] += p_j v (from 0).
void bound_pv(std::int64_t D, std::int64_t n, const double* dp, const double* ph, const double* p, const double* rows,
              double* t1, double* hv, double* o);
// The bound's per-channel statistics over the keys in order, shared by every head: av[d] = sum |v|,
// vmax[d] = max(0, v...), vmin[d] = min(0, v...), amax[d] = max |v| (as std::max/min fold them).
void channel_stats(std::int64_t D, std::int64_t n, const double* rows, double* av, double* vmax, double* vmin,
                   double* amax);

// The bound of out[t, h, d] from the per-channel sums above (error_bound.cpp item 4), every channel
// at once and in the same arithmetic: +inf where n * amax reaches `overflow`, else
// (t1' + t2 + t3 + tuf) * inflate with t1' = min(t1, vmax - vmin), hv' = min(hv, amax),
// t2 = c2 hv' + uT0 av z_floor, t3 = c3 ((|o| + t1') + t2), tuf = c_uf amax z_floor.
void bound_out(std::int64_t D, double n, double overflow, double c2, double uT0, double z_floor, double c3, double c_uf,
               double inflate, const double* t1, const double* hv, const double* o, const double* av,
               const double* vmax, const double* vmin, const double* amax, double* out);

}  // namespace kparity::reference::sparse::detail
