// The oracle's error-free summation (reference/include/kparity/reference/exact_sum.hpp): sums whose
// exact value is known by construction, IEEE special values and zero signs, rounding ties, and
// randomised agreement with an independent exact computation in 128-bit integers. Every sum runs
// through both implementations, ExactSum (certified error-free transformations) and LongSum (the
// long accumulator), and they must agree bit for bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "kparity/reference/exact_sum.hpp"

namespace {

using kparity::reference::exact_dot;
using kparity::reference::exact_sum;
using kparity::reference::LongSum;

constexpr double kInf = std::numeric_limits<double>::infinity();

bool bit_equal(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

// Bit equality, so that -0 and +0 differ and NaN equals NaN.
::testing::AssertionResult same_bits(double got, double want) {
  if (bit_equal(got, want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << " (signbit " << std::signbit(got) << "), want " << want
                                       << " (signbit " << std::signbit(want) << ")";
}

// exact_sum_of_products and LongSum side by side; value() checks that they agree bit for bit and
// returns the result. used_long(): whether the last value() needed the long accumulator.
class ExactSum {
 public:
  void add(double x) { terms_.emplace_back(x, 1.0); }
  void add_product(double a, double b) { terms_.emplace_back(a, b); }
  double value() {
    calls_ = 0;
    const double e = kparity::reference::exact_sum_of_products(terms_.size(), [&](std::size_t i) {
      ++calls_;
      return terms_[i];
    });
    LongSum l;
    for (auto [a, b] : terms_) {
      if (b == 1.0) l.add(a);
      else l.add_product(a, b);
    }
    const double lv = l.value();
    EXPECT_TRUE(same_bits(e, lv)) << "exact_sum_of_products vs LongSum";
    EXPECT_TRUE(same_bits(l.value(), lv)) << "LongSum::value() twice";
    return e;
  }
  bool used_long() const { return calls_ > terms_.size(); }
  void clear() { terms_.clear(); }

 private:
  std::vector<std::pair<double, double>> terms_;
  std::size_t calls_ = 0;
};

double sum_of(std::initializer_list<double> xs) {
  ExactSum s;
  for (double x : xs) s.add(x);
  const double v = s.value();
  EXPECT_TRUE(same_bits(exact_sum(std::vector<double>(xs)), v));
  return v;
}

TEST(ExactSum, CancellationPlainFp64Loses) {
  EXPECT_EQ(0x1p100 + 3.0 - 0x1p100, 0.0);  // the fp64 baseline this class replaces
  EXPECT_EQ(sum_of({0x1p100, 3.0, -0x1p100}), 3.0);
  EXPECT_EQ(sum_of({3.0, 0x1p100, -0x1p100}), 3.0);
  EXPECT_EQ(sum_of({1e300, 1.0, -1e300, 1.0}), 2.0);
  // Alternating huge and small terms of every binade between 2^-1000 and 2^1000.
  ExactSum s;
  double small = 0;
  for (int e = -1000; e <= 1000; e += 7) {
    s.add(std::ldexp(1.0, e));
    s.add(1.0 / 1024);
    s.add(-std::ldexp(1.0, e));
    small += 1.0 / 1024;
  }
  EXPECT_EQ(s.value(), small);
}

TEST(ExactSum, DotOfTheCampaignsCancellingLogit) {
  // The shape of ../shared/repro's failing logit: small integer products, then two products of
  // +-2^101-sized terms that cancel, then more small ones. Exact: -2; fp64 in index order: not.
  const std::vector<double> q = {1, -2, 3, 1, -1, 2, 2, -2, 1, 1, -3, 2, 1, -1, 2, -1};
  std::vector<double> k = {1, 1, 1, 0x1p100, 1, 1, 1, 1, -0x1p100, 1, 1, 1, 1, 1, 1, 1};
  double want = 0, plain = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    plain += q[i] * k[i];
    if (std::fabs(k[i]) < 2) want += q[i] * k[i];  // the huge pair cancels exactly (q = 1 on both)
  }
  ASSERT_EQ(q[3], q[8]);
  EXPECT_NE(plain, want);
  EXPECT_EQ(exact_dot(q, k), want);
}

TEST(ExactSum, ProductsAreNeverRounded) {
  const double a = 1 + 0x1p-52, b = 1 - 0x1p-53;  // a*b = 1 + 2^-53 - 2^-105: not a double
  ExactSum s;
  s.add_product(a, b);
  s.add(-1.0);
  EXPECT_EQ(s.value(), 0x1p-53 - 0x1p-105);
  // Products beyond the fp64 range cancel exactly: no intermediate overflow.
  s.clear();
  s.add_product(1e300, 1e300);
  s.add_product(-1e300, 1e300);
  s.add(1.0);
  EXPECT_EQ(s.value(), 1.0);
  // Products below it are exact too (2^-1074 * 2^-1074 = 2^-2148).
  s.clear();
  s.add_product(0x1p-1074, 0x1p-1074);
  s.add_product(0x1p-1074, -0x1p-1074);
  s.add(0x1p-1074);
  EXPECT_EQ(s.value(), 0x1p-1074);
}

TEST(ExactSum, SubnormalsAndUnderflow) {
  EXPECT_EQ(sum_of({0x1p-1074, 0x1p-1074}), 0x1p-1073);
  EXPECT_EQ(sum_of({DBL_MIN, -0x1p-1074}), DBL_MIN - 0x1p-1074);
  ExactSum s;
  s.add_product(0x1p-600, 0x1p-600);  // 2^-1200 rounds to +0
  EXPECT_TRUE(same_bits(s.value(), 0.0));
  s.clear();
  s.add_product(-0x1p-600, 0x1p-600);  // -2^-1200 rounds to -0 (a negative value, not a -0 term)
  EXPECT_TRUE(same_bits(s.value(), -0.0));
  s.clear();
  s.add_product(0x1p-538, 0x1p-537);  // exactly half of 2^-1074: a tie, to even (0)
  EXPECT_TRUE(same_bits(s.value(), 0.0));
  s.add_product(0x1p-600, 0x1p-600);  // just above the tie
  EXPECT_EQ(s.value(), 0x1p-1074);
  s.clear();
  s.add_product(3 * 0x1p-539, 0x1p-536);  // 1.5 * 2^-1074: tie between 1 and 2, to even (2)
  EXPECT_EQ(s.value(), 0x1p-1073);
}

TEST(ExactSum, RoundsOnceToNearestEven) {
  EXPECT_EQ(sum_of({1.0, 0x1p-53}), 1.0);                          // tie, even stays
  EXPECT_EQ(sum_of({1.0, 0x1p-53, 0x1p-200}), 1.0 + 0x1p-52);      // sticky bit decides
  EXPECT_EQ(sum_of({1.0, 0x1p-200, 0x1p-53}), 1.0 + 0x1p-52);      // in any order
  EXPECT_EQ(sum_of({1.0 + 0x1p-52, 0x1p-53}), 1.0 + 0x1p-51);      // tie, odd rounds up
  EXPECT_EQ(sum_of({-1.0, -0x1p-53, -0x1p-200}), -1.0 - 0x1p-52);  // symmetric
  EXPECT_EQ(sum_of({1.0, 0x1p-53, -0x1p-200}), 1.0);               // just below the tie
  // Plain fp64 in this order rounds twice and lands one ulp away.
  EXPECT_NE((1.0 + 0x1p-53) + 0x1p-53, sum_of({1.0, 0x1p-53, 0x1p-53}));
  EXPECT_EQ(sum_of({1.0, 0x1p-53, 0x1p-53}), 1.0 + 0x1p-52);
}

TEST(ExactSum, OverflowOnlyWhenTheExactSumOverflows) {
  EXPECT_EQ(sum_of({DBL_MAX, DBL_MAX, -DBL_MAX}), DBL_MAX);
  EXPECT_EQ(sum_of({DBL_MAX, DBL_MAX}), kInf);
  EXPECT_EQ(sum_of({-DBL_MAX, -DBL_MAX}), -kInf);
  const double half_ulp = 0x1p970;  // ulp(DBL_MAX) = 2^971
  EXPECT_EQ(sum_of({DBL_MAX, half_ulp}), kInf);                    // tie, DBL_MAX is odd: up, overflow
  EXPECT_EQ(sum_of({DBL_MAX, half_ulp, -0x1p900}), DBL_MAX);       // just below the tie
  EXPECT_EQ(sum_of({DBL_MAX, 0x1p969}), DBL_MAX);
}

TEST(ExactSum, SpecialValuesAsIeee) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(same_bits(sum_of({1.0, nan, 2.0}), nan));
  EXPECT_TRUE(same_bits(sum_of({kInf, -kInf}), nan));
  EXPECT_TRUE(same_bits(sum_of({kInf, 1.0, -DBL_MAX, DBL_MAX}), kInf));
  EXPECT_TRUE(same_bits(sum_of({-kInf, 1e308, 1e308}), -kInf));  // the finite part would overflow to +inf
  EXPECT_TRUE(same_bits(sum_of({kInf, kInf}), kInf));
  ExactSum s;
  s.add_product(kInf, 0.0);  // inf * 0
  s.add(1.0);
  EXPECT_TRUE(same_bits(s.value(), nan));
  s.clear();
  s.add_product(-kInf, 2.0);
  s.add_product(3.0, 4.0);
  EXPECT_TRUE(same_bits(s.value(), -kInf));
  s.clear();
  s.add_product(-kInf, -2.0);
  s.add_product(kInf, 1.0);
  EXPECT_TRUE(same_bits(s.value(), kInf));
  s.add_product(nan, 0.0);
  EXPECT_TRUE(same_bits(s.value(), nan));
}

TEST(ExactSum, SignedZeros) {
  EXPECT_TRUE(same_bits(exact_sum({}), 0.0));
  EXPECT_TRUE(same_bits(sum_of({-0.0}), -0.0));
  EXPECT_TRUE(same_bits(sum_of({-0.0, -0.0}), -0.0));
  EXPECT_TRUE(same_bits(sum_of({-0.0, 0.0}), 0.0));
  EXPECT_TRUE(same_bits(sum_of({0.0, -0.0}), 0.0));
  EXPECT_TRUE(same_bits(sum_of({1.0, -1.0}), 0.0));                   // fast path
  EXPECT_TRUE(same_bits(sum_of({-0x1p100, 3.0, 0x1p100, -3.0}), 0.0));  // long accumulator
  EXPECT_TRUE(same_bits(sum_of({-1.0, 1.0, -0.0}), 0.0));
  ExactSum s;
  s.add_product(-0.0, 5.0);
  s.add_product(0.0, -5.0);
  EXPECT_TRUE(same_bits(s.value(), -0.0));
  s.add_product(-0.0, -5.0);
  EXPECT_TRUE(same_bits(s.value(), 0.0));
  s.clear();
  s.add_product(-0x1p100, 3.0);  // long accumulator, then an exact zero
  s.add_product(0x1p100, 3.0);
  EXPECT_TRUE(same_bits(s.value(), 0.0));
}

TEST(ExactSum, CertifiedPathAndItsFallback) {
  ExactSum s;
  for (int i = 0; i < 512; ++i) s.add_product(1.0 + i / 128.0, -(3.0 - i / 256.0));  // bf16-like values
  s.value();
  EXPECT_FALSE(s.used_long());
  s.clear();
  std::mt19937_64 rng(3);
  std::normal_distribution<double> nd;
  for (int i = 0; i < 128; ++i) s.add_product(nd(rng), nd(rng));  // full 53-bit products: certified
  s.value();
  EXPECT_FALSE(s.used_long());
  s.clear();
  s.add(1.0);
  s.add(0x1p-53);  // an exact tie: no interval around it avoids the midpoint
  EXPECT_EQ(s.value(), 1.0);
  EXPECT_TRUE(s.used_long());
  s.clear();
  s.add_product(0x1p-600, 0x1p-600);  // the product's error would underflow
  EXPECT_EQ(s.value(), 0.0);
  EXPECT_TRUE(s.used_long());
  s.clear();
  s.add_product(0x1p600, 0x1p600);  // above 2^1000
  s.add_product(-0x1p600, 0x1p600);
  s.add(2.0);
  EXPECT_EQ(s.value(), 2.0);
  EXPECT_TRUE(s.used_long());
  // value() does not disturb the sum: adding after reading goes on from the same exact value.
  s.clear();
  s.add(0.75);
  s.add(0x1p-40);
  s.add(0x1p80);  // 2^80 + 0.75 + 2^-40 needs 121 bits
  EXPECT_EQ(s.value(), 0x1p80);
  s.add(-0x1p80);
  EXPECT_EQ(s.value(), 0.75 + 0x1p-40);
  s.add(-0.75);
  EXPECT_EQ(s.value(), 0x1p-40);
  s.add(-0x1p-40);
  s.add(-0x1p-40);
  EXPECT_EQ(s.value(), -0x1p-40);
  s.add(0x1p-40);
  EXPECT_TRUE(same_bits(s.value(), 0.0));
}

// Ill-conditioned random dot products near rounding midpoints: the certificate must either give
// the long accumulator's answer or decline.
TEST(ExactSum, CertificateAgreesWithLongSumNearMidpoints) {
  std::mt19937_64 rng(1802);
  std::normal_distribution<double> nd;
  std::uniform_int_distribution<int> ed(-60, 60), kind(0, 3);
  int declined = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    ExactSum e;
    const int n = 1 + trial % 40;
    for (int i = 0; i < n; ++i) e.add_product(std::ldexp(nd(rng), ed(rng)), nd(rng));
    const double base = e.value();
    switch (kind(rng)) {  // push the exact sum next to a midpoint of the fp64 grid around base
      case 0: e.add(-base); break;
      case 1: e.add(std::ldexp(std::fabs(base), -53)); break;
      case 2: e.add(-std::ldexp(std::fabs(base), -54) * 3); break;
      default: break;
    }
    e.value();  // compares with LongSum
    declined += e.used_long();
    if (HasFailure()) FAIL() << "trial " << trial;
  }
  EXPECT_GT(declined, 0);       // the midpoint cases reach the fallback
  EXPECT_LT(declined, 15000);   // and the rest is certified
}

// Sums of a few weights times small integers land exactly on rounding midpoints (w - 1 for a weight
// in [1/4, 1/2) needs 54 bits), where no certificate decides. exact_error_sum decides those whose
// transformation errors add up exactly, with LongSum's result, and declines the rest; the whole of
// exact_sum_of_products agrees with LongSum either way.
TEST(ExactSum, ExactErrorSumDecidesMidpointsAsLongSum) {
  std::mt19937_64 rng(2512);
  std::uniform_real_distribution<double> wd(0.0, 1.0);
  std::uniform_int_distribution<int> vd(-3, 3), nd(1, 6);
  int decided = 0, midpoints = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = nd(rng);
    std::vector<std::pair<double, double>> t(static_cast<std::size_t>(n));
    for (auto& [w, v] : t) w = trial % 3 == 0 ? 1.0 : wd(rng), v = vd(rng);
    auto term = [&](std::size_t i) { return t[i]; };
    LongSum acc;
    for (const auto& [w, v] : t) acc.add_product(w, v);
    const double want = acc.value();
    double got = 0;
    if (kparity::reference::detail::exact_error_sum(t.size(), term, got)) {
      ++decided;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got), std::bit_cast<std::uint64_t>(want)) << "trial " << trial;
    }
    double r = 0;
    double p = -0.0, s = 0.0, T = 0.0;  // the certificate's view of the same sum
    for (const auto& [w, v] : t) {
      const double h = w * v, e = std::fma(w, v, -h), x = p + h, z = x - p;
      const double q = (p - (x - z)) + (h - z);
      p = x, s += q + e, T += std::fabs(q) + std::fabs(e);
    }
    if (!kparity::reference::detail::certify(p, s, T, t.size(), r)) ++midpoints;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(kparity::reference::exact_sum_of_products(t.size(), term)),
              std::bit_cast<std::uint64_t>(want)) << "trial " << trial;
  }
  EXPECT_GT(midpoints, 100);  // the family reaches the midpoints
  EXPECT_GT(decided, 100);    // and exact_error_sum decides sums there
}

