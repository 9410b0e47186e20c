// Softmax over the selected keys plus a zero-value sink logit (spec sparse_attention.md C.1, C.3,
// C.5, C.6). Mirrors the finalisation of sglang's unified_kv_kernels/paged_prefill.py.
//
// Layout of this file: the degenerate-head rules (C.3) first, in one place for both precisions and
// every path; then the faithful model; then the oracle, whose sums take the fast paths of issue 25
// (exact_logits.hpp for q.k, exact_lanes.hpp for P.V) where they apply and the per-sum exact path
// (exact_sum.hpp) where they do not. Either way every oracle sum is the exact one rounded once, so
// the paths give the same bits.
#include "sink_attention.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "exact_logits.hpp"
#include "head_lanes.hpp"
#include "zero_signs.hpp"
#include "kparity/core/dtype.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/exact_lanes.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference::sparse::detail {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

// ---- The degenerate heads (C.3), in one place ----------------------------------------------------
// What a head writes when its softmax has no ordinary value: `fill` into every channel of out and
// `lse` into lse. Both precisions and both oracle paths decide through these two functions only.

// Upstream's convention (docs/upstream_conventions.md, measured on the H200 against sglang's
// paged_prefill.py and paged_decode.py): tl.max drops NaN, so a NaN logit (NaN in q or in a selected
// row, 0 * inf) or a NaN sink reaches only the denominator, Z = ... + exp(NaN) is NaN, and their
// finalisation `where(l > 0, acc * alpha / max(l, 1e-30), 0)` writes exact zeros. A +inf sink or
// logit: Z = ... + exp(inf - inf) is NaN, the same zeros. lse: -inf, as C.6's `Z > 0 ? M + ln Z :
// -inf` says ([inference]: the measured sglang commits have no return_lse).

// Before any sum: a +inf or NaN sink or a NaN logit. Decided early so the oracle's exponent pass
// never sees a NaN logit; the result is what the Z > 0 test below would give.
template <class F>
bool degenerate_before_sums(F sigma, bool any_nan, double& fill, F& lse) {
  if (sigma != std::numeric_limits<F>::infinity() && !any_nan) return false;
  fill = 0.0, lse = -std::numeric_limits<F>::infinity();
  return true;
}

// After the weights' sum Z: the kernel normalises only when Z > 0. Z = 0 (no key and a -inf sink, or
// every weight underflowed) or NaN (a +inf logit: inf - inf) gives zeros, lse -inf. A selected row
// whose logit is -inf keeps weight 0; its non-finite columns give 0 * inf = NaN only when Z > 0. With
// Z = 0 sglang's prefill writes 0 and so does kparity (its decode writes NaN there: an upstream
// inconsistency, docs/upstream_conventions.md).
template <class F>
bool degenerate_after_sums(F Z, double& fill, F& lse) {
  if (Z > 0) return false;
  fill = 0.0, lse = -std::numeric_limits<F>::infinity();
  return true;
}

// The kernel's finite seed of the running max: an empty key set must not give -inf - -inf.
template <class F>
F max_seed() {
  return static_cast<F>(-FLT_MAX);
}

// Stores one head's results: out[t, h, :] from `result` (D values) and lse[t, h]; store() rounds
// fp64 to the output dtype once (round to nearest even).
void store_head(const SinkAttention& a, std::int64_t t, std::int64_t h, const double* result, double lse) {
  const std::int64_t D = a.q.size(2);
  elements::require_host(a.out);
  const std::int64_t base = elements::offset_of(a.out, {t, h, std::int64_t{0}});
  elements::store_run(a.out, base, a.out.strides[2], D, result);
  if (a.lse) a.lse->store(std::array{t, h}, lse);
}

// q[t, h, :] of every head, widened: H x D.
void load_q(const SinkAttention& a, std::int64_t t, std::vector<double>& Q) {
  const std::int64_t H = a.q.size(1), D = a.q.size(2);
  Q.resize(static_cast<std::size_t>(H * D));
  if (H * D == 0) return;
  for (std::int64_t h = 0; h < H; ++h)
    elements::load_run(a.q, elements::offset_of(a.q, {t, h, std::int64_t{0}}), a.q.strides[2], D, Q.data() + h * D);
}

