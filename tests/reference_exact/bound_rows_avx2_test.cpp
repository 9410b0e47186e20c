// The KDA bound's AVX2 sweeps (reference/kda/bound_rows_avx2.hpp) give, lane by lane, the bits of
// the documented scalar loops, on random states with zeros, infinities and NaNs in places, at sizes
// with and without a partial tile left to the caller (only whole 8-row tiles are touched).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "../../reference/kda/bound_rows_avx2.hpp"

namespace {

namespace d = kparity::reference::kda::detail;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

bool same(double a, double b) { return bits(a) == bits(b) || (std::isnan(a) && std::isnan(b)); }

bool avx2_here() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

TEST(BoundRowsAvx2, SweepsMatchTheScalarLoopsBitForBit) {
  if (!avx2_here()) GTEST_SKIP() << "no AVX2 on this machine";
  std::mt19937_64 g(2026);
  std::normal_distribution<double> N;
  std::size_t compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t K = 1 + g() % 40, V = 1 + g() % 70, tiled = V - V % 8;
    const bool specials = trial % 3 == 2;
    auto draw = [&](double scale) {
      double x = std::ldexp(N(g), static_cast<int>(g() % 20) - 10) * scale;
      if (specials && g() % 50 == 0) x = g() % 3 == 0 ? NAN : g() % 2 ? INFINITY : -INFINITY;
      if (g() % 40 == 0) x = g() % 2 ? 0.0 : -0.0;
      return x;
    };
    std::vector<double> ST(K * V), rho(V), al(K), dal(K), k(K), ka(K), qa(K), res(V), dvec(V), rho_new(V);
    for (double& x : ST) x = draw(1);
    for (double& x : rho) x = std::fabs(draw(1e-3));
    for (std::size_t i = 0; i < K; ++i)
      al[i] = std::fabs(draw(1)), dal[i] = std::fabs(draw(1e-6)), k[i] = draw(1), ka[i] = std::fabs(k[i]) + 1e-7,
      qa[i] = std::fabs(draw(1));
    for (std::size_t j = 0; j < V; ++j) res[j] = draw(1), dvec[j] = draw(1), rho_new[j] = std::fabs(draw(1e-3));
    const double one_u = 1 + 0x1p-24;

    std::vector<double> sya(V, -7.0), ssd(V, -7.0), syk(V, -7.0), r2 = res;
    d::bound_sweep1_avx2(K, V, tiled, ST.data(), rho.data(), al.data(), dal.data(), k.data(), ka.data(), one_u,
                         sya.data(), ssd.data(), syk.data(), r2.data());
    std::vector<double> ST2 = ST, ss2(V, -7.0), sdq(V, -7.0);
    std::vector<unsigned char> fin(V, 9);
    d::bound_sweep2_avx2(K, V, tiled, ST2.data(), rho_new.data(), al.data(), k.data(), qa.data(), dvec.data(),
                         ss2.data(), sdq.data(), fin.data());
    for (std::size_t j = 0; j < V; ++j) {
      if (j >= tiled) {  // rows past the last whole tile are the caller's: untouched
        EXPECT_EQ(sya[j], -7.0);
        EXPECT_TRUE(same(r2[j], res[j]));
        EXPECT_EQ(fin[j], 9);
        for (std::size_t i = 0; i < K; ++i) EXPECT_TRUE(same(ST2[i * V + j], ST[i * V + j]));
        continue;
      }
      double a_ya = 0, a_sd = 0, a_yk = 0, a_res = res[j], a_s2 = 0, a_dq = 0, a_nf = 0;
      for (std::size_t i = 0; i < K; ++i) {
        const double row = ST[i * V + j];
        const double sa = std::fabs(row) + rho[j];
        const double ya = sa * (al[i] + dal[i]) * one_u;
        const double sdal = sa * dal[i];
        const double y = row * al[i];
        a_ya += ya * ya;
        a_sd += sdal * sdal;
        a_yk += std::fabs(ya * ka[i]);
        a_res -= y * k[i];
        const double y2 = row * al[i];
        const double sv = y2 + dvec[j] * k[i];
        ASSERT_TRUE(same(ST2[i * V + j], sv)) << "trial " << trial << " row " << j << " i " << i;
        a_nf += sv - sv;
        const double s2a = std::fabs(sv) + rho_new[j];
        a_s2 += s2a * s2a;
        a_dq += std::fabs(s2a * qa[i]);
      }
      EXPECT_TRUE(same(sya[j], a_ya)) << "trial " << trial << " row " << j;
      EXPECT_TRUE(same(ssd[j], a_sd)) << "trial " << trial << " row " << j;
      EXPECT_TRUE(same(syk[j], a_yk)) << "trial " << trial << " row " << j;
      EXPECT_TRUE(same(r2[j], a_res)) << "trial " << trial << " row " << j;
      EXPECT_TRUE(same(ss2[j], a_s2)) << "trial " << trial << " row " << j;
      EXPECT_TRUE(same(sdq[j], a_dq)) << "trial " << trial << " row " << j;
      EXPECT_EQ(fin[j], static_cast<unsigned char>(a_nf == 0)) << "trial " << trial << " row " << j;
      ++compared;
    }
  }
  EXPECT_GT(compared, 500u);
}

}  // namespace