// Independent check: terms k * 2^e with |k| < 2^20 and e in [-40, 40] sum exactly in a 128-bit
// integer in units of 2^-40; the compiler's int128 -> double conversion rounds to nearest even.
TEST(ExactSum, RandomSumsAgreeWithInt128AndAreOrderFree) {
  std::mt19937_64 rng(18);
  std::uniform_int_distribution<std::int64_t> kd(-(1 << 20) + 1, (1 << 20) - 1);
  std::uniform_int_distribution<int> ed(-40, 40), nd(1, 300);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = nd(rng);
    std::vector<double> t(n);
    __int128 exact = 0;
    for (double& x : t) {
      const std::int64_t k = kd(rng);
      const int e = ed(rng);
      x = std::ldexp(static_cast<double>(k), e);
      exact += static_cast<__int128>(k) << (e + 40);
    }
    const double want = std::ldexp(static_cast<double>(exact), -40);
    ASSERT_EQ(exact_sum(t), want) << "trial " << trial;
    LongSum l;
    for (double x : t) l.add(x);
    ASSERT_EQ(l.value(), want) << "trial " << trial << " LongSum";
    std::shuffle(t.begin(), t.end(), rng);
    ASSERT_EQ(exact_sum(t), want) << "trial " << trial << " shuffled";
    // Out of the fast path: the same terms plus a pair spanning 2^900 that cancels.
    t.push_back(0x1p900);
    t.insert(t.begin() + n / 2, -0x1p900);
    ASSERT_EQ(exact_sum(t), want) << "trial " << trial << " spanning 2^900";
  }
}

