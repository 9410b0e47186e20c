// nonfinite_sums (reference/kda/state_lanes.hpp): the rows of a state sum whose terms have a
// non-finite factor get exactly what exact_sum_of_products returns for them (the recurrence's lane
// passes fall back to it row by row otherwise); the other rows are left to the caller untouched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "../../reference/kda/state_lanes.hpp"
#include "kparity/reference/exact_sum.hpp"

namespace {

namespace d = kparity::reference::kda::detail;

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A value of scale 2^e, or now and then inf, -inf, NaN, zero or a huge finite value.
double draw(std::mt19937_64& g, int special_in) {
  const double inf = std::numeric_limits<double>::infinity();
  std::normal_distribution<double> N;
  if (special_in > 0 && g() % special_in == 0) {
    switch (g() % 5) {
      case 0: return inf;
      case 1: return -inf;
      case 2: return std::numeric_limits<double>::quiet_NaN();
      case 3: return 0.0;
      default: return std::ldexp(N(g), 1020);  // finite, its products may overflow
    }
  }
  return std::ldexp(N(g), static_cast<int>(g() % 40) - 20);
}

TEST(StateLanes, NonFiniteSumsAreExactSumOfProductsValues) {
  std::mt19937_64 g(20261206);
  std::size_t special_rows = 0, plain_rows = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const std::size_t K = 1 + g() % 20, V = 1 + g() % 20;
    const int in_st = trial % 3 == 0 ? 0 : 2 + static_cast<int>(g() % 60), in_x = trial % 4 == 0 ? 0 : 2 + static_cast<int>(g() % 30);
    const bool with_e = g() % 2 == 0;
    std::vector<double> ST(K * V), x(K), e(V);
    for (double& v : ST) v = draw(g, in_st);
    for (double& v : x) v = draw(g, in_x);
    for (double& v : e) v = draw(g, in_st);
    if (trial % 7 == 1)  // a NaN in every row (the pass may end early), the other terms still mixed
      for (std::size_t j = 0; j < V; ++j) ST[(g() % K) * V + j] = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> out(V, 12345.0);
    std::vector<unsigned char> special(V, 7);
    d::nonfinite_sums(static_cast<std::int64_t>(K), static_cast<std::int64_t>(V), ST.data(), x.data(),
                      with_e ? e.data() : nullptr, out.data(), special.data());
    for (std::size_t j = 0; j < V; ++j) {
      const std::size_t n = K + (with_e ? 1 : 0);
      auto term = [&](std::size_t c) { return c < K ? std::pair{ST[c * V + j], x[c]} : std::pair{e[j], 1.0}; };
      bool non_finite = false;
      for (std::size_t c = 0; c < n; ++c) {
        const auto [a, b] = term(c);
        non_finite = non_finite || !std::isfinite(a) || !std::isfinite(b);
      }
      ASSERT_EQ(special[j], non_finite ? 1 : 0) << "trial " << trial << " row " << j;
      if (non_finite) {
        const double want = kparity::reference::exact_sum_of_products(n, term);
        EXPECT_TRUE(same_bits(out[j], want)) << "trial " << trial << " row " << j << ": " << out[j] << " vs " << want;
        ++special_rows;
      } else {
        EXPECT_TRUE(same_bits(out[j], 12345.0)) << "row " << j << " was written";
        ++plain_rows;
      }
    }
  }
  EXPECT_GT(special_rows, 1000u);
  EXPECT_GT(plain_rows, 1000u);
}

}  // namespace
