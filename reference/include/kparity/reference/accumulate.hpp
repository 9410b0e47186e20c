#pragma once
// The references' reductions (sums and dot products), in one place for both precisions:
//
//   faithful_sum  the faithful model's fp32 sum: products rounded to fp32, added in index order from
//                 +0, unfused (kda.md A.10, sparse_attention.md C.5: the specs' rounding points);
//   oracle_sum    the oracle's: exact_sum_of_products, rounded once (exact_sum.hpp).
//
// Controls (issue 19 item 2, TEST-ONLY like planted_fault.hpp): correct fp32 implementations that
// differ from the faithful model the way real kernels do. Under an AccumulationScope, faithful_sum
// and faithful_madd accumulate another way; the faithful model's rounding points stay where they
// are everywhere else. A fake kernel made of the faithful reference under a control accumulation is
// a correct kernel that the differential rule must pass (no false alarm), while its error differs
// from the faithful model's: unlike the faithful reference run as a backend, it can fail.
//
//   reversed   index order reversed (a kernel walking K or the key list from the other end);
//   pairwise   recursive halving (a tree reduction across threads or warps);
//   tile16     16-wide partial sums in index order, each added to the running sum (a tensor-core
//              MMA with k = 16: the tile's products reduced, then accumulated into the fragment);
//   fma        every product added with one fused multiply-add, a*b + c included (nvcc contracts
//              by default; Triton's tl.dot and tl.fma);
//   fp64       products and sums in fp64, rounded to fp32 once per reduction (wider intermediates).
//
//   fma-exponent  fma, and the sparse ops' exponent of an unshifted key fused too, exp(qk * scale -
//                 m) in one fma as FlashAttention-style kernels compute it (Triton contracts
//                 `qk * qk_scale - m` into an FFMA). The max key's argument is then the rounding
//                 error of its logit, up to u |l|, not 0: for |l| >= 2^31 (log2 domain) its weight
//                 can overflow (NaN output) or underflow (zeros) where the exact result is finite.
//                 It was a false alarm of the rule until the a-priori recipe got its weight-range
//                 term (reference/sparse/error_bound.cpp, item 6).
//
// The switch is per thread, off unless a scope is alive, so the oracle and faithful runs of the
// rule never see it (only fake kernels set it, around their own run).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "kparity/reference/exact_sum.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference {

enum class Accumulation { index_order, reversed, pairwise, tile16, fma, fp64, fma_exponent };

std::string_view accumulation_name(Accumulation a) noexcept;  // "index-order", "reversed", ...
std::optional<Accumulation> parse_accumulation(std::string_view s) noexcept;
// Every accumulation but index_order (the faithful model's own): the controls.
const std::vector<Accumulation>& control_accumulations();

namespace detail {
// Read on every reduction: constinit lets the compiler read it directly, without a TLS wrapper call.
extern constinit thread_local Accumulation t_accumulation;
}  // namespace detail
inline Accumulation accumulation() noexcept { return detail::t_accumulation; }

class AccumulationScope {
 public:
  explicit AccumulationScope(Accumulation a) noexcept;
  ~AccumulationScope();
  AccumulationScope(const AccumulationScope&) = delete;
  AccumulationScope& operator=(const AccumulationScope&) = delete;

 private:
  Accumulation previous_;
};

namespace detail {

inline constexpr std::size_t kTile = 16;

// Terms [lo, hi) in index order from +0, unfused or fused.
template <bool Fused, class Term>
float ordered_sum(std::size_t lo, std::size_t hi, Term& term) {
  float s = 0.0f;
  for (std::size_t i = lo; i < hi; ++i) {
    const auto [a, b] = term(i);
    if constexpr (Fused) s = std::fma(static_cast<float>(a), static_cast<float>(b), s);
    else s += static_cast<float>(a) * static_cast<float>(b);
  }
  return s;
}

template <class Term>
float pairwise_sum(std::size_t lo, std::size_t hi, Term& term) {
  if (hi - lo == 1) {
    const auto [a, b] = term(lo);
    return static_cast<float>(a) * static_cast<float>(b);
  }
  const std::size_t mid = lo + (hi - lo) / 2;
  return pairwise_sum(lo, mid, term) + pairwise_sum(mid, hi, term);
}

}  // namespace detail