// Products of doubles with full 53-bit mantissas, cancelled by their own negations in another
// order, leave exactly the small terms.
TEST(ExactSum, RandomFullPrecisionProductsCancel) {
  std::mt19937_64 rng(1801);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> ed(-300, 300);
  for (int trial = 0; trial < 500; ++trial) {
    std::vector<std::pair<double, double>> pairs;
    for (int i = 0; i < 40; ++i) pairs.emplace_back(std::ldexp(u(rng), ed(rng)), std::ldexp(u(rng), ed(rng)));
    ExactSum s;
    for (auto [a, b] : pairs) s.add_product(a, b);
    s.add(0.375);
    std::shuffle(pairs.begin(), pairs.end(), rng);
    for (auto [a, b] : pairs) s.add_product(-a, b);
    ASSERT_EQ(s.value(), 0.375) << "trial " << trial;
  }
}

// TwoProduct skips the fma when both factors have at most 26 significant bits (the product is then
// exact): factors of 24 (fp32), 26 (the limit) and 27 bits (one past it: the fma path), mixed in one
// sum with a cancelling copy, must give the long accumulator's answer bit for bit.
TEST(ExactSum, ShortAndLongFactorsAgreeWithLongSum) {
  std::mt19937_64 rng(2611);
  std::uniform_int_distribution<std::int64_t> mant(1, (std::int64_t{1} << 27) - 1);
  std::uniform_int_distribution<int> bits(24, 27), ed(-200, 200), sign(0, 1);
  const auto draw = [&] {
    const int b = bits(rng);
    const std::int64_t m = (mant(rng) >> (27 - b)) | (std::int64_t{1} << (b - 1));  // exactly b bits
    return (sign(rng) ? -1.0 : 1.0) * std::ldexp(static_cast<double>(m), ed(rng) - b);
  };
  for (int trial = 0; trial < 3000; ++trial) {
    ExactSum s;
    std::vector<std::pair<double, double>> pairs;
    for (int i = 0; i < 1 + trial % 60; ++i) pairs.emplace_back(draw(), draw());
    for (auto [a, b] : pairs) s.add_product(a, b);
    s.value();  // compares with LongSum
    if (trial % 2) {
      std::shuffle(pairs.begin(), pairs.end(), rng);
      for (auto [a, b] : pairs) s.add_product(-a, b);
      s.add_product(draw(), draw());
      s.value();
    }
    if (HasFailure()) FAIL() << "trial " << trial;
  }
}

