// The recurrence's state ranges (reference/kda/state_range.hpp): every derived range holds the finite
// values the passes compute (the decay S c, the update fma(d, k, S')), cancelling updates and special
// values included, and a promise is only given where every product of finite factors passes dot2's
// range test (exact_lanes.hpp dot2_step) and every other product is not finite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../../reference/kda/state_range.hpp"

namespace {

namespace d = kparity::reference::kda::detail;

// dot2_step's verdict on one term.
bool in_range(double a, double b) {
  const double h = a * b, ah = std::fabs(h);
  return h == 0 ? (a == 0 || b == 0) : (ah >= 0x1p-960 && ah <= 0x1p1000);
}

// A finite value within the range (non-finite values are outside what the range describes).
bool within(const d::StateRange& r, double x) {
  if (!std::isfinite(x)) return true;
  if (x == 0) return std::fabs(x) <= r.hi;
  return std::fabs(x) >= r.lo && std::fabs(x) <= r.hi;
}
// dot2_step's verdict on a term of two finite factors (the weak promise); a non-finite factor gives
// a non-finite product, which fails its lane through p.
bool finite_term_in_range(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return !std::isfinite(a * b);
  return in_range(a, b);
}

// A vector of n values at scale 2^e, with zeros in places and, for `wide`, exponents spread over
// many binades.
std::vector<double> draw(std::mt19937_64& g, std::size_t n, int e, bool wide, int zero_in) {
  std::normal_distribution<double> N;
  std::vector<double> v(n);
  for (double& x : v) {
    const int spread = wide ? static_cast<int>(g() % 120) - 60 : 0;
    x = zero_in > 0 && g() % zero_in == 0 ? 0.0 : std::ldexp(N(g), e + spread);
  }
  return v;
}

TEST(StateRange, DerivedRangesHoldThePassesValuesAndPromisesHoldEveryProduct) {
  std::mt19937_64 g(3263);
  std::size_t promised = 0, values = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t K = 1 + g() % 12, V = 1 + g() % 12;
    const int es = static_cast<int>(g() % 2000) - 1000;  // the state's scale: tiny to huge
    const bool wide = g() % 2 == 0;
    std::vector<double> S = draw(g, K * V, es, wide, trial % 5 == 0 ? 1 : 4);  // 1: all zeros
    std::vector<double> c = draw(g, K, -static_cast<int>(g() % 40), false, 6);
    std::vector<double> k = draw(g, K, -static_cast<int>(g() % 30), wide, 5);
    std::vector<double> q = draw(g, K, -static_cast<int>(g() % 30), wide, 5);
    std::vector<double> dv = draw(g, V, es + static_cast<int>(g() % 20) - 10, wide, 5);
    // Special values in places: the ranges describe the finite values only.
    if (trial % 7 == 3) S[g() % S.size()] = INFINITY;
    if (trial % 11 == 4) S[g() % S.size()] = NAN;
    if (trial % 13 == 5) c[g() % K] = INFINITY;
    if (trial % 17 == 6) k[g() % K] = NAN;
    if (trial % 19 == 7) q[g() % K] = -INFINITY;
    if (trial % 23 == 8) dv[g() % V] = NAN;

    d::StateRange r;
    d::refresh(r, S.data(), S.size());
    ASSERT_TRUE(r.known);
    for (double x : S) ASSERT_TRUE(within(r, x));
    // The decay S[i][l] * c[i].
    std::vector<double> A(S.size());
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t l = 0; l < V; ++l) A[i * V + l] = S[i * V + l] * c[i];
    d::StateRange dec;
    const d::Magnitudes mk = d::magnitudes(k.data(), K);
    if (!d::decayed_range(r, d::magnitudes(c.data(), K), dec)) continue;
    for (double x : A) ASSERT_TRUE(within(dec, x)) << "decay, trial " << trial;
    if (d::products_in_range(dec, mk)) {
      ++promised;
      for (std::size_t i = 0; i < K; ++i)
        for (std::size_t l = 0; l < V; ++l) ASSERT_TRUE(finite_term_in_range(A[i * V + l], -k[i])) << "trial " << trial;
    }
    // Cancelling updates: some d[l] k[i] nearly the negative of the decayed element.
    if (trial % 3 == 0)
      for (std::size_t l = 0; l < V && K > 0; ++l)
        if (k[0] != 0 && A[l] != 0) dv[l] = -A[l] / k[0];
    d::StateRange up;
    if (!d::updated_range(dec, d::magnitudes(dv.data(), V), mk, up)) continue;
    for (std::size_t i = 0; i < K; ++i)
      for (std::size_t l = 0; l < V; ++l) {
        double& a = A[i * V + l];
        a = std::fma(dv[l], k[i], a);
        ASSERT_TRUE(within(up, a)) << "update, trial " << trial << " i " << i << " l " << l << " a " << a << " lo " << up.lo;
        ++values;
      }
    if (d::products_in_range(up, d::magnitudes(q.data(), K))) {
      ++promised;
      for (std::size_t i = 0; i < K; ++i)
        for (std::size_t l = 0; l < V; ++l) ASSERT_TRUE(finite_term_in_range(A[i * V + l], q[i])) << "trial " << trial;
    }
  }
  EXPECT_GT(promised, 100u);
  EXPECT_GT(values, 1000u);
}