// The faithful model's sum of the products term(i).first * term(i).second, i = 0..n-1 (both fp32
// values; a plain term x is {x, 1}), under the thread's accumulation. The empty sum is +0.
template <class Term>
float faithful_sum(std::size_t n, Term&& term) {
  switch (accumulation()) {
    case Accumulation::index_order:
      return detail::ordered_sum<false>(0, n, term);
    case Accumulation::reversed: {
      float s = 0.0f;
      for (std::size_t i = n; i-- > 0;) {
        const auto [a, b] = term(i);
        s += static_cast<float>(a) * static_cast<float>(b);
      }
      return s;
    }
    case Accumulation::pairwise:
      return n == 0 ? 0.0f : detail::pairwise_sum(0, n, term);
    case Accumulation::tile16: {
      float s = 0.0f;
      for (std::size_t lo = 0; lo < n; lo += detail::kTile)
        s += detail::ordered_sum<false>(lo, std::min(n, lo + detail::kTile), term);
      return s;
    }
    case Accumulation::fma:
    case Accumulation::fma_exponent:
      return detail::ordered_sum<true>(0, n, term);
    case Accumulation::fp64: {
      double s = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const auto [a, b] = term(i);
        s += static_cast<double>(static_cast<float>(a)) * static_cast<double>(static_cast<float>(b));
      }
      return static_cast<float>(s);
    }
  }
  return detail::ordered_sum<false>(0, n, term);
}

// a * b + c in the faithful model: the product rounded, then the sum (kda.md B.2.7 item 3); one
// fma under Accumulation::fma, and one rounding of the fp64 result under Accumulation::fp64.
inline float faithful_madd(float a, float b, float c) {
  switch (accumulation()) {
    case Accumulation::fma:
    case Accumulation::fma_exponent:
      return std::fma(a, b, c);
    case Accumulation::fp64:
      return static_cast<float>(static_cast<double>(a) * static_cast<double>(b) + static_cast<double>(c));
    default:
      return a * b + c;
  }
}

// How the oracle evaluates its sums (TEST-ONLY switch, like the controls'): `fast`, the shipped way
// (certified error-free transformations in SIMD lanes, short-factor certificates, the long
// accumulator only where a certificate cannot decide), or `long_sums`, the slow and obviously right
// way: every sum of the oracle added into a LongSum (the long accumulator, exact_sum.hpp) and rounded
// once, no certificate and no fast path. Both give the same bits by construction; the oracle
// property `<op>/oracle/long-accumulator` (fuzz) holds the first against the second (issue 25).
enum class OracleEvaluation { fast, long_sums };

namespace detail {
extern constinit thread_local OracleEvaluation t_oracle_evaluation;
}  // namespace detail
inline OracleEvaluation oracle_evaluation() noexcept { return detail::t_oracle_evaluation; }

class OracleEvaluationScope {
 public:
  explicit OracleEvaluationScope(OracleEvaluation e) noexcept;
  ~OracleEvaluationScope();
  OracleEvaluationScope(const OracleEvaluationScope&) = delete;
  OracleEvaluationScope& operator=(const OracleEvaluationScope&) = delete;

 private:
  OracleEvaluation previous_;
};

// TEST-ONLY: the faithful model and the a-priori bounds in their scalar loops, without the SIMD
// lanes of issue 25 (which compute the same sums in the same order per lane): a test holds the lane
// loops against these, bit for bit.
namespace detail {
extern constinit thread_local bool t_scalar_loops;
}  // namespace detail
inline bool lane_loops() noexcept { return !detail::t_scalar_loops; }
class ScalarLoopsScope {
 public:
  ScalarLoopsScope() noexcept;
  ~ScalarLoopsScope();
  ScalarLoopsScope(const ScalarLoopsScope&) = delete;
  ScalarLoopsScope& operator=(const ScalarLoopsScope&) = delete;

 private:
  bool previous_;
};

// Whether the oracle may take its fast paths (the lane kernels, short-factor certificates): not
// under the long-accumulator evaluation, and not under the planted fault oracle_plain_sums, which
// must reach every oracle sum.
inline bool oracle_fast_paths() noexcept {
  return detail::t_oracle_evaluation == OracleEvaluation::fast &&
         detail::t_planted_fault != PlantedFault::oracle_plain_sums;
}

// The oracle's sum of products: exact, rounded once. Under the test-only planted fault
// oracle_plain_sums (the harness mutant "oracle-not-exact"), the plain fp64 sum in index order;
// under OracleEvaluation::long_sums, a LongSum.
template <class Term>
double oracle_sum(std::size_t n, Term&& term) {
  if (detail::t_planted_fault == PlantedFault::oracle_plain_sums) {
    double s = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [a, b] = term(i);
      s += static_cast<double>(a) * static_cast<double>(b);
    }
    return s;
  }
  if (detail::t_oracle_evaluation == OracleEvaluation::long_sums) [[unlikely]] {
    LongSum acc;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [a, b] = term(i);
      acc.add_product(static_cast<double>(a), static_cast<double>(b));
    }
    return acc.value();
  }
  return exact_sum_of_products(n, term);
}

// One reduction in the arithmetic type R of a reference template: float = faithful, double = oracle.
template <class R, class Term>
R reduce(std::size_t n, Term&& term) {
  if constexpr (std::is_same_v<R, float>) return faithful_sum(n, term);
  else return oracle_sum(n, term);
}

}  // namespace kparity::reference