// Products below 2^-960 (a softmax's tiny weights times values) stay out of the error-free
// transformations and only widen the certificate: sums that hold some must still equal the long
// accumulator bit for bit, and the usual ones (tiny terms far below the result) stay certified.
TEST(ExactSum, TinyProductsWidenTheCertificate) {
  std::mt19937_64 rng(2613);
  std::normal_distribution<double> nd;
  std::uniform_int_distribution<int> tiny_exp(-1100, -961), kind(0, 3);
  int certified = 0;
  for (int trial = 0; trial < 5000; ++trial) {
    ExactSum s;
    const int k = kind(rng);
    for (int i = 0; i < 1 + trial % 50; ++i) {
      if (i % 3 == 1) s.add_product(std::ldexp(std::fabs(nd(rng)), tiny_exp(rng)), nd(rng));  // a tiny weight
      else if (k != 3) s.add_product(std::fabs(nd(rng)), nd(rng));
    }
    if (k == 1) s.add(0x1p-1074);  // the smallest subnormal next to them
    s.value();                    // compares with LongSum
    certified += !s.used_long();
    if (HasFailure()) FAIL() << "trial " << trial;
  }
  EXPECT_GT(certified, 2500);
  // Only tiny terms: the result is tiny or zero, below the certificate's range: the long accumulator.
  ExactSum only;
  only.add_product(0x1p-600, 0x1p-500);
  only.add_product(-0x1p-600, 0x1p-499);
  EXPECT_EQ(only.value(), 0.0);  // -2^-1100 rounds to zero (value() checks the sign against LongSum)
  EXPECT_TRUE(only.used_long());
}

