#pragma once
// Many exact dot products at once (issue 25): exact_sum_of_products' error-free transformations
// (exact_sum.hpp, Ogita-Rump-Oishi Dot2) run in SIMD lanes, one independent sum per lane, and the
// same a-posteriori certificate per lane. A lane whose certificate holds has the correctly rounded
// exact sum, which is unique: so every lane's result is bit for bit exact_sum_of_products' (a lane the
// certificate cannot decide, or whose terms leave the transformations' range, is summed again by
// exact_sum_of_products itself).
//
// Why lanes: the oracle's long sums come in families that share one factor per term and differ in
// the other (P.V: the weight w_j times row j's value in each channel d; the KDA recurrence: k_c times
// each state row's column c). With the varying factor contiguous across the family, one vector
// instruction advances 4 (AVX2) or 8 (AVX-512) sums, and the fma of TwoProduct is one instruction
// instead of libm's fma() (the library is built for generic x86-64, without -mfma). Measured on the
// development machine (bench/results/oracle_2026-12-02.md).
//
// The kernels are chosen at run time (AVX-512F, AVX2 with FMA, else a portable scalar loop); every
// kernel computes the same p, s, T per lane as exact_sum_of_products' loop over the same terms.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "kparity/reference/exact_sum.hpp"
#include "kparity/reference/planted_fault.hpp"