// The sink's logit sigma of head h: widened to fp32 whatever its dtype (B.1), then shifted like an
// extend row; flat like upstream's pointer arithmetic and the contract's length check.
template <class F>
F sink_logit(const SinkAttention& a, std::int64_t h, bool two, F shift) {
  const float sink32 = static_cast<float>(a.attn_sink.load_flat(h));
  return two ? static_cast<F>(sink32) * static_cast<F>(kLog2e) + shift : static_cast<F>(sink32) + shift;
}

// ---- The faithful model --------------------------------------------------------------------------
// fp32 arithmetic in index order; weights rounded to the storage dtype for P.V only (C.4 item 4).
void attend_faithful(const SinkAttention& a, std::int64_t t, const TokenKeys& keys) {
  using F = float;
  const bool two = a.base == ExpBase::two;
  const std::int64_t H = a.q.size(1), D = a.q.size(2), n = keys.size();
  const DType storage = a.q.dtype;
  // The kernel receives the scale as an fp32 constant; decode folds log2(e) in on the host first.
  const F scale = static_cast<F>(two ? a.softmax_scale * kLog2e : a.softmax_scale);
  const F shift = static_cast<F>(two ? a.shift * kLog2e : a.shift);
  std::vector<F> qrow(D), s(n), num(D), wv(n), dots(n);
  std::vector<double> result(D), Q;
  load_q(a, t, Q);
  // In the faithful model's own order (no control accumulation) the dots of every head and the P.V
  // run in lanes (head_lanes.hpp): the same sums, in the same order, from fp32 copies made once.
  const bool lanes = accumulation() == Accumulation::index_order && lane_loops();
  std::vector<F> QT, rows32, all_dots;
  if (lanes) {
    QT.resize(static_cast<std::size_t>(H * D)), rows32.resize(keys.rows.size()), all_dots.resize(static_cast<std::size_t>(n * H));
    transpose_heads(H, D, Q.data(), QT.data());
    for (std::size_t i = 0; i < keys.rows.size(); ++i) rows32[i] = static_cast<F>(keys.rows[i]);
    faithful_dots(H, D, n, QT.data(), rows32.data(), all_dots.data());
  }
  for (std::int64_t h = 0; h < H; ++h) {
    for (std::int64_t d = 0; d < D; ++d) qrow[d] = static_cast<F>(Q[h * D + d]);
    const F sig = sink_logit<F>(a, h, two, shift);
    bool any_nan = std::isnan(sig);
    F M = max_seed<F>();
    for (std::int64_t j = 0; j < n; ++j) {
      const double* row = keys.rows.data() + j * D;
      dots[j] = lanes ? all_dots[j * H + h]
                      : faithful_sum(D, [&](std::int64_t d) { return std::pair{qrow[d], static_cast<F>(row[d])}; });
      s[j] = faithful_madd(dots[j], scale, keys.shifted[j] ? shift : F(0));
      if (std::isnan(s[j])) any_nan = true; else if (s[j] > M) M = s[j];
    }
    if (!std::isnan(sig) && sig > M) M = sig;
    double fill = 0.0;
    F lse = 0;
    if (!degenerate_before_sums(sig, any_nan, fill, lse)) {
      const F w_sink = two ? std::exp2(sig - M) : std::exp(sig - M);
      // Test-only fault (planted_fault.hpp): the sink's weight leaks into the numerator.
      const bool sink_leaks = planted_fault() == PlantedFault::sink_in_numerator;
      // The logits become the weights; wv: rounded to the storage dtype for P.V (C.4 item 4).
      // The fma-exponent control (accumulate.hpp) fuses an unshifted row's exponent,
      // exp2(qk * scale - m) in one fma, as FlashAttention-style kernels do.
      const bool fused = accumulation() == Accumulation::fma_exponent;
      for (std::int64_t j = 0; j < n; ++j) {
        const F x = fused && !keys.shifted[j] ? std::fma(dots[j], scale, -M) : s[j] - M;
        s[j] = two ? std::exp2(x) : std::exp(x);
        wv[j] = static_cast<F>(round_through(static_cast<float>(s[j]), storage));
      }
      // The sink's weight folded in once, at the end (C.4 item 5).
      const F Z = faithful_sum(n + 1, [&](std::int64_t j) { return std::pair{j < n ? s[j] : w_sink, F(1)}; });
      if (!degenerate_after_sums(Z, fill, lse)) {  // P.V only where it is read
        if (lanes) {
          faithful_pv(D, n, wv.data(), rows32.data(), num.data());
        } else {
          for (std::int64_t d = 0; d < D; ++d)
            num[d] = faithful_sum(n, [&](std::int64_t j) { return std::pair{wv[j], static_cast<F>(keys.rows[j * D + d])}; });
        }
        if (sink_leaks)
          for (std::int64_t d = 0; d < D; ++d) num[d] += w_sink;
        const F denom = std::max(Z, static_cast<F>(1e-30));
        for (std::int64_t d = 0; d < D; ++d) result[d] = static_cast<double>(num[d] / denom);
        lse = two ? (M + std::log2(Z)) * static_cast<F>(kLn2) : M + std::log(Z);
        store_head(a, t, h, result.data(), static_cast<double>(lse));
        continue;
      }
    }
    std::fill(result.begin(), result.end(), fill);
    store_head(a, t, h, result.data(), static_cast<double>(lse));
  }
}

