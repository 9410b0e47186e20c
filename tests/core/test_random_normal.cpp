// Rng::normal() draws N(0, 1) (issue 32: Boost.Random's ziggurat replaced Box-Muller). Checked at a
// fixed seed on 2^21 draws, so the checks are deterministic; each tolerance is a stated number of
// standard errors of its statistic under the exact normal distribution:
//  - moments: mean, variance, skewness and excess kurtosis, each within 5 standard errors
//    (sqrt(1/N), sqrt(2/N), sqrt(6/N), sqrt(24/N));
//  - shape and tails: the count in each of 56 bins (edges 0, ±0.25, ..., ±6, the two tails past ±6
//    pooled with their neighbours; the ziggurat's tail start 3.4426 is an edge) within 5 binomial
//    standard errors sqrt(N p (1 - p)) of N p (p from erfc), plus 1 for the rounding of counts;
//    the chi-square over those bins below dof + 5 sqrt(2 dof);
//  - symmetry and independence: the positive count within 5 sqrt(N/4) of N/2, the lag-1
//    correlation within 5 sqrt(1/N) of 0.
// The same checks reject a generator with sd 1.01, one with the tail past the ziggurat's base layer
// redrawn, and one with a sliver (1, 1.015) missing (a wedge's width): the tolerances see those.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kparity/core/random.hpp"

namespace kparity {
namespace {

constexpr std::int64_t kDraws = std::int64_t{1} << 21;

double cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The names of the checks that fail for `draw` (empty: a normal sample at these tolerances).
std::vector<std::string> failed_checks(const std::function<double()>& draw) {
  std::vector<double> edges;
  for (int i = -24; i <= 24; ++i) edges.push_back(0.25 * i);
  edges.push_back(3.4426198558966521);  // where the ziggurat's tail begins
  edges.push_back(-3.4426198558966521);
  std::sort(edges.begin(), edges.end());
  // bins: (-inf, e0), [e0, e1), ..., [e_last, inf); the outermost two are pooled below.
  std::vector<std::int64_t> counts(edges.size() + 1, 0);
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0, lag = 0, prev = 0;
  std::int64_t positive = 0;
  for (std::int64_t i = 0; i < kDraws; ++i) {
    const double x = draw();
    s1 += x;
    s2 += x * x;
    s3 += x * x * x;
    s4 += x * x * x * x;
    lag += x * prev;
    prev = x;
    positive += x > 0;
    counts[static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), x) - edges.begin())]++;
  }
  const double n = static_cast<double>(kDraws);
  std::vector<std::string> failed;
  const auto check = [&](bool ok, const std::string& what) {
    if (!ok) failed.push_back(what);
  };
  const double mean = s1 / n, var = s2 / n - mean * mean;
  check(std::abs(mean) < 5 * std::sqrt(1 / n), "mean");
  check(std::abs(var - 1) < 5 * std::sqrt(2 / n), "variance");
  check(std::abs(s3 / n) < 5 * std::sqrt(6 / n), "skewness");
  check(std::abs(s4 / n - 3) < 5 * std::sqrt(24 / n), "kurtosis");
  check(std::abs(positive - n / 2) < 5 * std::sqrt(n / 4), "symmetry");
  check(std::abs(lag / n) < 5 * std::sqrt(1 / n), "lag-1 correlation");
  // Bins with their exact probabilities; the tails past ±6 (p ~ 1e-9) go with their neighbours.
  std::vector<double> p;
  std::vector<std::int64_t> c;
  for (std::size_t b = 0; b < counts.size(); ++b) {
    const double lo = b == 0 ? -INFINITY : edges[b - 1], hi = b == edges.size() ? INFINITY : edges[b];
    const double pb = cdf(hi) - cdf(lo);
    if (b == 1 || b == counts.size() - 1) {
      p.back() += pb;
      c.back() += counts[b];
    } else {
      p.push_back(pb);
      c.push_back(counts[b]);
    }
  }
  double chi2 = 0;
  for (std::size_t b = 0; b < p.size(); ++b) {
    const double expect = n * p[b], sd = std::sqrt(n * p[b] * (1 - p[b]));
    check(std::abs(static_cast<double>(c[b]) - expect) <= 5 * sd + 1, "bin " + std::to_string(b));
    chi2 += (static_cast<double>(c[b]) - expect) * (static_cast<double>(c[b]) - expect) / expect;
  }
  const double dof = static_cast<double>(p.size() - 1);
  check(chi2 < dof + 5 * std::sqrt(2 * dof), "chi-square");
  return failed;
}

TEST(RngNormal, MomentsTailsAndBinsAtAFixedSeed) {
  for (std::uint64_t seed : {1ull, 20261205ull}) {
    Rng r(seed);
    const std::vector<std::string> failed = failed_checks([&] { return r.normal(); });
    EXPECT_TRUE(failed.empty()) << "seed " << seed << ": " << ::testing::PrintToString(failed);
  }
}

TEST(RngNormal, TheChecksSeeAWrongSpreadAMissingTailAndAMissingWedge) {
  Rng a(1);
  EXPECT_FALSE(failed_checks([&] { return 1.01 * a.normal(); }).empty()) << "sd 1.01 passed";
  Rng b(1);
  const auto no_tail = [&] {  // values past the base layer's edge redrawn: the tail is missing
    for (;;) {
      const double x = b.normal();
      if (std::abs(x) < 3.4426198558966521) return x;
    }
  };
  EXPECT_FALSE(failed_checks(no_tail).empty()) << "a normal without its tail passed";
  Rng c(1);
  const auto no_wedge = [&] {  // values in (1.0, 1.0149673952392994716), a wedge-sized sliver, redrawn
    for (;;) {
      const double x = c.normal();
      if (!(std::abs(x) > 1.0 && std::abs(x) < 1.0149673952392994716)) return x;
    }
  };
  EXPECT_FALSE(failed_checks(no_wedge).empty()) << "a normal with a missing sliver passed";
}

TEST(RngNormal, FiniteAndStatelessAcrossCopies) {
  // A copy of the generator continues the same stream: normal() keeps no state outside the Rng.
  Rng r(99);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(std::isfinite(r.normal()));
  Rng copy = r;
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(r.normal(), copy.normal());
}

}  // namespace
}  // namespace kparity
