#pragma once
// Private building blocks of the KDA references (spec kda.md A). Every op is a template over the
// arithmetic type R: double = oracle, float = faithful (A.10). The oracle's sums and dot products
// are exact, rounded once (exact_sum.hpp); its elementwise operations are fp64 (exp, sigmoid,
// softplus, sqrt: correctly rounded or faithful libm). Both precisions' reductions go through
// accumulate.hpp. Build without FP contraction (the default for ISO C++ on x86-64): B.2.7 item 3
// fixes "multiply first, then add".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/core/tensor_view.hpp"
#include "kparity/reference/accumulate.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/exact_lanes.hpp"
#include "state_lanes.hpp"
#include "state_range.hpp"

namespace kparity::reference::kda::detail {

template <class R>
inline constexpr bool kFaithful = std::is_same_v<R, float>;

// rt(x, T) of the spec. Oracle mode has no intermediate rounding point (A.10), so it is the identity.
template <class R>
R rt(R x, DType t) {
  if constexpr (kFaithful<R>) return round_through(x, t);
  else return x;
}

inline double ld(const TensorView& t, std::initializer_list<std::int64_t> i) { return t.at(i); }
inline std::int64_t ld_int(const TensorView& t, std::initializer_list<std::int64_t> i) { return t.at_int(i); }
// store() rounds a double once into the dtype (A.10: oracle results are rounded exactly once).
inline void st(const TensorView& t, std::initializer_list<std::int64_t> i, double v) {
  t.store(std::span<const std::int64_t>(i.begin(), i.size()), v);
}

// One value head's state [.., V, K] at (n, hv) of a 4-D view, transposed into ST[c * V + j], and
// back (stores round once into the dtype, as st() does); bounds-checked once (elements.hpp). Eight
// rows j at a time through load_run/store_run (one dtype dispatch a row, vectorised widenings), the
// transposition in 8 x K tiles so that each write of ST fills one cache line: element by element,
// with V * 8-byte strides between writes, these two were half of the packed-decode oracle at
// kernel-sized shapes (issue 25).
inline constexpr std::int64_t kStateTile = 8;

// Where state (n, hv) starts in t, which must hold V x K of it (load_state_T and store_state_T).
inline std::int64_t state_offset(const TensorView& t, std::int64_t n, std::int64_t hv, std::int64_t V, std::int64_t K) {
  const std::int64_t base = elements::offset_of(t, {n, hv, std::int64_t{0}, std::int64_t{0}});
  if (t.size(2) != V || t.size(3) != K) throw std::out_of_range("state view smaller than V x K");
  return base;
}

template <class R>
void load_state_T(const TensorView& t, std::int64_t n, std::int64_t hv, std::int64_t V, std::int64_t K, std::vector<R>& ST) {
  elements::require_host(t);
  if (V == 0 || K == 0) return;
  const std::int64_t base = state_offset(t, n, hv, V, K);
  thread_local std::vector<double> tile;
  tile.resize(static_cast<std::size_t>(kStateTile * K));
  for (std::int64_t j0 = 0; j0 < V; j0 += kStateTile) {
    const std::int64_t rows = std::min(kStateTile, V - j0);
    for (std::int64_t r = 0; r < rows; ++r)
      elements::load_run(t, base + (j0 + r) * t.strides[2], t.strides[3], K, tile.data() + r * K);
    for (std::int64_t c = 0; c < K; ++c)
      for (std::int64_t r = 0; r < rows; ++r) ST[c * V + j0 + r] = static_cast<R>(tile[r * K + c]);
  }
}
template <class R>
void store_state_T(const TensorView& t, std::int64_t n, std::int64_t hv, std::int64_t V, std::int64_t K, const std::vector<R>& ST) {
  elements::require_host(t);
  if (V == 0 || K == 0) return;
  const std::int64_t base = state_offset(t, n, hv, V, K);
  thread_local std::vector<double> tile;
  tile.resize(static_cast<std::size_t>(kStateTile * K));
  for (std::int64_t j0 = 0; j0 < V; j0 += kStateTile) {
    const std::int64_t rows = std::min(kStateTile, V - j0);
    for (std::int64_t c = 0; c < K; ++c)
      for (std::int64_t r = 0; r < rows; ++r) tile[r * K + c] = static_cast<double>(ST[c * V + j0 + r]);
    for (std::int64_t r = 0; r < rows; ++r)
      elements::store_run(t, base + (j0 + r) * t.strides[2], t.strides[3], K, tile.data() + r * K);
  }
}

// n consecutive elements along dimension `dim` from the multi-index `start`, as ld() reads them one by
// one (the same values, converted to R), bounds-checked once: a run of a token's q, k, v or gate row
// through elements::load_run (issue 25: a multi-index and its checks per element were a tenth of a
// kernel-sized recurrent oracle).
template <class R, std::size_t N>
void ld_run(const TensorView& t, const std::int64_t (&start)[N], int dim, std::int64_t n, R* out) {
  if (n <= 0) return;
  const std::int64_t base = elements::offset_of(t, start);
  if (start[dim] + n > t.sizes[dim]) throw std::out_of_range("index out of bounds");
  thread_local std::vector<double> row;
  row.resize(static_cast<std::size_t>(n));
  elements::load_run(t, base, t.strides[dim], n, row.data());
  for (std::int64_t i = 0; i < n; ++i) out[i] = static_cast<R>(row[i]);
}
// n consecutive elements along `dim` from `start` stored from in[0..n) (st() element by element).
template <class R, std::size_t N>
void st_run(const TensorView& t, const std::int64_t (&start)[N], int dim, std::int64_t n, const R* in) {
  if (n <= 0) return;
  const std::int64_t base = elements::offset_of(t, start);
  if (start[dim] + n > t.sizes[dim]) throw std::out_of_range("index out of bounds");
  thread_local std::vector<double> row;
  row.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) row[i] = static_cast<double>(in[i]);
  elements::store_run(t, base, t.strides[dim], n, row.data());
}

