#pragma once
// Private building blocks of the KDA references (spec kda.md A). Every op is a template over the
// arithmetic type R: double = oracle, float = faithful (A.10). The oracle's sums and dot products
// are exact, rounded once (exact_sum.hpp); its elementwise operations are fp64 (exp, sigmoid,
// softplus, sqrt: correctly rounded or faithful libm). Both precisions' reductions go through
// accumulate.hpp. Build without FP contraction (the default for ISO C++ on x86-64): B.2.7 item 3
// fixes "multiply first, then add".
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/core/tensor_view.hpp"
#include "kparity/reference/accumulate.hpp"

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

// Host scalars (scale, lower_bound) reach the kernels as fp32 constants.
template <class R>
R host_scalar(double v) { return static_cast<R>(v); }

// A.3 item 3: literal log(1 + exp(x)) with threshold 20 (sglang's Helion/Triton form, not log1p).
template <class R>
R softplus(R x) { return x > R(20) ? x : std::log(R(1) + std::exp(x)); }

template <class R>
R sigmoid(R x) { return R(1) / (R(1) + std::exp(-x)); }

// A.3: g = lower_bound * sigmoid(A x) (bounded) or -A * softplus(x); A = exp(A_log).
template <class R>
R gate(R x, R A_log, const std::optional<double>& lower_bound) {
  const R A = std::exp(A_log);
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

// A.7 on S (V x K, row-major), in the normative order; returns o (V). Oracle: the state is a matrix
// of fp64 values; each sum over it is exact and rounded once (v - S k in one, S + d k^T element by
// element with one fma), the elementwise products decay and beta * (...) correctly rounded.
template <class R>
std::vector<R> recurrent_step(std::vector<R>& S, const Token<R>& t) {
  const std::size_t K = t.k_hat.size(), V = t.v.size();
  std::vector<R> o(V);
  for (std::size_t j = 0; j < V; ++j) {
    R* row = &S[j * K];
    for (std::size_t c = 0; c < K; ++c) row[c] = row[c] * t.alpha[c];  // 1. decay
    if constexpr (kFaithful<R>) {
      const R u = faithful_sum(K, [&](std::size_t c) { return std::pair{row[c], t.k_hat[c]}; });  // 2. predict (decayed S)
      const R d = t.beta * (t.v[j] - u);                                                             // 3. delta
      for (std::size_t c = 0; c < K; ++c) row[c] = faithful_madd(d, t.k_hat[c], row[c]);           // 4. rank-1 update
      o[j] = faithful_sum(K, [&](std::size_t c) { return std::pair{row[c], t.q_s[c]}; });           // 5. readout (updated S)
    } else {
      const R v_minus_u = oracle_sum(K + 1, [&](std::size_t c) {  // 2.-3. v - S k
        return c < K ? std::pair{-row[c], t.k_hat[c]} : std::pair{t.v[j], 1.0};
      });
      const R d = t.beta * v_minus_u;
      for (std::size_t c = 0; c < K; ++c) row[c] = std::fma(d, t.k_hat[c], row[c]);  // 4.
      o[j] = oracle_sum(K, [&](std::size_t c) { return std::pair{row[c], t.q_s[c]}; });  // 5.
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

}  // namespace kparity::reference::kda::detail