// ---- The oracle ----------------------------------------------------------------------------------
// Every sum is exact and rounded once (exact_sum.hpp): the dot q.k_j, the logit dot * scale + shift
// (one fma), the exponent l_j - M as q.(k_j - k_max) (below), Z = sum of the weights plus the sink's,
// and each channel of P.V; exp, log and the division are correctly rounded or faithful libm fp64 (the
// weights' relative error ~1e-16 is 2^-29 times below anything the rule allows a fp32 backend). The
// oracle computes the same real numbers in both exponent bases.

// The exact dots of one head, from the token's split sums when they apply (exact_logits.hpp), else
// per key: in plain fp64 where short_exact_dot certifies it, else exact_sum_of_products.
struct HeadDots {
  const double* qrow = nullptr;
  const double* hi = nullptr;  // this head's row of the split sums, or null
  const double* lo = nullptr;
  std::vector<double> kdot, abs_dot;
  std::vector<int> lsb;
  std::vector<unsigned char> short_ok;

  void compute(const TokenKeys& keys, const RowStats& rs, std::int64_t D) {
    const std::int64_t n = keys.size();
    kdot.resize(n), abs_dot.resize(n), lsb.resize(n), short_ok.assign(n, 0);
    const int q_lsb = hi ? 0 : min_lsb_exponent(qrow, D);
    for (std::int64_t j = 0; j < n; ++j) {
      const double* row = keys.rows.data() + j * D;
      if (hi && !std::isnan(hi[j])) {
        kdot[j] = hi[j] + lo[j];  // the correctly rounded exact dot
        if (kdot[j] == 0) {
          // An exact zero: -0 iff every term is a -0 product (exact_sum.hpp's rule).
          bool neg = true;
          for (std::int64_t d = 0; d < D && neg; ++d)
            neg = (qrow[d] == 0 || row[d] == 0) && std::signbit(qrow[d]) != std::signbit(row[d]);
          kdot[j] = neg ? -0.0 : 0.0;
        }
        continue;
      }
      // A key holding a non-finite value with q finite: the exact sum's value is that of its
      // non-finite terms alone (exact_sum.hpp), which sit at the row's non-finite positions.
      if (hi && oracle_fast_paths()) {
        bool nan = false, pos = false, neg = false;
        for (std::int64_t d : rs.special_at[j]) {
          const double x = qrow[d] * row[d];
          if (std::isnan(x)) nan = true;
          else if (x > 0) pos = true;
          else neg = true;
        }
        kdot[j] = nan || (pos && neg) ? std::numeric_limits<double>::quiet_NaN() : pos ? INFINITY : -INFINITY;
        continue;
      }
      // Everything outside the split.
      lsb[j] = (hi ? min_lsb_exponent(qrow, D) : q_lsb) + rs.lsb[j];  // (hi: rare, a non-finite key)
      short_ok[j] = oracle_fast_paths() && short_exact_dot(qrow, lsb[j] - rs.lsb[j], row, rs.lsb[j], D, kdot[j], abs_dot[j]);
      if (!short_ok[j]) kdot[j] = oracle_sum(D, [&](std::int64_t d) { return std::pair{qrow[d], row[d]}; });
    }
  }
  // The exact difference q.k_j - q.k_m, rounded once.
  double diff(const TokenKeys& keys, std::int64_t D, std::int64_t j, std::int64_t m) const {
    if (j == m) return 0.0;
    if (hi && !std::isnan(hi[j]) && !std::isnan(hi[m])) return (hi[j] - hi[m]) + (lo[j] - lo[m]);  // exact_logits.hpp
    // Both dots exact in fp64 and their terms together certified (short_exact_dot's argument on the
    // 2D terms): the difference of the two is the exact one.
    if (!hi && short_ok[j] && short_ok[m] && exact_in_fp64(abs_dot[j] + abs_dot[m], std::min(lsb[j], lsb[m])))
      return kdot[j] - kdot[m];
    const double* row = keys.rows.data() + j * D;
    const double* top = keys.rows.data() + m * D;
    return oracle_sum(2 * D, [&](std::int64_t i) {
      return i < D ? std::pair{qrow[i], row[i]} : std::pair{-qrow[i - D], top[i - D]};
    });
  }
};