// Host scalars (scale, lower_bound) reach the kernels as fp32 constants.
template <class R>
R host_scalar(double v) { return static_cast<R>(v); }

// A.3 item 3: literal log(1 + exp(x)) with threshold 20 (sglang's Helion/Triton form, not log1p).
template <class R>
R softplus(R x) { return x > R(20) ? x : std::log(R(1) + std::exp(x)); }

template <class R>
R sigmoid(R x) { return R(1) / (R(1) + std::exp(-x)); }

// A.3: g = lower_bound * sigmoid(A x) (bounded) or -A * softplus(x); A = exp(A_log), which the
// callers take once per token (or row) instead of once per channel: the same value.
template <class R>
R gate_A(R x, R A, const std::optional<double>& lower_bound) {
  if (lower_bound) return host_scalar<R>(*lower_bound) * sigmoid(A * x);
  return -A * softplus(x);
}

// A.5: the epsilon goes on the sum of squares. Kernels either divide by sqrt(n) or multiply by
// 1/sqrt(n) (the A.5 table); the oracle is indifferent, the faithful mode follows the kernel.
enum class NormForm { divide, multiply };

template <class R>
void l2_normalise(std::vector<R>& x, NormForm form) {
  const std::size_t K = x.size();
  const R n = reduce<R>(K + 1, [&](std::size_t c) { return c < K ? std::pair{x[c], x[c]} : std::pair{R(1e-6), R(1)}; });
  const R root = std::sqrt(n);
  if (form == NormForm::divide) {
    for (R& e : x) e = e / root;
  } else {
    const R r = R(1) / root;
    for (R& e : x) e = e * r;
  }
}

// One token of one value head, after A.3-A.6.
template <class R>
struct Token {
  std::vector<R> q_s, k_hat, alpha, v;  // K, K, K, V
  R beta = 0;
};

