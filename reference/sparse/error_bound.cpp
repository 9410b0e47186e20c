// A-priori error bounds of the sparse attention ops (error_bound.hpp, issue 18 item 1b). The
// recipe, per token t and head h, with exact (oracle) quantities on the right-hand sides:
//
// 1. Logits. l_j = scale * s_j + shift_j, s_j = sum_d q_d k_jd, A_j = sum_d |q_d k_jd|. Products of
//    two bf16/f16 inputs are exact in fp32; the backend accumulates them (tensor cores, then the
//    D-slice partials: at most D + 8 additions on any path) and computes fl(fl(s) * fl32(scale) +
//    fl32(shift)) (decode folds log2 e into the scale and the sink first: one rounding more):
//      |l^_j - l_j| <= delta_j = |scale| (gamma_{D+8}(u_acc) + 4u) A_j + 4u |shift_j|.
//    The sink: sigma = fl32(sink) + fl32(shift) (times fl32(log2 e) for decode):
//      delta_sigma = 3u (|sink| + |shift|).
// 2. Weights. Every weight is e^(x_j), x_j = l_j - M (M the running max), computed as a product of
//    N_f <= ceil(n / 32) + 3 factors exp2f(fl(fl(a - b) * fl32(log2 e))) (one per tile it is
//    rescaled through, the final sink fold, the split-K combine), each one fp32 multiply. The
//    arguments of one weight's factors are all <= 0 and telescope to l^_j - M^, so their rounding
//    (subtraction, log2 e's rounding, the multiply: 3u relative) costs at most 3u |l^_j - M^| in
//    the exponent, and each factor's exp2f and multiply a relative (transcendental + u). The max
//    M^ cancels between numerator and denominator (and in M^ + ln Z^), so the backend's weights
//    are, up to one common factor, e^(x^_j) with
//      x^_j in [x_j - eps_j, x_j + eps_j],  eps_j = delta_j + 3u (|x_j| + delta_j + Delta)
//                                                      + N_f (transcendental + u) * 1.01,
//    Delta = max over keys and sink of delta (|M^ - M| <= Delta).
// 3. Softmax. Any normalised weight p^_j = e^(x^_j) / (sum_k e^(x^_k) + e^(x^_sigma)) over that box
//    lies in [P_j^lo, P_j^hi]: the weight at its top (bottom) corner with every other term at its
//    bottom (top) one. So |sum_j (p^_j - p_j) v_jd| <= sum_j max(P_j^hi - p_j, p_j - P_j^lo) |v_jd|,
//    and never more than the range of the convex hull of {0, v_jd} (both outputs lie in it).
//    A huge eps_j (a cancelling logit: the issue's +-2^100 keys) makes this the range: the output
//    is then undetermined by fp32 arithmetic, as the rule has to accept.
// 4. P.V and the division. The weights are rounded to the storage dtype for P.V (relative u_T, and
//    half the smallest subnormal u_T^0 absolutely, which only matters for f16), accumulated with
//    gamma_{n + N_f + 8}(u_acc), divided by Z^ = sum of the unrounded weights (a sum of n + 1
//    non-negative terms and N_f rescales: relative gamma_{n + N_f + 2}(u), and Z^ >= 1 since the
//    largest weight is exp2f(0) = 1; e^-shift for a fused exponent, item 6), then one multiply and
//    one division:
//      |out^_d - out_d| <= T1 + (u_T + gamma(u_acc)(1 + u_T)) sum_j P_j^hi |v_jd|
//                          + u_T^0 sum_j |v_jd| + (gamma_Z + 3u)(|out_d| + T1 + ...)
//                          + (n + 1) N_f 2^-125 max_j |v_jd|   (fp32 underflow of tiny weights).
// 5. LSE. lse^ = M^ + ln Z^ = ln sum_j e^(l^_j) up to the same factors: it lies between the log-sum
//    of the box's bottom and top corners; then Z^'s relative error, logf's 2 ulp of |ln Z^| and the
//    final addition's u |lse| (decode: (M^ + log2 Z^) * fl32(ln 2), 3u more).
// 6. Overflow. If some A_j (1 + gamma) (the raw fp32 dot), |scale| A_j (1 + gamma) + |shift|,
//    |scale|, |shift| or |sigma| reaches FLT_MAX / 2, an fp32 logit may overflow: out and lse of that (t, h) get +inf. If
//    n * max_j |v_jd| does, P.V may: out gets +inf.
//    The weights' range. Items 2-5 take the largest weight as exp2f(0) = 1. A kernel that fuses the
//    exponent, exp2(qk * scale - m) in one fma as FlashAttention-style Triton kernels do, evaluates
//    the max key's argument at minus the rounding error of its own fp32 logit M^, not at 0: every
//    weight carries the common factor e^(+-shift), shift <= u |M^| <= u max_j (|l_j| + delta_j)
//    (1 + 4u) in natural-log units (the log2 domain's half ulp of M^ log2 e is the same in ln).
//    The factor cancels in out and lse while the weights stay in range; so Z^ >= e^-shift (not 1),
//    which scales item 4's two absolute underflow terms and item 5's by e^shift. The range is lost,
//    and out and lse of that (t, h) get +inf, once e^shift reaches the storage dtype's overflow
//    (the weights are rounded to it for P.V: 65504 for f16), (n + 1) e^shift or n e^shift max|v|
//    reaches FLT_MAX / 2 (Z or P.V overflow: inf / inf = NaN), or e^-shift falls below twice the
//    kernels' denominator clamp 1e-30 (all weights tiny or zero: zeros or a wrong scale). It takes
//    |logit| >= about 11 * 2^24 (f16) or 69 * 2^24 (tests/fuzz/controls_test.cpp: the fma-exponent
//    control, keys of +-2^100). The same range decides the class of a special-value result (an
//    infinite value in a selected row): Z^ = 0 gives zeros where the exact result is NaN or inf, so
//    there too the bound is +inf, which the rule reads as "any class".
// Every bound is computed in fp64 from exact or fp64 quantities and finally inflated by 2^-30
// relative, far above the fp64 rounding of the bound's own arithmetic.
// Elements whose exact value is a special case get 0: the rule compares classes there. That is the
// whole head for a non-finite q, a NaN or +inf sink, or a selected row whose exact logit is NaN or
// +inf: upstream's convention (docs/upstream_conventions.md) makes such a head exact zeros with lse
// -inf (a NaN or +inf reaches only the denominator and the Z > 0 test fails), so bound 0 asks for
// exactly those zeros. A selected row with a non-finite value whose exact logit is -inf has weight
// exactly 0 in any implementation: the recipe runs on the other keys (its counts still include it),
// and only the columns where that row's value is non-finite (0 * inf = NaN) get 0.
#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <stdexcept>