// P.V of one head, num[d] = sum_j w_j v_jd exactly rounded: the lane kernels over the channels
// (exact_lanes.hpp) for the keys whose products are all in the transformations' range, a bound for
// keys whose products are all tiny, exact_sum_of_products for the rest (and for every channel when a
// key falls between, a weight or value is not finite, or the fast paths are off).
void weighted_values(const TokenKeys& keys, const RowStats& rs, const std::vector<std::int64_t>& same,
                     const std::vector<double>& w, std::int64_t D, double* num, ZeroSigns& zs) {
  const std::int64_t n = keys.size();
  auto exact_channel = [&](std::int64_t d) {
    // One non-zero term among finite ones (the rest exact zeros): the sum is that product, and the
    // product rounded once is the exact sum rounded once, tiny or not. The lanes leave such channels
    // undecided when the product is tiny (a weight near underflow, a zero value of the top key), and
    // the long accumulator was a tenth of a kernel-sized case (issue 25). A zero result gets its sign
    // from zero_signs below either way.
    if (oracle_fast_paths()) {
      int nonzero = 0;
      double only = 0.0;
      bool finite = true;
      for (std::int64_t j = 0; j < n && finite && nonzero < 2; ++j) {
        const double v = keys.rows[j * D + d];
        finite = std::isfinite(w[j]) && std::isfinite(v);
        if (w[j] != 0 && v != 0) ++nonzero, only = w[j] * v;
      }
      if (finite && nonzero == 1) return only;
      // A channel the lanes leave undecided is most often a sum on a rounding midpoint whose errors
      // add up exactly (exact_sum.hpp's exact_error_sum): tried first, in one pass.
      double r;
      if (finite && reference::detail::exact_error_sum(static_cast<std::size_t>(n), [&](std::size_t j) {
            return std::pair{w[j], keys.rows[static_cast<std::int64_t>(j) * D + d]};
          }, r))
        return r;
    }
    return oracle_sum(n, [&](std::int64_t j) { return std::pair{w[j], keys.rows[j * D + d]}; });
  };
  // The sign of an exact zero sum (exact_sum.hpp): -0 iff every term is a -0 product, i.e. has a zero
  // factor and factors of opposite signs. (Terms skipped below as exact zeros count too.) With every
  // weight +0 or positive (exp's results; tested, else the key-by-key walk below), a term is a -0
  // product iff its value's sign bit is set and the value or the weight is zero: the token's
  // ZeroSigns decide a channel from its values alone (+0: a value with its sign bit clear; -0: every
  // value -0) or from whether no weight or every weight is zero, and only a channel whose values are
  // all negative-signed, some non-zero, under weights some zero, is walked key by key. Per head that
  // is a branch-free blend over the channels instead of a scalar walk (a kernel-sized token with one
  // key and integer values has zero channels in most heads; issue 25: the kernel-tier decode oracle
  // 21.7 -> 18.2 ms a case).
  auto channel_sign = [&](std::int64_t d) {
    for (std::int64_t j = 0; j < n; ++j) {
      const double wj = w[j], v = keys.rows[j * D + d];
      if (!((wj == 0 || v == 0) && std::signbit(wj) != std::signbit(v))) return 0.0;
    }
    return -0.0;
  };
  auto zero_signs = [&] {
    bool unsigned_weights = true;
    std::int64_t zero_weights = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      unsigned_weights = unsigned_weights && !std::signbit(w[j]);
      zero_weights += w[j] == 0;
    }
    if (!unsigned_weights) {
      for (std::int64_t d = 0; d < D; ++d)
        if (num[d] == 0) num[d] = channel_sign(d);
      return;
    }
    zs.compute(keys);
    zs.blend(num, zero_weights == n);
    if (zs.any_open && zero_weights > 0 && zero_weights < n)
      for (std::int64_t d = 0; d < D; ++d)
        if (num[d] == 0 && zs.open[d]) num[d] = channel_sign(d);
  };
  if (n == 0) {  // the empty sum is +0 (exact_sum.hpp)
    std::fill(num, num + D, 0.0);
    return;
  }
  bool fast = oracle_fast_paths() && D > 0;
  thread_local std::vector<std::int32_t> idx;
  thread_local std::vector<double> b;
  idx.clear(), b.clear();
  // Keys read from the same row with the same weight (same: same_rows' answer): one term with their multiplicity
  // k, the weight k * w as an exact sum hi + lo of doubles (TwoProduct; 2 * w alone for k = 2), so the
  // lanes sum the same real number with fewer terms; a key left on its own otherwise.
  thread_local std::vector<std::int64_t> count;
  if (fast) {
    count.assign(static_cast<std::size_t>(n), 0);
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t g = same[j];
      ++count[g != j && std::bit_cast<std::uint64_t>(w[j]) == std::bit_cast<std::uint64_t>(w[g]) ? g : j];
    }
  }
  double tiny = 0.0;
  std::size_t tiny_terms = 0;
  bool all_regular = true;  // every term in the lanes has every product in the transformations' range
  auto lane_term = [&](std::int64_t j, double bj) {
    all_regular = all_regular && rs.finite[j] && bj * rs.absmin[j] >= 0x1p-959 && bj * rs.absmax[j] <= 0x1p999;
    idx.push_back(static_cast<std::int32_t>(j));
    b.push_back(bj);
  };
  for (std::int64_t j = 0; j < n && fast; ++j) {
    const std::int64_t k = count[j];
    if (k == 0) continue;  // counted with the first key of its row
    const double wj = w[j];
    if (!std::isfinite(wj)) {
      fast = false;
    } else if (rs.finite[j] && (wj == 0 || rs.absmax[j] == 0)) {
      continue;  // +-0 products with a zero factor: exact zeros
    } else if (rs.finite[j] && wj * rs.absmax[j] < 0x1p-961) {
      // Every product of the key below 2^-960: left out, bounded as exact_sum_of_products does.
      for (std::int64_t c = 0; c < k; ++c) tiny += wj * rs.absmax[j] * (1 + 0x1p-52) + 0x1p-1074;
      tiny_terms += static_cast<std::size_t>(k);
    } else {
      // In the lanes. A key whose products are not all in range (a non-finite value, a weight
      // between the tiny and the regular ones) is too: the kernels find the lanes it leaves out of
      // range, and only those are summed again exactly.
      const double hi = static_cast<double>(k) * wj;
      if (k == 1) {
        lane_term(j, wj);
      } else if (std::isfinite(hi) && std::fabs(hi) >= 0x1p-900 && rs.finite[j]) {
        // k * w = hi + lo exactly (k an integer, no underflow: the product's error is a multiple of
        // w's last place, representable); k = 2 gives lo = 0.
        const double lo = std::fma(static_cast<double>(k), wj, -hi);
        lane_term(j, hi);
        if (lo != 0) lane_term(j, lo);
      } else {
        for (std::int64_t c = 0; c < k; ++c) lane_term(j, wj);
      }
    }
  }
  if (!fast) {
    for (std::int64_t d = 0; d < D; ++d) num[d] = exact_channel(d);
    return;
  }
  if (idx.empty() && tiny_terms == 0) {  // every term an exact zero (a weight that underflowed, a zero row)
    std::fill(num, num + D, 0.0);
    zero_signs();
    return;
  }
  if (idx.size() == 1 && tiny_terms == 0 && all_regular) {
    // One term: its product rounded once is the exact sum (zeros again by the rule below).
    const double* v = keys.rows.data() + static_cast<std::int64_t>(idx[0]) * D;
    for (std::int64_t d = 0; d < D; ++d) num[d] = b[0] * v[d];
    if (any_zero(num, D)) zero_signs();
    return;
  }
  // The lanes' sums and their certificates in one pass (exact_lanes.hpp dot2_finish).
  const std::size_t m = idx.size() + tiny_terms;
  lanes::dot2_finish(idx.size(), static_cast<std::size_t>(D), keys.rows.data(), static_cast<std::size_t>(D), idx.data(),
                     b.data(), m, tiny * (1 + 0x1p-20), num,
                     [&](std::size_t d) { return exact_channel(static_cast<std::int64_t>(d)); }, all_regular);
  // An exact zero's sign follows exact_sum.hpp's rule over every term, skipped ones included (first
  // a branch-free test whether any channel is zero: usually none is).
  if (any_zero(num, D)) zero_signs();
}