// The fallback of a lane pass over the state (finish_lanes): after a few rows, the rows whose terms
// have a non-finite factor are classified all at once (nonfinite_sums, exact_sum_of_products' value
// for them), the others still summed one by one; a plain case's rare undecided row costs no pass.
template <class Fallback>
auto nonfinite_first(Fallback& fallback, std::size_t K, std::size_t V, const double* ST, const double* x, const double* e) {
  return [=, &fallback, calls = std::size_t{0}, out = std::vector<double>(), special = std::vector<unsigned char>()](
             std::size_t j) mutable -> double {
    if (++calls == 4) {
      out.resize(V), special.resize(V);
      nonfinite_sums(static_cast<std::int64_t>(K), static_cast<std::int64_t>(V), ST, x, e, out.data(), special.data());
    }
    return calls >= 4 && special[j] ? out[j] : fallback(j);
  };
}

// A.7 on the state of one value head, held transposed: ST[c * V + j] is S[j][c] (state_lanes.hpp),
// in the normative order; returns o (V). Oracle: the state is a matrix of fp64 values; each sum over
// it is exact and rounded once (v - S k in one, S + d k^T element by element with one fma), the
// elementwise products decay and beta * (...) correctly rounded. Both precisions run their rows in
// SIMD lanes (state_lanes.hpp, exact_lanes.hpp) when they may: the faithful model in its own order
// (no control accumulation), the oracle on its fast paths; the lanes give the row loops' bits.
// range (oracle, optional): the state's magnitudes carried across the sequence's tokens
// (state_range.hpp), which let the lane passes skip their range test; the results are the same.
template <class R>
std::vector<R> recurrent_step(std::vector<R>& ST, const Token<R>& t, StateRange* range = nullptr) {
  const std::size_t K = t.k_hat.size(), V = t.v.size();
  std::vector<R> o(V);
  auto S = [&](std::size_t j, std::size_t c) -> R& { return ST[c * V + j]; };
  const auto Ki = static_cast<std::int64_t>(K), Vi = static_cast<std::int64_t>(V);
  if constexpr (kFaithful<R>) {
    if (accumulation() == Accumulation::index_order && lane_loops()) {
      std::vector<R> u(V), d(V);
      decay_row_dots(Ki, Vi, t.alpha.data(), ST.data(), t.k_hat.data(), u.data());  // 1. decay, 2. predict (decayed S)
      for (std::size_t j = 0; j < V; ++j) d[j] = t.beta * (t.v[j] - u[j]);            // 3. delta
      update_row_dots(Ki, Vi, d.data(), t.k_hat.data(), ST.data(), t.q_s.data(), o.data());  // 4. rank-1 update, 5. readout
      return o;
    }
    for (std::size_t j = 0; j < V; ++j) {
      for (std::size_t c = 0; c < K; ++c) S(j, c) = S(j, c) * t.alpha[c];                          // 1. decay
      const R u = faithful_sum(K, [&](std::size_t c) { return std::pair{S(j, c), t.k_hat[c]}; });  // 2. predict
      const R d = t.beta * (t.v[j] - u);                                                           // 3. delta
      for (std::size_t c = 0; c < K; ++c) S(j, c) = faithful_madd(d, t.k_hat[c], S(j, c));        // 4. rank-1 update
      o[j] = faithful_sum(K, [&](std::size_t c) { return std::pair{S(j, c), t.q_s[c]}; });         // 5. readout
    }
  } else {
    auto v_minus_u = [&](std::size_t j) {  // 2.-3. v - S k
      return oracle_sum(K + 1, [&](std::size_t c) { return c < K ? std::pair{-S(j, c), t.k_hat[c]} : std::pair{t.v[j], 1.0}; });
    };
    auto readout = [&](std::size_t j) { return oracle_sum(K, [&](std::size_t c) { return std::pair{S(j, c), t.q_s[c]}; }); };
    if (oracle_fast_paths()) {
      std::vector<R> negk(K), vmu(V), d(V), p(V), s(V), T(V);
      std::vector<unsigned char> ok(V);
      // The in-range promises of the two passes, where the state's range is carried.
      StateRange decayed, updated;
      Magnitudes mk;
      bool have_decayed = false, promise_decay = false;
      if (range) {
        refresh(*range, ST.data(), ST.size());
        mk = magnitudes(t.k_hat.data(), K);
        have_decayed = decayed_range(*range, magnitudes(t.alpha.data(), K), decayed);
        promise_decay = have_decayed && products_in_range(decayed, mk);
      }
      // 1. the decay, fused with 2.-3.: the terms (-S[j][c], k[c]) as (S[j][c], -k[c]), the same
      // products, zero signs included (dot2_scaled: the decayed S as decay_rows leaves it).
      for (std::size_t c = 0; c < K; ++c) negk[c] = -t.k_hat[c];
      std::fill(p.begin(), p.end(), -0.0), std::fill(s.begin(), s.end(), 0.0), std::fill(T.begin(), T.end(), 0.0);
      std::fill(ok.begin(), ok.end(), 1);
      lanes::dot2_scaled(K, V, ST.data(), V, t.alpha.data(), negk.data(), p.data(), s.data(), T.data(), ok.data(),
                         promise_decay);
      for (std::size_t j = 0; j < V; ++j) lanes::dot2_step(t.v[j], 1.0, p[j], s[j], T[j], ok[j]);
      lanes::finish_lanes(V, p.data(), s.data(), T.data(), ok.data(), K + 1, 0.0, vmu.data(),
                          nonfinite_first(v_minus_u, K, V, ST.data(), negk.data(), t.v.data()));
      for (std::size_t j = 0; j < V; ++j) d[j] = t.beta * vmu[j];
      // 4. the rank-one update (fma, as update_rows_fused), fused with 5. the readout.
      std::fill(p.begin(), p.end(), -0.0), std::fill(s.begin(), s.end(), 0.0), std::fill(T.begin(), T.end(), 0.0);
      std::fill(ok.begin(), ok.end(), 1);
      const bool have_updated = have_decayed && updated_range(decayed, magnitudes(d.data(), V), mk, updated);
      const bool promise_update = have_updated && products_in_range(updated, magnitudes(t.q_s.data(), K));
      lanes::dot2_updated(K, V, ST.data(), V, d.data(), t.k_hat.data(), t.q_s.data(), p.data(), s.data(), T.data(), ok.data(),
                          promise_update);
      if (range) carry(*range, have_updated, updated);
      lanes::finish_lanes(V, p.data(), s.data(), T.data(), ok.data(), K, 0.0, o.data(),
                          nonfinite_first(readout, K, V, ST.data(), t.q_s.data(), nullptr));
      return o;
    }
    for (std::size_t j = 0; j < V; ++j) {
      for (std::size_t c = 0; c < K; ++c) S(j, c) = S(j, c) * t.alpha[c];  // 1. decay
      const R d = t.beta * v_minus_u(j);
      for (std::size_t c = 0; c < K; ++c) S(j, c) = std::fma(d, t.k_hat[c], S(j, c));  // 4.
      o[j] = readout(j);                                                                 // 5.
    }
  }
  return o;
}