#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/exact_sum.hpp"
#include "kparity/reference/sparse.hpp"
#include "exact_logits.hpp"
#include "head_lanes.hpp"
#include "op_checks.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/elements.hpp"
#include "sink_attention.hpp"

namespace kparity::reference::sparse {
namespace {

using detail::RowStats;
using detail::SinkAttention;
using detail::TokenKeys;
using detail::abs_dots;
using detail::bound_out;
using detail::bound_pv;
using detail::channel_stats;
using detail::transpose_heads;
using detail::exact_dots_split;
using detail::same_rows;

constexpr double kInflate = 1 + 0x1p-30;
constexpr double kOverflow = FLT_MAX / 2;
// Item 6: e^-shift below twice the kernels' denominator clamp, max(Z, 1e-30), in natural-log units.
const double kClampRange = std::log(1e30 / 2);

// Item 6: whether weights carrying a common factor e^(+-shift) may leave fp32's range. n keys; vmax
// the largest |v| (0 where only Z matters).
bool weights_leave_range(double shift, double n, double vmax, DType storage) {
  if (shift >= kClampRange) return true;
  const double e = std::exp(shift);
  return e >= store_overflow(storage) / 2 || (n + 1) * e >= kOverflow || n * e * vmax >= kOverflow;
}

struct Sink {
  std::vector<double>* out = nullptr;  // [T, H, D]
  std::vector<double>* lse = nullptr;  // [T, H], or null
};

// The class of the exact logit of a row holding a non-finite value (q finite): the products
// q_d k_d, then * scale + shift. NaN where a product or the sum is NaN (0 * inf, inf - inf).
double nonfinite_logit(const double* row, const std::vector<double>& q, double scale) {
  bool pos = false, neg = false;
  for (std::size_t d = 0; d < q.size(); ++d) {
    const double x = q[d] * row[d];
    if (std::isnan(x)) return NAN;
    pos = pos || x == INFINITY;
    neg = neg || x == -INFINITY;
  }
  if (pos == neg) return pos ? NAN : 0.0;  // both signs: inf - inf; neither: finite (not called so)
  return (pos ? INFINITY : -INFINITY) * scale;  // scale 0 gives NaN
}

// Writes the bounds of out[t, h, :] and lse[t, h] for every head. shared (optional): the oracle's
// work on the same token (sink_attention.hpp TokenWork), taken instead of computing it again: the
// same q, same_rows, row statistics and split sums as the calls below would give.
void bound_token(const SinkAttention& a, std::int64_t t, const TokenKeys& keys, const Fp32Model& m, const Sink& dst,
                 const detail::TokenWork* shared) {
  const std::int64_t H = a.q.size(1), D = a.q.size(2), n_all = keys.size();
  const DType storage = a.q.dtype;
  const double u = m.u, uT = storage == DType::f32 ? 0.0 : unit_roundoff(storage);
  const double uT0 = storage == DType::f32 ? 0.0 : underflow_unit(storage);
  // Counted over every selected key: a key of weight exactly 0 still passes through the tiles.
  const double Nf = std::ceil(static_cast<double>(n_all) / 32) + 3;
  const double g_dot = gamma_n(static_cast<double>(D + 8), m.u_acc);
  const double g_pv = gamma_n(static_cast<double>(n_all) + Nf + 8, m.u_acc);
  const double g_z = gamma_n(static_cast<double>(n_all) + Nf + 2, u);
  const double per_factor = Nf * (m.transcendental + u) * 1.01;
  const bool all_finite = std::all_of(keys.rows.begin(), keys.rows.end(), [](double v) { return std::isfinite(v); });

  std::vector<double> q(D), l(n_all), delta(n_all), eps(n_all), lo(n_all + 1), hi(n_all + 1), p(n_all), dp(n_all),
      ph(n_all);
  std::vector<double> ex_hi(n_all), ex_lo(n_all);
  std::vector<char> nan_column(D), have_hi, have_lo;
  std::vector<double> el, eh, pre_l, pre_h, suf_l, suf_h;
  TokenKeys live_keys;
  live_keys.D = D;
  // Per token (issue 25): q of every head at once; with every selected value finite, what every
  // head reads of the keys (RowStats, the channels' statistics) and the heads' |q|.|k| sums and exact
  // dots, in lanes over heads (head_lanes.hpp, exact_logits.hpp): the same values as the per-head
  // loops below, which remain for tokens with a non-finite selected value.
  std::vector<double> Q_own, QT, abs_all, hi_own, lo_own, av_c, vmax_c, vmin_c, amax_c, t1_c(D), hv_c(D), o_c(D);
  if (!shared) {
    Q_own.resize(static_cast<std::size_t>(H * D));
    for (std::int64_t h = 0; h < H && D > 0; ++h)
      elements::load_run(a.q, elements::offset_of(a.q, {t, h, std::int64_t{0}}), a.q.strides[2], D, Q_own.data() + h * D);
  }
  const std::vector<double>& Q = shared ? shared->Q : Q_own;
  RowStats rs_own;
  const RowStats& rs = shared ? shared->rs : rs_own;
  bool token_lanes = all_finite && n_all > 0 && D > 0 && lane_loops();
  bool split = false;
  // same[j]: the first key read from key j's row with its shift flag (same_rows). Such keys have the
  // same values, so everything computed per key from them alone is equal bit for bit: the row
  // statistics, the exact dots and |q|.|k| sums, the logits and their errors, and every exponential
  // of the box below (issue 32 (3): repeats are most of a kernel-sized token's keys). Computed once
  // for the first key and copied; the sums over the keys still take every key in order.
  std::vector<std::int64_t> same_own;
  if (!shared) same_rows(keys, same_own);
  const std::vector<std::int64_t>& same = shared ? shared->same : same_own;
  const std::vector<double>* hi_p = &hi_own;
  const std::vector<double>* lo_p = &lo_own;
  if (token_lanes) {
    if (!shared) rs_own.compute(keys, same.data());
    QT.resize(Q.size());
    transpose_heads(H, D, Q.data(), QT.data());
    abs_all.resize(static_cast<std::size_t>(n_all * H));
    for (std::int64_t j = 0; j < n_all; ++j) {
      double* out_j = abs_all.data() + j * H;
      if (same[j] != j) std::copy(abs_all.data() + same[j] * H, abs_all.data() + (same[j] + 1) * H, out_j);
      else abs_dots(H, D, 1, QT.data(), keys.rows.data() + j * D, out_j);
    }
    if (shared && shared->split_tried) {
      split = shared->split, hi_p = &shared->hi, lo_p = &shared->lo;
    } else {
      split = exact_dots_split(Q.data(), a.q.dtype, H, D, keys, rs, hi_own, lo_own, same.data());
    }
    av_c.resize(D), vmax_c.resize(D), vmin_c.resize(D), amax_c.resize(D);
    channel_stats(D, n_all, keys.rows.data(), av_c.data(), vmax_c.data(), vmin_c.data(), amax_c.data());
  }
  const std::vector<double>& hi_all = *hi_p;
  const std::vector<double>& lo_all = *lo_p;
  for (std::int64_t h = 0; h < H; ++h) {
    double* out_b = dst.out->data() + (t * H + h) * D;
    double* lse_b = dst.lse ? dst.lse->data() + t * H + h : nullptr;
    auto set_all = [&](double v_out, double v_lse) {
      std::fill(out_b, out_b + D, v_out);
      if (lse_b) *lse_b = v_lse;
    };
    std::copy(Q.begin() + h * D, Q.begin() + (h + 1) * D, q.begin());
    const double sink = static_cast<double>(static_cast<float>(a.attn_sink.load_flat(h)));
    const double sigma = sink + a.shift;
    // Special values. A non-finite q or a NaN or +inf sink makes the whole head a special case
    // (upstream's exact zeros and lse -inf where a NaN or +inf reaches the denominator): the rule
    // compares classes there. A selected row holding inf or NaN whose exact logit is -inf has
    // weight exactly 0 in every implementation (exp(-inf) = 0, fused or not): it leaves the other
    // keys' recipe as it is, and only the columns where its value is non-finite (0 * inf = NaN)
    // are compared by class. Any other non-finite logit (NaN, +inf) makes the head exact zeros.
    bool special = (!std::isfinite(sigma) && sigma != -INFINITY) ||
                   !std::all_of(q.begin(), q.end(), [](double x) { return std::isfinite(x); });
    const TokenKeys* use = &keys;
    std::fill(nan_column.begin(), nan_column.end(), 0);
    if (!special && !all_finite) {
      live_keys.clear();
      for (std::int64_t j = 0; j < n_all && !special; ++j) {
        const double* row = keys.rows.data() + j * D;
        if (std::all_of(row, row + D, [](double x) { return std::isfinite(x); })) {
          live_keys.rows.insert(live_keys.rows.end(), row, row + D);
          live_keys.shifted.push_back(keys.shifted[j]);
          continue;
        }
        if (nonfinite_logit(row, q, a.softmax_scale) != -INFINITY) special = true;
        for (std::int64_t d = 0; d < D; ++d) nan_column[d] = nan_column[d] || !std::isfinite(row[d]);
      }
      use = &live_keys;
    }
    if (special) {
      set_all(0.0, 0.0);
      continue;
    }
    const TokenKeys& K = *use;
    const std::int64_t n = K.size();
    const bool lanes = token_lanes && use == &keys;
    // A key's first key of the same row (itself off the lanes: the live keys carry no origins).
    auto first = [&](std::int64_t j) { return lanes ? same[j] : j; };
    int q_lsb = kNoLsb;  // taken when a dot first needs it (a zero split dot, or no split)
    bool have_q_lsb = false;
    // 1. logits and their errors; 6. overflow of a logit.
    // The fp32 constants themselves: the kernels receive fl32(scale) and fl32(shift).
    // sigma is finite or -inf (no sink) here: -inf is no overflow.
    bool overflow = (std::isfinite(sigma) && std::fabs(sigma) >= kOverflow) || std::fabs(a.softmax_scale) >= kOverflow ||
                    std::fabs(a.shift) >= kOverflow;
    double Delta = sigma == -INFINITY ? 0.0 : 3 * u * (std::fabs(sink) + std::fabs(a.shift));
    const double delta_sigma = Delta;
    double reach = std::isfinite(sigma) ? std::fabs(sigma) * (1 + 3 * u) : 0.0, v_reach = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      if (const std::int64_t g = first(j); g != j) {
        l[j] = l[g], delta[j] = delta[g];  // every max below is unchanged by a repeat
        continue;
      }
      const double* row = K.rows.data() + j * D;
      const double shift = K.shifted[j] ? a.shift : 0.0;
      double A = 0;
      if (lanes) {
        A = abs_all[j * H + h];
      } else {
        for (std::int64_t d = 0; d < D; ++d) A += std::fabs(q[d] * row[d]);
      }
      A *= 1 + static_cast<double>(D) * 0x1p-52;  // an upper bound despite fp64 rounding
      // The exact dot as the oracle takes it (the token's split sums, or short_exact_dot where it
      // certifies, else exact_sum_of_products): the same correctly rounded value.
      double s = split ? hi_all[h * n_all + j] + lo_all[h * n_all + j] : 0.0, abs_s;
      if (s == 0 && !have_q_lsb) q_lsb = min_lsb_exponent(q.data(), D), have_q_lsb = true;
      if (s == 0 && !short_exact_dot(q.data(), q_lsb, row, lanes ? rs.lsb[j] : min_lsb_exponent(row, D), D, s, abs_s))
        s = exact_sum_of_products(D, [&](std::int64_t d) { return std::pair{q[d], row[d]}; });
      l[j] = std::fma(s, a.softmax_scale, shift);
      delta[j] = std::fabs(a.softmax_scale) * (g_dot + 4 * u) * A + 4 * u * std::fabs(shift);
      // The raw dot accumulates in fp32 before the scale: it may overflow even if the logit would not.
      overflow = overflow || A * (1 + g_dot) >= kOverflow ||
                 std::fabs(a.softmax_scale) * A * (1 + g_dot) + std::fabs(shift) >= kOverflow;
      Delta = std::max(Delta, delta[j]);
      reach = std::max(reach, std::fabs(l[j]) + delta[j]);
      if (lanes) v_reach = std::max(v_reach, rs.absmax[j]);
      else for (std::int64_t d = 0; d < D; ++d) v_reach = std::max(v_reach, std::fabs(row[d]));
    }
    // 6. the weights' common factor e^(+-wshift) of a fused exponent, and its range.
    const double wshift = u * reach * (1 + 4 * u) * kInflate;
    if (overflow || (n > 0 && weights_leave_range(wshift, static_cast<double>(n), v_reach, storage))) {
      set_all(INFINITY, INFINITY);
      continue;
    }
    const double z_floor = n > 0 ? std::exp(wshift) : 1.0;  // 1 / (the least Z^)
    // 2. the box of the effective log-weights, relative to the exact max M (the kernel's finite seed
    // -FLT_MAX included: below it every weight is 0 and the overflow test above already fired).
    double M = std::max(sigma, -static_cast<double>(FLT_MAX));
    for (std::int64_t j = 0; j < n; ++j) M = std::max(M, l[j]);
    const bool has_sink = sigma != -INFINITY;
    for (std::int64_t j = 0; j < n; ++j) {
      const double x = l[j] - M;
      eps[j] = delta[j] + 3 * u * (std::fabs(x) + delta[j] + Delta) + per_factor;
      lo[j] = x - eps[j];
      hi[j] = x + eps[j];
    }
    if (has_sink) {
      const double x = sigma - M;
      const double e = delta_sigma + 3 * u * (std::fabs(x) + delta_sigma + Delta) + 2 * (m.transcendental + u) * 1.01;
      lo[n] = x - e;
      hi[n] = x + e;
    } else {
      lo[n] = hi[n] = -INFINITY;
    }
    // 3. exclusion sums sum_{k != j} e^(lo_k - c) (and of hi) without cancellation: prefix + suffix.
    const std::int64_t terms = n + 1;  // keys, then the sink
    const double c_lo = *std::max_element(lo.begin(), lo.begin() + terms);
    const double c_hi = *std::max_element(hi.begin(), hi.begin() + terms);
    // Scratch kept across heads (a kernel-sized call has up to 2^15 heads).
    el.resize(terms), eh.resize(terms);
    pre_l.assign(terms + 1, 0.0), pre_h.assign(terms + 1, 0.0), suf_l.assign(terms + 1, 0.0), suf_h.assign(terms + 1, 0.0);
    for (std::int64_t k = 0; k < terms; ++k) {
      if (const std::int64_t g = k < n ? first(k) : k; g != k) {
        el[k] = el[g], eh[k] = eh[g];
        continue;
      }
      el[k] = std::exp(lo[k] - c_lo);
      eh[k] = std::exp(hi[k] - c_hi);
    }
    for (std::int64_t k = 0; k < terms; ++k) pre_l[k + 1] = pre_l[k] + el[k], pre_h[k + 1] = pre_h[k] + eh[k];
    for (std::int64_t k = terms - 1; k >= 0; --k) suf_l[k] = suf_l[k + 1] + el[k], suf_h[k] = suf_h[k + 1] + eh[k];
    const double safe = 1 + 4 * static_cast<double>(terms) * 0x1p-53;  // their own fp64 rounding
    double Z = has_sink ? std::exp(sigma - M) : 0.0;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t g = first(j);
      p[j] = g != j ? p[g] : std::exp(l[j] - M), Z += p[j];
    }
    // e^(c_lo - hi_j) and e^(c_hi - lo_j), taken when first needed, for the key's first key.
    have_hi.assign(static_cast<std::size_t>(n), 0), have_lo.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = 0; j < n; ++j) {
      p[j] /= Z;
      const double others_lo = (pre_l[j] + suf_l[j + 1]) / safe, others_hi = (pre_h[j] + suf_h[j + 1]) * safe;
      const std::int64_t g = first(j);
      if (others_lo != 0 && !have_hi[g]) ex_hi[g] = std::exp(c_lo - hi[g]), have_hi[g] = 1;
      if (others_hi != 0 && !have_lo[g]) ex_lo[g] = std::exp(c_hi - lo[g]), have_lo[g] = 1;
      // P^hi: this weight at its top, the others at their bottom; P^lo the other way round.
      const double r_hi = others_lo == 0 ? 0.0 : others_lo * ex_hi[g];
      const double r_lo = others_hi == 0 ? 0.0 : others_hi * ex_lo[g];
      const double P_hi = std::min(1.0, 1 / (1 + r_hi) * safe), P_lo = 1 / (1 + r_lo) / safe;
      ph[j] = P_hi;
      dp[j] = std::max({P_hi - p[j], p[j] - P_lo, 0.0});
    }
    // 4. out. In lanes over the channels when the token allows (the same sums in the same order).
    if (lanes) {
      bound_pv(D, n, dp.data(), ph.data(), p.data(), K.rows.data(), t1_c.data(), hv_c.data(), o_c.data());
      bound_out(D, static_cast<double>(n), kOverflow, uT + g_pv * (1 + uT), uT0, z_floor, g_z + 3 * u,
                (static_cast<double>(n) + 1) * Nf * 0x1p-125, kInflate, t1_c.data(), hv_c.data(), o_c.data(), av_c.data(),
                vmax_c.data(), vmin_c.data(), amax_c.data(), out_b);
    }
    for (std::int64_t d = 0; d < D && !lanes; ++d) {
      double t1 = 0, hv = 0, av = 0, vmax = 0, vmin = 0, amax = 0, o = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double v = K.rows[j * D + d], av_j = std::fabs(v);
        t1 += dp[j] * av_j;
        hv += ph[j] * av_j;
        av += av_j;
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
        amax = std::max(amax, av_j);
        o += p[j] * v;
      }
      if (static_cast<double>(n) * amax >= kOverflow) {
        out_b[d] = INFINITY;
        continue;
      }
      t1 = std::min(t1, vmax - vmin);
      hv = std::min(hv, amax);
      const double t2 = (uT + g_pv * (1 + uT)) * hv + uT0 * av * z_floor;
      const double t3 = (g_z + 3 * u) * (std::fabs(o) + t1 + t2);
      const double tuf = (static_cast<double>(n) + 1) * Nf * 0x1p-125 * amax * z_floor;
      out_b[d] = (t1 + t2 + t3 + tuf) * kInflate;
    }
    // A zero-weight key's non-finite value: 0 * inf, the class of the exact result (NaN).
    for (std::int64_t d = 0; d < D; ++d)
      if (nan_column[d]) out_b[d] = 0.0;
    // 5. lse.
    if (lse_b && Z > 0) {
      const double lnZ = std::log(Z);
      const double ln_lo = c_lo + std::log(pre_l[terms] / safe), ln_hi = c_hi + std::log(pre_h[terms] * safe);
      const double t1 = std::max({ln_hi - lnZ, lnZ - ln_lo, 0.0});
      const double tz = g_z * 1.01 + (static_cast<double>(n) + 1) * Nf * 0x1p-125 * z_floor;
      const double lse = M + lnZ;
      *lse_b = (t1 + tz + m.transcendental * (std::fabs(lnZ) + t1 + tz) + 4 * u * (std::fabs(lse) + t1 + tz)) * kInflate;
    }
  }
}

