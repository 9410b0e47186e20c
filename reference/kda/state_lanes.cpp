// The lane loops of state_lanes.hpp: plain loops with the row index innermost, vectorised by the
// compiler without reordering any row's operations (-ffp-contract=off keeps the unfused update
// unfused; std::fma is one fused operation in every clone). target_clones picks AVX-512 or AVX2+FMA
// at run time on x86-64 with GCC.
#include "state_lanes.hpp"

#include <cmath>
#include <limits>
#include <vector>

#include "../src/weighted_rows.hpp"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define KPARITY_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define KPARITY_CLONES
#endif

namespace kparity::reference::kda::detail {
namespace {

template <class R>
void decay(std::int64_t K, std::int64_t V, const R* __restrict alpha, R* __restrict ST) {
  for (std::int64_t c = 0; c < K; ++c) {
    const R a = alpha[c];
    R* __restrict row = ST + c * V;
    for (std::int64_t j = 0; j < V; ++j) row[j] = row[j] * a;
  }
}

}  // namespace

KPARITY_CLONES void decay_rows(std::int64_t K, std::int64_t V, const double* alpha, double* ST) { decay(K, V, alpha, ST); }
KPARITY_CLONES void decay_rows(std::int64_t K, std::int64_t V, const float* alpha, float* ST) { decay(K, V, alpha, ST); }

KPARITY_CLONES void update_rows_fused(std::int64_t K, std::int64_t V, const double* __restrict d,
                                      const double* __restrict k, double* __restrict ST) {
  for (std::int64_t c = 0; c < K; ++c) {
    const double kc = k[c];
    double* __restrict row = ST + c * V;
    for (std::int64_t j = 0; j < V; ++j) row[j] = std::fma(d[j], kc, row[j]);
  }
}

KPARITY_CLONES void update_rows_unfused(std::int64_t K, std::int64_t V, const float* __restrict d,
                                        const float* __restrict k, float* __restrict ST) {
  for (std::int64_t c = 0; c < K; ++c) {
    const float kc = k[c];
    float* __restrict row = ST + c * V;
    for (std::int64_t j = 0; j < V; ++j) {
      const float prod = d[j] * kc;
      row[j] = prod + row[j];
    }
  }
}

KPARITY_CLONES void row_dots(std::int64_t K, std::int64_t V, const float* __restrict ST, const float* __restrict x,
                             float* __restrict out) {
  reference::detail::weighted_rows(K, V, ST, V, x, out);  // each row's products in channel order from +0
}

// row_dots after the decay (pre = decay_rows's multiply) or the unfused update (update_rows_unfused's
// product and sum) of each element, done in place in the same pass: every element gets the update's
// operations, then each row adds its products in channel order from +0 (issue 32 (3)).
namespace {
template <bool Update>
__attribute__((always_inline)) inline void updated_row_dots(std::int64_t K, std::int64_t V, const float* __restrict c_,
                                                            const float* __restrict d, float* __restrict ST,
                                                            const float* __restrict x, float* __restrict out) {
  // The update of one element (dj = d[j] with Update, unused otherwise).
  auto pre = [](float s, float c, float dj) {
    if constexpr (Update) {
      const float prod = dj * c;
      return prod + s;
    } else {
      return s * c;
    }
  };
  for (std::int64_t j = 0; j < V; ++j) out[j] = 0.0f;
  std::int64_t c = 0;
  for (; c + 4 <= K; c += 4) {
    const float x0 = x[c], x1 = x[c + 1], x2 = x[c + 2], x3 = x[c + 3];
    const float c0 = c_[c], c1 = c_[c + 1], c2 = c_[c + 2], c3 = c_[c + 3];
    // Four rows of ST, disjoint (V elements apart), and out and d are other arrays: no iteration's
    // store reaches another's load (ivdep: the run-time alias check GCC adds otherwise failed and
    // left the loop scalar).
    float* r0 = ST + c * V;
    float* r1 = r0 + V;
    float* r2 = r1 + V;
    float* r3 = r2 + V;
#pragma GCC ivdep
    for (std::int64_t j = 0; j < V; ++j) {
      const float dj = Update ? d[j] : 0.0f;
      const float s0 = pre(r0[j], c0, dj), s1 = pre(r1[j], c1, dj), s2 = pre(r2[j], c2, dj), s3 = pre(r3[j], c3, dj);
      r0[j] = s0, r1[j] = s1, r2[j] = s2, r3[j] = s3;
      float a = out[j];
      a = a + s0 * x0;
      a = a + s1 * x1;
      a = a + s2 * x2;
      a = a + s3 * x3;
      out[j] = a;
    }
  }
  for (; c < K; ++c) {
    const float xc = x[c], cc = c_[c];
    float* row = ST + c * V;
#pragma GCC ivdep
    for (std::int64_t j = 0; j < V; ++j) {
      const float sv = pre(row[j], cc, Update ? d[j] : 0.0f);
      row[j] = sv;
      const float prod = sv * xc;
      out[j] = out[j] + prod;
    }
  }
}
}  // namespace

KPARITY_CLONES void decay_row_dots(std::int64_t K, std::int64_t V, const float* __restrict alpha, float* __restrict ST,
                                   const float* __restrict x, float* __restrict out) {
  updated_row_dots<false>(K, V, alpha, nullptr, ST, x, out);
}
KPARITY_CLONES void update_row_dots(std::int64_t K, std::int64_t V, const float* __restrict d, const float* __restrict k,
                                    float* __restrict ST, const float* __restrict x, float* __restrict out) {
  updated_row_dots<true>(K, V, k, d, ST, x, out);
}

// nonfinite_sums (state_lanes.hpp), the classification exact_sum_of_products makes when a factor is
// not finite: its first loop then stops (such a product is NaN or infinite, outside its range), and
// every term with a non-finite factor gives a * b: NaN with any NaN product or infinities of both
// signs, else the infinity's sign; the finite terms are ignored. Here every row in a lane, with flags
// of the double's width (issue 32 (3): a special-value case's rows fell back one by one, reading
// their terms at stride V, twice).
namespace {
constexpr double kMax = std::numeric_limits<double>::max();
// One term's flags, 0 or 1 in the lane of the term's row; bnf: whether b is not finite. Selects, not
// branches (&&), so that the loop runs in vector lanes.
inline void classify(double a, double b, std::int64_t bnf, std::int64_t& nan, std::int64_t& pos, std::int64_t& neg) {
  const std::int64_t nf = bnf | (std::fabs(a) <= kMax ? 0 : 1);  // 1 for inf and NaN
  const double p = a * b;
  const std::int64_t is_nan = p != p ? 1 : 0, gt = p > 0 ? 1 : 0;
  nan |= nf & is_nan;
  pos |= nf & gt;
  neg |= nf & (1 - is_nan) & (1 - gt);
}
}  // namespace

KPARITY_CLONES void nonfinite_sums(std::int64_t K, std::int64_t V, const double* __restrict ST, const double* __restrict x,
                                   const double* __restrict e, double* __restrict out, unsigned char* __restrict special) {
  thread_local std::vector<std::int64_t> flags;
  flags.assign(3 * static_cast<std::size_t>(V), 0);
  std::int64_t* __restrict nan = flags.data();
  std::int64_t* __restrict pos = nan + V;
  std::int64_t* __restrict neg = pos + V;
  // A NaN product decides its row (NaN): once every row has one, the other terms change nothing (a
  // state left all NaN by a NaN k, or a NaN x, ends the pass at its first channel).
  bool all_nan = false;
  for (std::int64_t c = 0; c < K && !all_nan; ++c) {
    const double* __restrict row = ST + c * V;
    const double xc = x[c];
    const std::int64_t bnf = std::fabs(xc) <= kMax ? 0 : 1;
    std::int64_t every = 1;
    for (std::int64_t j = 0; j < V; ++j) {
      classify(row[j], xc, bnf, nan[j], pos[j], neg[j]);
      every &= nan[j];
    }
    all_nan = every != 0;
  }
  if (e && !all_nan)
    for (std::int64_t j = 0; j < V; ++j) classify(e[j], 1.0, 0, nan[j], pos[j], neg[j]);
  for (std::int64_t j = 0; j < V; ++j) {
    special[j] = static_cast<unsigned char>((nan[j] | pos[j] | neg[j]) != 0);
    if (special[j])
      out[j] = nan[j] || (pos[j] && neg[j]) ? std::numeric_limits<double>::quiet_NaN()
               : pos[j]                     ? std::numeric_limits<double>::infinity()
                                            : -std::numeric_limits<double>::infinity();
  }
}

// The ring's terms of S_prev's rows (replayssm_decode_error_bound): for each entry e in order, every
// channel i in a lane: val += d kw, err += (|d| + ddr) dkw + (|kw| + dkw) ddr, mag += (|d| + ddr)
// (|kw| + dkw); d, |d| + ddr and ddr of the row at stride `rs`. -ffp-contract=off keeps every
// product and sum as written, so each clone gives the bits of the scalar loop.
KPARITY_CLONES void ring_terms(std::int64_t K, std::int64_t mm, const double* d, std::int64_t rs, const double* da, const double* dd,
                const double* __restrict kw, const double* __restrict dkw, const double* __restrict kwa,
                double* __restrict val, double* __restrict err, double* __restrict mag) {
  for (std::int64_t e = 0; e < mm; ++e) {
    const double de = d[e * rs], a = da[e * rs], b = dd[e * rs];
    const double* __restrict kr = kw + e * K;
    const double* __restrict dr = dkw + e * K;
    const double* __restrict ar = kwa + e * K;
    for (std::int64_t i = 0; i < K; ++i) {
      val[i] += de * kr[i];
      err[i] += a * dr[i] + ar[i] * b;
      mag[i] += a * ar[i];
    }
  }
}

}  // namespace kparity::reference::kda::detail
