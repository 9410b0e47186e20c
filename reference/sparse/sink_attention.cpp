// Softmax over the selected keys plus a zero-value sink logit (spec sparse_attention.md C.1, C.3,
// C.5, C.6). Mirrors the finalisation of sglang's unified_kv_kernels/paged_prefill.py.
#include "sink_attention.hpp"

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kparity/core/dtype.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference::sparse::detail {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;

// F = double: oracle. Every sum is exact and rounded once (exact_sum.hpp): the dot q.k_j, the logit
// dot * scale + shift (one fma), the exponent l_j - M as q.(k_j - k_max) (below), Z = sum of the
// weights plus the sink's, and each channel of P.V;
// exp, log and the division are correctly rounded or faithful libm fp64 (the weights' relative error
// ~1e-16 is 2^-29 times below anything the rule allows a fp32 backend). F = float: faithful (fp32
// arithmetic in index order; weights rounded to the storage dtype for P.V only, C.4 item 4).
template <class F>
void attend(const SinkAttention& a, std::int64_t t, const TokenKeys& keys) {
  const bool faithful = std::is_same_v<F, float>;
  const bool two = faithful && a.base == ExpBase::two;
  const std::int64_t H = a.q.size(1), D = a.q.size(2), n = keys.size();
  const DType storage = a.q.dtype;
  // The kernel receives the scale as an fp32 constant; decode folds log2(e) in on the host first.
  const F scale = static_cast<F>(two ? a.softmax_scale * kLog2e : a.softmax_scale);
  const F shift = static_cast<F>(two ? a.shift * kLog2e : a.shift);
  const F inf = std::numeric_limits<F>::infinity();

  std::vector<F> qrow(D), s(n), num(D), wv(faithful ? n : 0), dots(faithful ? n : 0);
  std::vector<double> result(D);
  // Oracle: the dots q.k_j exact in plain fp64 where short_exact_dot certifies it (exact_sum.hpp;
  // widened 16-bit inputs mostly are), else exact_sum_of_products: the same rounded-once values.
  // kdot/abs_dot/lsb/short_ok per key, the rows' lowest bits once per token (every head shares them).
  std::vector<double> kdot, abs_dot;
  std::vector<int> row_lsb, lsb;
  std::vector<unsigned char> short_ok;
  if constexpr (!faithful) {
    kdot.resize(n), abs_dot.resize(n), lsb.resize(n), short_ok.resize(n), row_lsb.resize(n);
    for (std::int64_t j = 0; j < n; ++j) row_lsb[j] = min_lsb_exponent(keys.rows.data() + j * D, D);
  }
  for (std::int64_t h = 0; h < H; ++h) {
    for (std::int64_t d = 0; d < D; ++d) qrow[d] = static_cast<F>(a.q.load(std::array{t, h, d}));
    int q_lsb = 0;
    if constexpr (!faithful) q_lsb = min_lsb_exponent(qrow.data(), D);
    // The sink is widened to fp32 whatever its dtype (B.1), then shifted like an extend row.
    // Flat like upstream's pointer arithmetic and the contract's length check: any shape with >= H elements.
    const float sink32 = static_cast<float>(a.attn_sink.load_flat(h));
    const F sig = two ? static_cast<F>(sink32) * static_cast<F>(kLog2e) + shift : static_cast<F>(sink32) + shift;

    bool any_nan = std::isnan(sig);
    F M = static_cast<F>(-FLT_MAX);  // the kernel's finite seed: an empty set must not give -inf - -inf
    for (std::int64_t j = 0; j < n; ++j) {
      const double* row = keys.rows.data() + j * D;
      if constexpr (faithful) {
        dots[j] = faithful_sum(D, [&](std::int64_t d) { return std::pair{qrow[d], static_cast<F>(row[d])}; });
        s[j] = faithful_madd(dots[j], scale, keys.shifted[j] ? shift : F(0));
      } else {
        lsb[j] = q_lsb + row_lsb[j];
        // The planted oracle fault (planted_fault.hpp) must reach every oracle dot: no short path then.
        short_ok[j] = planted_fault() != PlantedFault::oracle_plain_sums &&
                      short_exact_dot(qrow.data(), q_lsb, row, row_lsb[j], D, kdot[j], abs_dot[j]);
        if (!short_ok[j]) kdot[j] = oracle_sum(D, [&](std::int64_t d) { return std::pair{qrow[d], row[d]}; });
        s[j] = std::fma(kdot[j], scale, keys.shifted[j] ? shift : 0.0);
      }
      if (std::isnan(s[j])) any_nan = true; else if (s[j] > M) M = s[j];
    }
    if (!std::isnan(sig) && sig > M) M = sig;

    F lse;
    if (sig == inf || any_nan) {
      // Upstream's convention (docs/upstream_conventions.md, measured on the H200 against sglang's
      // paged_prefill.py and paged_decode.py): tl.max drops NaN, so a NaN logit (NaN in q or in a
      // selected row, 0 * inf) or a NaN sink reaches only the denominator, Z = ... + exp(NaN) is NaN,
      // and their finalisation `where(l > 0, acc * alpha / max(l, 1e-30), 0)` writes exact zeros.
      // A +inf sink or logit: Z = ... + exp(inf - inf) is NaN, the same zeros. lse: -inf, as C.6's
      // `Z > 0 ? M + ln Z : -inf` says ([inference]: the measured sglang commits have no return_lse).
      // Early, so the oracle's exponent pass never sees a NaN logit; the result is the Z > 0 test's.
      std::fill(result.begin(), result.end(), 0.0);
      lse = -inf;
    } else {
      const F w_sink = two ? std::exp2(sig - M) : std::exp(sig - M);
      // Test-only fault (planted_fault.hpp): the sink's weight leaks into the numerator.
      const bool sink_leaks = planted_fault() == PlantedFault::sink_in_numerator;
      F Z = 0;
      if constexpr (faithful) {
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
        Z = faithful_sum(n + 1, [&](std::int64_t j) { return std::pair{j < n ? s[j] : w_sink, F(1)}; });
        for (std::int64_t d = 0; d < D; ++d)
          num[d] = faithful_sum(n, [&](std::int64_t j) { return std::pair{wv[j], static_cast<F>(keys.rows[j * D + d])}; });
        if (sink_leaks)
          for (std::int64_t d = 0; d < D; ++d) num[d] += w_sink;
      } else {
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
        std::vector<double> x(n);
        for (int pass = 0; pass < 2 && jmax >= 0; ++pass) {
          std::int64_t next = jmax;
          x[jmax] = 0.0;
          for (std::int64_t j = 0; j < n; ++j) {
            if (!std::isfinite(s[j])) {
              x[j] = s[j] - M;
              continue;
            }
            const double* row = keys.rows.data() + j * D;
            const double* top = keys.rows.data() + jmax * D;
            // Both dots exact in fp64 and their terms together certified (short_exact_dot's
            // argument on the 2D terms): the difference of the two is the exact one.
            const bool short_diff = short_ok[j] && short_ok[jmax] &&
                                    exact_in_fp64(abs_dot[j] + abs_dot[jmax], std::min(lsb[j], lsb[jmax]));
            const double diff = j == jmax ? 0.0
                                : short_diff ? kdot[j] - kdot[jmax]
                                             : oracle_sum(2 * D, [&](std::int64_t i) {
                                                 return i < D ? std::pair{qrow[i], row[i]} : std::pair{-qrow[i - D], top[i - D]};
                                               });
            const double dshift = (keys.shifted[j] ? shift : 0.0) - (keys.shifted[jmax] ? shift : 0.0);
            x[j] = std::fma(diff, scale, dshift);
            if (x[j] > x[next]) next = j;
          }
          if (next == jmax) break;
          jmax = next;
        }
        std::vector<double>& w = s;  // the logits become the weights
        for (std::int64_t j = 0; j < n; ++j) w[j] = std::exp(jmax < 0 ? s[j] - M : x[j]);
        Z = oracle_sum(n + 1, [&](std::int64_t j) { return std::pair{j < n ? w[j] : w_sink, 1.0}; });
        for (std::int64_t d = 0; d < D; ++d)
          num[d] = oracle_sum(n + (sink_leaks ? 1 : 0), [&](std::int64_t j) {
            return j < n ? std::pair{w[j], keys.rows[j * D + d]} : std::pair{w_sink, 1.0};
          });
      }
      if (Z > 0) {
        const F denom = std::max(Z, static_cast<F>(1e-30));
        for (std::int64_t d = 0; d < D; ++d) result[d] = static_cast<double>(num[d] / denom);
        lse = two ? (M + std::log2(Z)) * static_cast<F>(kLn2) : M + std::log(Z);
      } else {
        // Z = 0 (no key and no sink, or every weight 0) or NaN (a +inf logit: exp(inf - inf)): the
        // kernels' Z > 0 test fails, zeros and lse -inf (upstream convention, see above). A selected
        // row whose logit is -inf keeps weight 0; its non-finite columns give 0 * inf = NaN only when
        // Z > 0. With Z = 0 sglang's prefill writes 0 and so does kparity (its decode writes NaN
        // there: an upstream inconsistency, docs/upstream_conventions.md).
        std::fill(result.begin(), result.end(), 0.0);
        lse = -inf;
      }
    }
    // store() rounds fp64 to the output dtype once (round to nearest even).
    for (std::int64_t d = 0; d < D; ++d) a.out.store(std::array{t, h, d}, result[d]);
    if (a.lse) a.lse->store(std::array{t, h}, static_cast<double>(lse));
  }
}

}  // namespace

void TokenKeys::append(const TensorView& src, std::int64_t r, bool shift) {
  if (r < 0 || r >= src.size(0))
    throw std::out_of_range("sparse reference: row " + std::to_string(r) + " outside a source of " +
                            std::to_string(src.size(0)) + " rows");
  for (std::int64_t d = 0; d < D; ++d) rows.push_back(src.load(std::array{r, d}));
  shifted.push_back(shift ? 1 : 0);
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
  if (a.precision == Precision::oracle) attend<double>(a, t, keys);
  else attend<float>(a, t, keys);
}

}  // namespace kparity::reference::sparse::detail