// work: the token's q, key statistics and split dots, left there for the a-priori bound.
void attend_oracle(const SinkAttention& a, std::int64_t t, const TokenKeys& keys, TokenWork& work) {
  const std::int64_t H = a.q.size(1), D = a.q.size(2), n = keys.size();
  const double scale = a.softmax_scale, shift = a.shift;
  std::vector<double> result(D), s(n), x(n);
  std::vector<double>& Q = work.Q;
  load_q(a, t, Q);
  const std::vector<std::int64_t>& same = work.same;
  same_rows(keys, work.same);
  const RowStats& rs = work.rs;
  work.rs.special_at.clear();  // only non-finite rows set theirs: none is left from an earlier token
  work.rs.compute(keys, same.data());
  thread_local ZeroSigns zs;  // the token's zero signs, computed when a head first needs them
  zs.ready = false;
  work.split_tried = oracle_fast_paths();
  work.split = work.split_tried && exact_dots_split(Q.data(), a.q.dtype, H, D, keys, work.rs, work.hi, work.lo, same.data());
  const bool split = work.split;
  const std::vector<double>& hi = work.hi;
  const std::vector<double>& lo = work.lo;
  HeadDots dots;
  for (std::int64_t h = 0; h < H; ++h) {
    dots.qrow = Q.data() + h * D;
    dots.hi = split ? hi.data() + h * n : nullptr;
    dots.lo = split ? lo.data() + h * n : nullptr;
    dots.compute(keys, rs, D);
    const double sig = sink_logit<double>(a, h, false, shift);
    bool any_nan = std::isnan(sig);
    double M = max_seed<double>();
    for (std::int64_t j = 0; j < n; ++j) {
      s[j] = std::fma(dots.kdot[j], scale, keys.shifted[j] ? shift : 0.0);
      if (std::isnan(s[j])) any_nan = true; else if (s[j] > M) M = s[j];
    }
    if (!std::isnan(sig) && sig > M) M = sig;
    double fill = 0.0, lse = 0.0;
    if (!degenerate_before_sums(sig, any_nan, fill, lse)) {
      const double w_sink = std::exp(sig - M);
      // Test-only fault (planted_fault.hpp): the sink's weight leaks into the numerator.
      const bool sink_leaks = planted_fault() == PlantedFault::sink_in_numerator;
      // The exponents l_j - M when a key holds the max: scale * (exact q.(k_j - k_max), rounded
      // once) + shift_j - shift_max, so that logits of 1e30 + 2 and 1e30 - 2 still differ by 4
      // (their fp64 values do not). Against the sink or the finite seed: l_j - M in fp64.
      // The rounded logits can tie (or, across the two sources, swap) keys whose exact logits
      // differ: if an exponent comes out positive, the pass repeats around that key.
      // Non-finite logits (an infinite value in a selected row) keep C.3's fp64 semantics:
      // exp(inf - inf) is NaN, exp(-inf - M) is 0.
      std::int64_t jmax = -1;
      for (std::int64_t j = 0; j < n && jmax < 0 && std::isfinite(M); ++j)
        if (s[j] == M) jmax = j;
      for (int pass = 0; pass < 2 && jmax >= 0; ++pass) {
        std::int64_t next = jmax;
        x[jmax] = 0.0;
        for (std::int64_t j = 0; j < n; ++j) {
          if (!std::isfinite(s[j])) {
            x[j] = s[j] - M;
            continue;
          }
          const double dshift = (keys.shifted[j] ? shift : 0.0) - (keys.shifted[jmax] ? shift : 0.0);
          x[j] = std::fma(dots.diff(keys, D, j, jmax), scale, dshift);
          if (x[j] > x[next]) next = j;
        }
        if (next == jmax) break;
        jmax = next;
      }
      std::vector<double>& w = s;  // the logits become the weights
      for (std::int64_t j = 0; j < n; ++j) w[j] = std::exp(jmax < 0 ? s[j] - M : x[j]);
      const double Z = oracle_sum(n + 1, [&](std::int64_t j) { return std::pair{j < n ? w[j] : w_sink, 1.0}; });
      if (!degenerate_after_sums(Z, fill, lse)) {  // P.V only where it is read
        if (sink_leaks) {
          for (std::int64_t d = 0; d < D; ++d)
            result[d] = oracle_sum(n + 1, [&](std::int64_t j) {
              return j < n ? std::pair{w[j], keys.rows[j * D + d]} : std::pair{w_sink, 1.0};
            });
        } else {
          weighted_values(keys, rs, same, w, D, result.data(), zs);
        }
        const double denom = std::max(Z, 1e-30);
        for (std::int64_t d = 0; d < D; ++d) result[d] = result[d] / denom;
        store_head(a, t, h, result.data(), M + std::log(Z));
        continue;
      }
    }
    std::fill(result.begin(), result.end(), fill);
    store_head(a, t, h, result.data(), lse);
  }
}

}  // namespace