namespace kparity::reference::lanes {

// For each lane l < lanes, the error-free transformations of exact_sum_of_products over the terms
// (A[rows[i] * lda + l], b[i]), i < n, in that order (rows null: row i), continuing from p[l], s[l],
// T[l] (start a sum at p = -0, s = 0, T = 0). ok[l] is cleared when a term of the lane is outside what
// the transformations handle exactly (a product not finite, above 2^1000, or below 2^-960 with
// non-zero factors: exact_sum_of_products sends such sums to its other paths); it is never set.
void dot2(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
          const double* b, double* p, double* s, double* T, unsigned char* ok) noexcept;

// dot2 over the terms (A[i * lda + l], b[i]) (rows null) after updating every element in place
// first, as the loop "for i, l: A[i * lda + l] = ..." before dot2 would: dot2_scaled with
// A * scale[i] (one multiply), dot2_updated with fma(d[l], k[i], A) (one fused multiply-add). The
// same updated A and the same p, s, T, ok as that loop followed by dot2; with AVX-512 or AVX2 an
// element is loaded once for both (issue 32 (3): the KDA recurrence's decay with its predict, its
// rank-one update with its readout). in_range: the caller's promise that every term (updated A,
// b[i]) with two finite factors is an exact zero with a zero factor or a product of magnitude in
// [2^-960, 2^1000], what dot2's range verdict tests; the vector kernels then skip that test (a fifth
// of their operations, issue 32 (3)) and give the same results, ok included. A term with a
// non-finite factor needs no promise: its product is inf or NaN, the lane's p stays non-finite from
// there on, and the lane fails with or without the test.
void dot2_scaled(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* scale, const double* b,
                 double* p, double* s, double* T, unsigned char* ok, bool in_range = false) noexcept;
void dot2_updated(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* d, const double* k,
                  const double* b, double* p, double* s, double* T, unsigned char* ok, bool in_range = false) noexcept;

// One more term (a, b) for one lane, scalar: the same step.
inline void dot2_step(double a, double b, double& p, double& s, double& T, unsigned char& ok) noexcept {
  const double h = a * b, ah = std::fabs(h);
  if (h == 0 ? !(a == 0 || b == 0) : !(ah >= 0x1p-960 && ah <= 0x1p1000)) {
    ok = 0;
    return;
  }
  const double r = detail::product_error(a, b, h);
  const double x = p + h, z = x - p;
  const double q = (p - (x - z)) + (h - z);
  p = x;
  s += q + r;
  T += std::fabs(q) + std::fabs(r);
}

// The lane's result: the certificate of exact_sum_of_products for m terms (plus `extra`, a bound on
// the sum of terms left out of the transformations), else `fallback()` (exact_sum_of_products over the
// lane's terms, which decides every case the certificate cannot).
template <class Fallback>
double finish(double p, double s, double T, bool ok, std::size_t m, double extra, Fallback&& fallback) {
  // Test-only fault (planted_fault.hpp): the plain running sum, uncompensated and uncertified.
  if (planted_fault() == PlantedFault::oracle_lanes_uncompensated && ok) [[unlikely]] return p;
  double r;
  if (ok && detail::certify(p, s, T, m, r, extra)) return r;
  return fallback();
}

// finish() for every lane at once: result[l] and decided[l] = 1 where exact_sum_of_products'
// certificate (detail::certify, the same arithmetic) decides lane l's p, s, T for m terms plus
// `extra`; decided[l] = 0 where the caller must fall back (ok[l] == 0, or the certificate cannot
// decide). The planted fault oracle_lanes_uncompensated is the caller's (finish_lanes below).
void certify(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
             std::size_t m, double extra, double* result, unsigned char* decided) noexcept;

// Every lane's result into out[l]: certify() where it decides, else fallback(l) (exact_sum_of_products
// over lane l's terms). The lane form of finish(), with the same test-only fault.
template <class Fallback>
void finish_lanes(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
                  std::size_t m, double extra, double* out, Fallback&& fallback) {
  thread_local std::vector<unsigned char> decided;
  decided.resize(lanes);
  certify(lanes, p, s, T, ok, m, extra, out, decided.data());
  const bool fault = planted_fault() == PlantedFault::oracle_lanes_uncompensated;
  for (std::size_t l = 0; l < lanes; ++l) {
    if (fault && ok[l]) [[unlikely]] out[l] = p[l];
    else if (!decided[l]) out[l] = fallback(l);
  }
}

// dot2 from a fresh start (p = -0, s = 0, T = 0, ok = 1 in every lane) and certify() of its m terms
// plus `extra`, in one pass: each block of lanes keeps p, s, T in registers from its first term to
// its verdict (issue 25: a sparse head's P.V at D = 512 with one or two keys spent more time storing
// and reloading p, s, T and ok than summing). The same operations on the same values as dot2; the
// verdict decides a subset of the lanes certify() decides (with AVX-512 a cheaper one-sided test,
// exact_lanes.cpp verdict_avx512), with certify's result where it decides: where decided[l], result[l]
// is the lane's exact sum rounded once. Returns how many lanes are undecided. in_range: a promise that
// every product a * b[i] is an exact zero (a zero factor) or of magnitude in [2^-960, 2^1000] (what
// dot2's range verdict tests), which lets the kernel skip that test; the results are the same.
std::size_t dot2_certify(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
                         const double* b, std::size_t m, double extra, double* result, unsigned char* decided,
                         bool in_range = false) noexcept;

// detail::exact_error_sum over lane l's n terms (A[rows[i] * lda + l], b[i]) (rows null: row i),
// for each lane l = which[j], j < k: where it holds (the transformations' errors add up without
// rounding), out[l] is the lane's exact sum rounded once and held[j] = 1; else held[j] = 0 and
// out[l] is left as it was. Every kernel takes exact_error_sum's steps on the same values.
void error_sums(std::size_t n, const double* A, std::size_t lda, const std::int32_t* rows, const double* b,
                std::size_t k, const std::int32_t* which, double* out, unsigned char* held) noexcept;

// finish_lanes() of a fresh dot2 over the n terms: out[l] is exact_sum_of_products' result of lane l
// (fallback(l) where the certificate cannot decide), with the test-only fault of finish_lanes. With
// no term left out (m == n, extra == 0) the lanes the certificate leaves undecided try error_sums
// first, as exact_sum_of_products tries exact_error_sum before its long accumulator: a sum on a
// rounding midpoint (a few weights times small integers) has no certificate, and the scalar
// fallback per lane was a twentieth of a kernel-sized sparse prefill oracle (issue 25).
template <class Fallback>
void dot2_finish(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
                 const double* b, std::size_t m, double extra, double* out, Fallback&& fallback, bool in_range = false) {
  if (planted_fault() == PlantedFault::oracle_lanes_uncompensated) [[unlikely]] {
    std::vector<double> p(lanes, -0.0), s(lanes, 0.0), T(lanes, 0.0);
    std::vector<unsigned char> ok(lanes, 1);
    dot2(n, lanes, A, lda, rows, b, p.data(), s.data(), T.data(), ok.data());
    finish_lanes(lanes, p.data(), s.data(), T.data(), ok.data(), m, extra, out, fallback);
    return;
  }
  thread_local std::vector<unsigned char> decided_lanes, held;
  thread_local std::vector<std::int32_t> which;
  decided_lanes.resize(lanes);
  unsigned char* decided = decided_lanes.data();
  const std::size_t undecided = dot2_certify(n, lanes, A, lda, rows, b, m, extra, out, decided, in_range);
  if (undecided == 0) return;
  if (m == n && extra == 0 && n > 0) {
    which.clear();
    std::size_t l = 0;
    for (; l + 8 <= lanes; l += 8) {  // eight verdicts a load: most blocks are all decided (all ones)
      std::uint64_t eight;
      std::memcpy(&eight, decided + l, 8);
      if (eight == 0x0101010101010101u) continue;
      for (std::size_t i = l; i < l + 8; ++i)
        if (!decided[i]) which.push_back(static_cast<std::int32_t>(i));
    }
    for (; l < lanes; ++l)
      if (!decided[l]) which.push_back(static_cast<std::int32_t>(l));
    held.resize(which.size());
    error_sums(n, A, lda, rows, b, which.size(), which.data(), out, held.data());
    for (std::size_t j = 0; j < which.size(); ++j)
      if (!held[j]) out[which[j]] = fallback(static_cast<std::size_t>(which[j]));
    return;
  }
  for (std::size_t l = 0; l < lanes; ++l)
    if (!decided[l]) out[l] = fallback(l);
}

// Which kernel dot2 runs: "avx512", "avx2" or "scalar" (for the benchmark's report and the tests).
const char* kernel_name() noexcept;
// Tests: run every kernel this machine has (not only the fastest); restored by the destructor.
class ForceKernel {
 public:
  explicit ForceKernel(const char* name);  // "avx512", "avx2" or "scalar"; throws if unavailable
  ~ForceKernel();
  ForceKernel(const ForceKernel&) = delete;
  ForceKernel& operator=(const ForceKernel&) = delete;

 private:
  int previous_;
};

}  // namespace kparity::reference::lanes