// The update's lower bound is reached: d = k = 1 + 2^-52 make d k = 1 + 2^-51 + 2^-104, and the state
// element -(1 + 2^-51) leaves exactly 2^-104, the least the lsb argument allows.
TEST(StateRange, UpdateBoundIsReachedByAnExactCancellation) {
  const double one = 1 + 0x1p-52, a = -(1 + 0x1p-51);
  d::StateRange dec;
  dec.known = true, dec.lo = dec.hi = std::fabs(a);
  const d::Magnitudes m{one, one, true};
  d::StateRange up;
  ASSERT_TRUE(d::updated_range(dec, m, m, up));
  const double x = std::fma(one, one, a);
  EXPECT_EQ(x, 0x1p-104);
  EXPECT_LE(up.lo, x);
  EXPECT_GE(up.hi, 2.0);
}

// magnitudes (vector lanes where the machine has them) gives the plain loop's least non-zero and
// largest magnitude, and notices a non-finite value anywhere, tails included.
TEST(StateRange, MagnitudesAreTheLeastNonZeroAndTheLargest) {
  std::mt19937_64 g(77);
  for (std::size_t n : {0, 1, 3, 4, 5, 8, 31, 64, 67}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<double> x = draw(g, n, static_cast<int>(g() % 200) - 100, true, trial % 4 == 0 ? 1 : 3);
      if (n > 0 && trial % 5 == 1) x[g() % n] = -0.0;
      double lo = INFINITY, hi = 0;
      for (double v : x) {
        hi = std::max(hi, std::fabs(v));
        if (v != 0) lo = std::min(lo, std::fabs(v));
      }
      const d::Magnitudes m = d::magnitudes(x.data(), n);
      ASSERT_TRUE(m.finite);
      EXPECT_EQ(m.lo, lo) << n << " " << trial;
      EXPECT_EQ(m.hi, hi) << n << " " << trial;
      if (n == 0) continue;
      for (double bad : {INFINITY, -INFINITY, NAN}) {  // noticed, and left out of lo and hi
        std::vector<double> y = x;
        const std::size_t at = g() % n;
        y[at] = bad;
        double ylo = INFINITY, yhi = 0;
        for (std::size_t i = 0; i < n; ++i)
          if (i != at) yhi = std::max(yhi, std::fabs(y[i])), ylo = y[i] != 0 ? std::min(ylo, std::fabs(y[i])) : ylo;
        const d::Magnitudes my = d::magnitudes(y.data(), n);
        EXPECT_FALSE(my.finite) << n << " " << trial;
        EXPECT_EQ(my.lo, ylo) << n << " " << trial;
        EXPECT_EQ(my.hi, yhi) << n << " " << trial;
      }
    }
  }
}

// Two vectors' magnitudes promise only where every product passes dot2's range test.
TEST(StateRange, VectorPromiseHoldsEveryProduct) {
  std::mt19937_64 g(91);
  std::size_t promised = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::vector<double> a = draw(g, 1 + g() % 9, static_cast<int>(g() % 2000) - 1000, g() % 2 == 0, 4);
    const std::vector<double> b = draw(g, 1 + g() % 9, static_cast<int>(g() % 200) - 100, g() % 2 == 0, 4);
    if (!d::products_in_range(d::magnitudes(a.data(), a.size()), d::magnitudes(b.data(), b.size()))) continue;
    ++promised;
    for (double x : a)
      for (double y : b) ASSERT_TRUE(in_range(x, y)) << x << " * " << y;
  }
  EXPECT_GT(promised, 30u);
}

// carry keeps a derived range only while its lower bound has not fallen far.
TEST(StateRange, CarryForgetsALowOrUnderivedRange) {
  d::StateRange s, next;
  next.known = true, next.lo = 0x1p-10, next.hi = 1;
  d::carry(s, true, next);
  EXPECT_TRUE(s.known);
  next.lo = 0x1p-800;
  d::carry(s, true, next);
  EXPECT_FALSE(s.known);
  s.known = true;
  d::carry(s, false, next);
  EXPECT_FALSE(s.known);
}

}  // namespace