void RowStats::compute(const TokenKeys& k, const std::int64_t* same) {
  const std::int64_t n = k.size(), D = k.D;
  special_at.resize(n);
  finite.assign(n, 1), shortv.assign(n, 1), lsb.assign(n, kNoLsb), absmax.assign(n, 0.0), absmin.assign(n, INFINITY), abssum.assign(n, 0.0);
  all_finite = all_short = true;
  for (std::int64_t j = 0; j < n; ++j) {
    if (same != nullptr && same[j] != j) {  // the same row as an earlier key: its statistics
      const std::int64_t g = same[j];
      special_at[j] = special_at[g];
      finite[j] = finite[g], shortv[j] = shortv[g], lsb[j] = lsb[g], absmax[j] = absmax[g], absmin[j] = absmin[g];
      abssum[j] = abssum[g];
      continue;
    }
    const double* row = k.rows.data() + j * D;
    double mx = 0, mn = INFINITY, sum = 0;
    int l = kNoLsb;
    bool fin = true, shrt = true;
    for (std::int64_t d = 0; d < D; ++d) {
      const double v = row[d], av = std::fabs(v);
      fin = fin && std::isfinite(v);
      shrt = shrt && short_value(v);
      mx = std::max(mx, av);
      if (av != 0) mn = std::min(mn, av);
      sum += av;
      l = std::min(l, lsb_exponent(v));
    }
    if (!fin) {
      special_at[j].clear();
      for (std::int64_t d = 0; d < D; ++d)
        if (!std::isfinite(row[d])) special_at[j].push_back(d);
    }
    finite[j] = fin, shortv[j] = shrt, lsb[j] = l, absmax[j] = mx, absmin[j] = mn, abssum[j] = sum;
    all_finite = all_finite && fin;
    all_short = all_short && shrt;
  }
}