// The plain-fp64 certificate for short factors (short_exact_dot): whenever it certifies, its dot is
// exact_sum_of_products' bit for bit (signed zeros included); it certifies typical widened bf16
// data and declines when the terms span more than fp64 holds (the campaign's +-2^100 keys).
TEST(ExactSum, ShortExactDotCertifiesOnlyExactSums) {
  using kparity::reference::exact_sum_of_products;
  using kparity::reference::min_lsb_exponent;
  using kparity::reference::short_exact_dot;
  std::mt19937_64 rng(2612);
  std::normal_distribution<double> nd;
  std::uniform_int_distribution<int> kind(0, 5), len(0, 70), ed(-30, 30);
  const auto bf16 = [](double x) { return static_cast<double>(static_cast<float>(std::ldexp(std::round(std::ldexp(x, 7)), -7))); };
  int certified = 0, declined = 0, bf16_trials = 0, bf16_certified = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    const int n = len(rng), k = kind(rng);
    std::vector<double> x(n), y(n);
    for (int i = 0; i < n; ++i) {
      x[i] = bf16(nd(rng));
      y[i] = k == 1 ? std::ldexp(bf16(nd(rng)), ed(rng)) : bf16(nd(rng));
      if (k == 2 && i % 7 == 3) y[i] = (i % 2 ? 0x1p100 : -0x1p100);                 // the campaign's keys
      if (k == 3) x[i] = std::signbit(x[i]) ? -0.0 : 0.0;                          // signed zeros
      if (k == 4 && i == n / 2) y[i] = std::numeric_limits<double>::infinity();      // a special value
      if (k == 5) x[i] = nd(rng);                                                  // full 53-bit factors
    }
    double dot = 0, abs_sum = 0;
    const bool ok = short_exact_dot(x.data(), min_lsb_exponent(x.data(), n), y.data(), min_lsb_exponent(y.data(), n),
                                    n, dot, abs_sum);
    const double want = exact_sum_of_products(n, [&](std::size_t i) { return std::pair{x[i], y[i]}; });
    bf16_trials += k == 0;
    bf16_certified += k == 0 && ok;
    if (ok) {
      ++certified;
      ASSERT_TRUE(same_bits(dot, want)) << "trial " << trial << " kind " << k << " n " << n;
    } else {
      ++declined;
    }
    if (k == 4 && n > 0) EXPECT_FALSE(ok) << "trial " << trial;
  }
  EXPECT_GT(bf16_certified, bf16_trials * 99 / 100);  // plain bf16 data: the fast path
  EXPECT_GT(certified, 5000);
  EXPECT_GT(declined, 5000);
  // Exactly at the limit: terms that are multiples of 2^0 summing (in |.|) to 2^53 decline, just
  // below certify.
  const double one = 1.0, big = 0x1p53 - 1;
  double d = 0, a = 0;
  std::vector<double> xs{big, one}, ys{1.0, 1.0};
  EXPECT_FALSE(short_exact_dot(xs.data(), 0, ys.data(), 0, 2, d, a));
  xs = {big - 1, one};
  EXPECT_TRUE(short_exact_dot(xs.data(), 0, ys.data(), 0, 2, d, a));
  EXPECT_EQ(d, big);
}

}  // namespace