// The flattened [.., HV*K] and split [.., HV, K] forms of a and dt_bias (B.0 item 3).
inline double per_head_k(const TensorView& t, std::int64_t row, std::int64_t hv, std::int64_t c, std::int64_t K) {
  return t.ndim() == 2 ? t.at({row, hv * K + c}) : t.at({row, hv, c});
}
inline double bias_at(const TensorView& t, std::int64_t hv, std::int64_t c, std::int64_t K) {
  return t.ndim() == 1 ? t.at({hv * K + c}) : t.at({hv, c});
}
// per_head_k and bias_at for c = 0..K-1 at once (ld_run).
template <class R>
void per_head_k_run(const TensorView& t, std::int64_t row, std::int64_t hv, std::int64_t K, R* out) {
  if (t.ndim() == 2) ld_run<R>(t, {row, hv * K}, 1, K, out);
  else ld_run<R>(t, {row, hv, std::int64_t{0}}, 2, K, out);
}
template <class R>
void bias_run(const TensorView& t, std::int64_t hv, std::int64_t K, R* out) {
  if (t.ndim() == 1) ld_run<R>(t, {hv * K}, 0, K, out);
  else ld_run<R>(t, {hv, std::int64_t{0}}, 1, K, out);
}

}  // namespace kparity::reference::kda::detail