// oracle (optional): the oracle's run of the same call, token by token beside the bound, sharing
// each token's work (TokenWork).
template <class Gather>
ErrorBounds bound_op(const SinkAttention& a, std::int64_t T, std::int64_t D, const Fp32Model& m, Gather gather,
                     const SinkAttention* oracle = nullptr) {
  ErrorBounds b;
  const std::int64_t H = a.q.size(1);
  std::vector<double>& out = b["out"];
  out.assign(static_cast<std::size_t>(T * H * D), 0.0);
  std::vector<double>* lse = nullptr;
  if (a.lse) {
    lse = &b["lse"];
    lse->assign(static_cast<std::size_t>(T * H), 0.0);
  }
  TokenKeys keys;
  keys.D = D;
  detail::TokenWork work;
  for (std::int64_t t = 0; t < T; ++t) {
    keys.clear();
    gather(t, keys);
    if (oracle) detail::attend_oracle_sharing(*oracle, t, keys, work);
    bound_token(a, t, keys, m, Sink{&out, lse}, oracle ? &work : nullptr);
  }
  return b;
}

ErrorBounds prefill_bound(const PagedPrefillArgs& a, const Fp32Model& m, const SinkAttention* oracle) {
  if (a.q.ndim() != 3 || a.unified_kv.ndim() != 2 || a.kv.ndim() != 2 || a.unified_kv.size(1) != a.q.size(2) ||
      a.kv.size(1) != a.q.size(2))
    throw std::invalid_argument("sparse/paged_prefill error bound: q must be 3-D, unified_kv/kv 2-D with q's head dim");
  const SinkAttention att{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                          a.softmax_scale, a.replicated_logit_shift, detail::ExpBase::e, Precision::oracle};
  return bound_op(att, a.q.size(0), a.q.size(2), m, [&](std::int64_t t, TokenKeys& keys) {
    const auto pre = detail::csr_span(a.kv_indptr_prefix, a.kv_indices_prefix, t);
    for (std::int64_t j = pre.begin; j < pre.end; ++j)
      if (const std::int64_t i = a.kv_indices_prefix.load_int_flat(j); i >= 0) keys.append(a.unified_kv, i, false);
    const auto ext = detail::csr_span(a.kv_indptr_extend, a.kv_indices_extend, t);
    for (std::int64_t j = ext.begin; j < ext.end; ++j)
      if (const std::int64_t e = a.kv_indices_extend.load_int_flat(j); e >= 0) keys.append(a.kv, e, true);
  }, oracle);
}