void TokenKeys::append(const TensorView& src, std::int64_t r, bool shift) {
  if (r < 0 || r >= src.size(0))
    throw std::out_of_range("sparse reference: row " + std::to_string(r) + " outside a source of " +
                            std::to_string(src.size(0)) + " rows");
  const std::size_t at = rows.size();
  rows.resize(at + static_cast<std::size_t>(D));
  const std::int64_t offset = D > 0 ? elements::offset_of(src, {r, std::int64_t{0}}) : 0;
  if (D > 0) elements::load_run(src, offset, src.strides[1], D, rows.data() + at);
  shifted.push_back(shift ? 1 : 0);
  origin.push_back({static_cast<const std::byte*>(src.data) + offset * elements::bytes_of(src.dtype), src.strides[1], src.dtype});
}

void same_rows(const TokenKeys& keys, std::vector<std::int64_t>& same) {
  const std::int64_t n = keys.size();
  same.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) same[j] = j;
  if (static_cast<std::int64_t>(keys.origin.size()) != n || n < 2 || keys.D == 0) return;
  // Sorted by origin, then index: each run of equal origins and flags points at its first index.
  thread_local std::vector<std::int64_t> order;
  order.resize(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) order[j] = j;
  auto key = [&](std::int64_t j) {
    const TokenKeys::Origin& o = keys.origin[j];
    return std::tuple{reinterpret_cast<std::uintptr_t>(o.at), o.stride, static_cast<int>(o.dtype), keys.shifted[j], j};
  };
  std::sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  for (std::int64_t i = 1; i < n; ++i) {
    const std::int64_t a = order[i - 1], b = order[i];
    const TokenKeys::Origin &oa = keys.origin[a], &ob = keys.origin[b];
    if (oa.at == ob.at && oa.stride == ob.stride && oa.dtype == ob.dtype && keys.shifted[a] == keys.shifted[b])
      same[b] = same[a];
  }
}

Span csr_span(const TensorView& indptr, const TensorView& indices, std::int64_t t) {
  // Flat, like upstream's pointer reads: index tensors of any shape are used as their flat sequence.
  const std::int64_t b = indptr.load_int_flat(t), e = indptr.load_int_flat(t + 1);
  if (e <= b) return {b, b};
  if (b < 0 || e > indices.numel())
    throw std::out_of_range("sparse reference: span [" + std::to_string(b) + ", " + std::to_string(e) +
                            ") of token " + std::to_string(t) + " leaves an index array of " +
                            std::to_string(indices.numel()) + " entries");
  return {b, e};
}

void attend_token(const SinkAttention& a, std::int64_t t, const TokenKeys& keys) {
  if (a.precision == Precision::oracle) {
    thread_local TokenWork work;  // scratch kept across tokens
    attend_oracle(a, t, keys, work);
  } else {
    attend_faithful(a, t, keys);
  }
}

void attend_oracle_sharing(const SinkAttention& a, std::int64_t t, const TokenKeys& keys, TokenWork& work) {
  attend_oracle(a, t, keys, work);
}

}  // namespace kparity::reference::sparse::detail