ErrorBounds decode_bound(const PagedDecodeArgs& a, const Fp32Model& m, const SinkAttention* oracle) {
  if (a.q.ndim() != 3 || a.unified_kv.ndim() != 2 || a.unified_kv.size(1) != a.q.size(2))
    throw std::invalid_argument("sparse/paged_decode error bound: q must be 3-D, unified_kv 2-D with q's head dim");
  const SinkAttention att{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                          a.softmax_scale, 0.0, detail::ExpBase::two, Precision::oracle};
  return bound_op(att, a.q.size(0), a.q.size(2), m, [&](std::int64_t t, TokenKeys& keys) {
    const auto span = detail::csr_span(a.kv_indptr, a.kv_indices, t);
    for (std::int64_t j = span.begin; j < span.end; ++j) keys.append(a.unified_kv, a.kv_indices.load_int_flat(j), false);
  }, oracle);
}

}  // namespace

ErrorBounds paged_prefill_error_bound(const PagedPrefillArgs& a, const Fp32Model& m) { return prefill_bound(a, m, nullptr); }
ErrorBounds paged_decode_error_bound(const PagedDecodeArgs& a, const Fp32Model& m) { return decode_bound(a, m, nullptr); }

// The oracle's own checks and guards first (paged_prefill.cpp, paged_decode.cpp), so a call the
// oracle refuses throws as it does; its SinkAttention is the oracle run's.
ErrorBounds paged_prefill_oracle_and_bound(const PagedPrefillArgs& a, const ValidateOptions& options, const Fp32Model& m) {
  detail::check_prefill_for_reference(a, options);
  const SinkAttention oracle{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                             a.softmax_scale, a.replicated_logit_shift, detail::ExpBase::e, Precision::oracle};
  return prefill_bound(a, m, &oracle);
}
ErrorBounds paged_decode_oracle_and_bound(const PagedDecodeArgs& a, const ValidateOptions& options, const Fp32Model& m) {
  detail::check_decode_for_reference(a, options);
  const SinkAttention oracle{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                             a.softmax_scale, 0.0, detail::ExpBase::two, Precision::oracle};
  return decode_bound(a, m, &oracle);
}

}  // namespace kparity::reference::sparse
