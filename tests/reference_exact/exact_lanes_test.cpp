// The lane kernels of the oracle's sums (reference/include/kparity/reference/exact_lanes.hpp): every
// kernel this machine has leaves, per lane, the p, s, T and range verdict of the scalar step
// (dot2_step) over the same terms, and the certified-or-fallback result is exact_sum_of_products'
// bit for bit (and LongSum's), on random, cancelling, tiny, huge, zero and special-value terms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kparity/reference/exact_lanes.hpp"
#include "kparity/reference/exact_sum.hpp"

namespace {

namespace lanes = kparity::reference::lanes;
using kparity::reference::exact_sum_of_products;
using kparity::reference::LongSum;

std::uint64_t bits(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, 8);
  return b;
}

// A family of sums: terms (A[i * lda + l], b[i]).
struct Family {
  std::size_t n = 0, lanes = 0, lda = 0;
  std::vector<double> A, b;
  double a(std::size_t i, std::size_t l) const { return A[i * lda + l]; }
};

// Values of one kind per family, so that every regime gets whole families.
enum class Kind { random, cancelling, tiny, huge, zeros, special, short_ints };

Family make(Kind k, std::size_t n, std::size_t lanes, std::mt19937_64& g) {
  Family f;
  f.n = n, f.lanes = lanes, f.lda = lanes + 3;  // padding between rows: lda is honoured
  f.A.assign(n * f.lda, 7.0);
  f.b.resize(n);
  std::normal_distribution<double> N;
  std::uniform_int_distribution<int> U(-40, 40);
  for (std::size_t i = 0; i < n; ++i) {
    f.b[i] = N(g);
    for (std::size_t l = 0; l < lanes; ++l) {
      double& v = f.A[i * f.lda + l];
      switch (k) {
        case Kind::random: v = std::ldexp(N(g), U(g)); break;
        case Kind::cancelling: v = (i % 2 ? -1.0 : 1.0) * std::ldexp(1.0, 100) + N(g); break;
        case Kind::tiny: v = std::ldexp(N(g), -980 + U(g)); break;
        case Kind::huge: v = std::ldexp(N(g), 990 + U(g) / 4); break;
        case Kind::zeros: v = (g() % 3 == 0) ? (g() % 2 ? -0.0 : 0.0) : N(g); break;
        case Kind::special: {
          const int r = static_cast<int>(g() % 16);
          v = r == 0 ? INFINITY : r == 1 ? -INFINITY : r == 2 ? NAN : N(g);
          break;
        }
        case Kind::short_ints: v = static_cast<double>(U(g)); break;
      }
    }
    if (k == Kind::zeros && g() % 4 == 0) f.b[i] = 0.0;
    if (k == Kind::short_ints) f.b[i] = static_cast<double>(U(g));
    if (k == Kind::cancelling) f.b[i] = 1.0;
  }
  return f;
}

// Lanes certify() decided and lanes dot2_certify decided, over every check: the fused verdict is
// allowed to decline a few (powers of two), not to stop deciding.
std::size_t g_certified = 0, g_fused = 0;

void check(const Family& f, const std::string& what, bool in_range) {
  std::vector<double> p(f.lanes, -0.0), s(f.lanes, 0.0), T(f.lanes, 0.0);
  std::vector<unsigned char> ok(f.lanes, 1);
  lanes::dot2(f.n, f.lanes, f.A.data(), f.lda, nullptr, f.b.data(), p.data(), s.data(), T.data(), ok.data());
  // The lane form of finish (vectorised certificate): every lane as finish() decides it.
  std::vector<double> all(f.lanes);
  lanes::finish_lanes(f.lanes, p.data(), s.data(), T.data(), ok.data(), f.n, 0.0, all.data(), [&](std::size_t l) {
    return exact_sum_of_products(f.n, [&](std::size_t i) { return std::pair{f.a(i, l), f.b[i]}; });
  });
  // The fused pass (dot2_certify) decides and returns what dot2 then certify do, and dot2_finish
  // gives finish_lanes' results.
  std::vector<double> cert(f.lanes), fused(f.lanes), finished(f.lanes);
  std::vector<unsigned char> dec(f.lanes), fused_dec(f.lanes);
  for (double extra : {0.0, 0x1p-70}) {
    lanes::certify(f.lanes, p.data(), s.data(), T.data(), ok.data(), f.n, extra, cert.data(), dec.data());
    // in_range: the promise dot2_certify may take (every product a zero-factor zero or in range),
    // given where the family keeps it.
    for (bool promise : {false, in_range}) {
      const std::size_t undecided = lanes::dot2_certify(f.n, f.lanes, f.A.data(), f.lda, nullptr, f.b.data(), f.n, extra,
                                                        fused.data(), fused_dec.data(), promise);
      EXPECT_EQ(undecided, static_cast<std::size_t>(std::count(fused_dec.begin(), fused_dec.end(), 0))) << what;
      EXPECT_GE(undecided, static_cast<std::size_t>(std::count(dec.begin(), dec.end(), 0))) << what;
      g_certified += static_cast<std::size_t>(std::count(dec.begin(), dec.end(), 1));
      g_fused += f.lanes - undecided;
      // The fused verdict decides a subset of certify's lanes (one-sided at powers of two), with
      // certify's result.
      for (std::size_t l = 0; l < f.lanes; ++l) {
        if (fused_dec[l]) {
          ASSERT_TRUE(dec[l]) << what << " lane " << l << " extra " << extra << " promise " << promise;
          EXPECT_EQ(bits(fused[l]), bits(cert[l])) << what << " lane " << l;
        }
      }
    }
  }
  lanes::dot2_finish(f.n, f.lanes, f.A.data(), f.lda, nullptr, f.b.data(), f.n, 0.0, finished.data(), [&](std::size_t l) {
    return exact_sum_of_products(f.n, [&](std::size_t i) { return std::pair{f.a(i, l), f.b[i]}; });
  });
  for (std::size_t l = 0; l < f.lanes; ++l)
    EXPECT_TRUE(bits(finished[l]) == bits(all[l]) || (std::isnan(finished[l]) && std::isnan(all[l]))) << what << " lane " << l;
  for (std::size_t l = 0; l < f.lanes; ++l) {
    double pl = -0.0, sl = 0.0, Tl = 0.0;
    unsigned char okl = 1;
    for (std::size_t i = 0; i < f.n && okl; ++i) lanes::dot2_step(f.a(i, l), f.b[i], pl, sl, Tl, okl);
    ASSERT_EQ(ok[l], okl) << what << " lane " << l;
    if (okl) {
      // Lanes that stayed in range carry the scalar step's transformations exactly.
      EXPECT_EQ(bits(p[l]), bits(pl)) << what << " lane " << l;
      EXPECT_EQ(bits(s[l]), bits(sl)) << what << " lane " << l;
      EXPECT_EQ(bits(T[l]), bits(Tl)) << what << " lane " << l;
    }
    auto term = [&](std::size_t i) { return std::pair{f.a(i, l), f.b[i]}; };
    const double want = exact_sum_of_products(f.n, term);
    const double got = lanes::finish(p[l], s[l], T[l], ok[l] != 0, f.n, 0.0, [&] { return exact_sum_of_products(f.n, term); });
    LongSum acc;
    for (std::size_t i = 0; i < f.n; ++i) acc.add_product(f.a(i, l), f.b[i]);
    const double lv = acc.value();
    EXPECT_TRUE(bits(got) == bits(want) || (std::isnan(got) && std::isnan(want))) << what << " lane " << l;
    EXPECT_TRUE(bits(all[l]) == bits(want) || (std::isnan(all[l]) && std::isnan(want))) << what << " lane " << l << " (finish_lanes)";
    EXPECT_TRUE(bits(got) == bits(lv) || (std::isnan(got) && std::isnan(lv))) << what << " lane " << l;
  }
}

// Runs body(name) under each lane kernel this machine has (scalar; AVX2 and AVX-512 where the CPU
// has them), each forced in turn; returns how many ran.
template <class Body>
int for_each_kernel(Body&& body) {
  int ran = 0;
  for (const char* name : {"scalar", "avx2", "avx512"}) {
    std::unique_ptr<lanes::ForceKernel> force;
    try {
      force = std::make_unique<lanes::ForceKernel>(name);
    } catch (const std::invalid_argument&) {
      continue;  // not on this machine
    }
    ++ran;
    body(name);
  }
  return ran;
}

TEST(ExactLanes, EveryKernelMatchesTheScalarStepsAndTheExactSum) {
  std::mt19937_64 g(25);
  const int kernels = for_each_kernel([&](const char* name) {
    EXPECT_STREQ(lanes::kernel_name(), name);
    for (Kind k : {Kind::random, Kind::cancelling, Kind::tiny, Kind::huge, Kind::zeros, Kind::special, Kind::short_ints})
      for (std::size_t lanes_n : {1, 7, 8, 16, 23, 40, 48, 130})
        for (std::size_t n : {0, 1, 2, 5, 33}) {
          const Family f = make(k, n, lanes_n, g);
          const bool in_range = k == Kind::random || k == Kind::cancelling || k == Kind::zeros || k == Kind::short_ints;
          check(f, std::string(name) + " kind " + std::to_string(static_cast<int>(k)) + " lanes " +
                       std::to_string(lanes_n) + " n " + std::to_string(n), in_range);
        }
  });
  EXPECT_GE(kernels, 1);
  EXPECT_GT(g_certified, 1000u);
  EXPECT_GE(static_cast<double>(g_fused), 0.95 * static_cast<double>(g_certified));
}

// The vectorised certificate decides exactly what detail::certify decides, lane by lane, on every
// kernel: on the transformations of random families, on values near a rounding midpoint (t at
// +-ulp/2 give or take the error bound), on non-finite, tiny and exact (T = 0) lanes, with and
// without `extra`.
TEST(ExactLanes, EveryKernelsCertificateDecidesAsTheScalarOne) {
  std::mt19937_64 g(2612);
  std::normal_distribution<double> N;
  std::uniform_int_distribution<int> U(-1074, 1023);
  const std::size_t L = 37;  // vector blocks and a tail
  std::vector<double> p(L), s(L), T(L), out(L);
  std::vector<unsigned char> ok(L), decided(L);
  const int kernels = for_each_kernel([&](const char* name) {
    for (int round = 0; round < 400; ++round) {
      for (std::size_t l = 0; l < L; ++l) {
        const int kind = static_cast<int>(g() % 8);
        p[l] = std::ldexp(N(g), kind == 0 ? U(g) : static_cast<int>(g() % 80) - 40);
        const double ulp = std::fabs(std::nextafter(p[l], INFINITY) - p[l]);
        switch (kind) {
          case 1: s[l] = ulp / 2 * (1 + std::ldexp(N(g), -30)); break;  // near the midpoint above
          case 2: s[l] = -ulp / 2 * (1 + std::ldexp(N(g), -30)); break;
          case 3: s[l] = ulp * N(g); break;
          case 4: s[l] = g() % 2 ? INFINITY : NAN; break;
          default: s[l] = ulp * std::ldexp(N(g), -5); break;
        }
        T[l] = g() % 5 == 0 ? 0.0 : std::fabs(s[l]) * std::ldexp(std::fabs(N(g)), -static_cast<int>(g() % 50));
        if (g() % 40 == 0) T[l] = INFINITY;
        if (g() % 30 == 0) p[l] = std::ldexp(N(g), -1020);
        ok[l] = g() % 10 != 0;
      }
      const std::size_t m = 1 + g() % 200;
      const double extra = g() % 3 == 0 ? 0.0 : std::ldexp(std::fabs(N(g)), -60 - static_cast<int>(g() % 40));
      lanes::certify(L, p.data(), s.data(), T.data(), ok.data(), m, extra, out.data(), decided.data());
      for (std::size_t l = 0; l < L; ++l) {
        double want = 0;
        const bool dec = ok[l] && kparity::reference::detail::certify(p[l], s[l], T[l], m, want, extra);
        ASSERT_EQ(decided[l] != 0, dec) << name << " lane " << l << " round " << round;
        if (dec) EXPECT_EQ(bits(out[l]), bits(want)) << name << " lane " << l << " round " << round;
      }
    }
  });
  EXPECT_GE(kernels, 1);
}

// dot2_scaled and dot2_updated on every kernel: the same updated A (bits) and the same p, s, T and
// range verdict as the plain loop "update every element, then dot2" on the scalar kernel, on every
// kind of family, at lane counts with and without a vector tail; with the in-range promise (half the
// families where it holds) too.
TEST(ExactLanes, EveryKernelsFusedUpdateMatchesTheUpdateThenDot2) {
  std::mt19937_64 g(3232);
  std::normal_distribution<double> N;
  std::size_t compared = 0;
  const int kernels = for_each_kernel([&](const char* name) {
    for (Kind k : {Kind::random, Kind::cancelling, Kind::tiny, Kind::huge, Kind::zeros, Kind::special, Kind::short_ints})
      for (std::size_t lanes_n : {1, 8, 13, 16, 40, 130})
        for (std::size_t n : {0, 1, 5, 33})
          for (bool fma_form : {false, true}) {
            const Family f = make(k, n, lanes_n, g);
            std::vector<double> c(n), d(lanes_n);
            for (double& x : c) x = k == Kind::zeros && g() % 4 == 0 ? 0.0 : N(g);
            for (double& x : d) x = k == Kind::special && g() % 8 == 0 ? INFINITY : std::ldexp(N(g), -3);
            std::vector<double> A = f.A, want_A = f.A;
            for (std::size_t i = 0; i < n; ++i)
              for (std::size_t l = 0; l < lanes_n; ++l) {
                double& a = want_A[i * f.lda + l];
                a = fma_form ? std::fma(d[l], c[i], a) : a * c[i];
              }
            std::vector<double> p(lanes_n, -0.0), s(lanes_n, 0.0), T(lanes_n, 0.0);
            std::vector<double> wp = p, ws = s, wT = T;
            std::vector<unsigned char> ok(lanes_n, 1), wok = ok;
            {
              lanes::ForceKernel scalar("scalar");
              lanes::dot2(n, lanes_n, want_A.data(), f.lda, nullptr, f.b.data(), wp.data(), ws.data(), wT.data(), wok.data());
            }
            // The in-range promise where it holds (every term of two finite factors passes
            // dot2_step's range test): the kernels then skip the test and must give the same results.
            bool promise = true;
            for (std::size_t i = 0; i < n && promise; ++i)
              for (std::size_t l = 0; l < lanes_n && promise; ++l) {
                const double a = want_A[i * f.lda + l], h = a * f.b[i];
                if (!std::isfinite(a) || !std::isfinite(f.b[i])) continue;
                promise = h == 0 ? (a == 0 || f.b[i] == 0) : (std::fabs(h) >= 0x1p-960 && std::fabs(h) <= 0x1p1000);
              }
            promise = promise && g() % 2 == 0;
            if (fma_form)
              lanes::dot2_updated(n, lanes_n, A.data(), f.lda, d.data(), c.data(), f.b.data(), p.data(), s.data(), T.data(), ok.data(),
                                  promise);
            else
              lanes::dot2_scaled(n, lanes_n, A.data(), f.lda, c.data(), f.b.data(), p.data(), s.data(), T.data(), ok.data(),
                                 promise);
            const std::string what = std::string(name) + " kind " + std::to_string(static_cast<int>(k)) + " lanes " +
                                     std::to_string(lanes_n) + " n " + std::to_string(n) + (fma_form ? " fma" : " scale") +
                                     (promise ? " promised" : "");
            for (std::size_t e = 0; e < A.size(); ++e)
              ASSERT_TRUE(bits(A[e]) == bits(want_A[e]) || (std::isnan(A[e]) && std::isnan(want_A[e]))) << what << " element " << e;
            for (std::size_t l = 0; l < lanes_n; ++l) {
              ASSERT_EQ(ok[l], wok[l]) << what << " lane " << l;
              if (!wok[l]) continue;
              EXPECT_EQ(bits(p[l]), bits(wp[l])) << what << " lane " << l;
              EXPECT_EQ(bits(s[l]), bits(ws[l])) << what << " lane " << l;
              EXPECT_EQ(bits(T[l]), bits(wT[l])) << what << " lane " << l;
              ++compared;
            }
          }
  });
  EXPECT_GE(kernels, 1);
  EXPECT_GT(compared, 1000u);
}

// The row indirection: term i reads row rows[i] of A.
TEST(ExactLanes, RowIndicesSelectRows) {
  std::mt19937_64 g(7);
  const Family f = make(Kind::random, 6, 20, g);
  const std::vector<std::int32_t> rows = {5, 0, 0, 3};
  const std::vector<double> b = {1.5, -2.0, 0.25, 3.0};
  std::vector<double> p(20, -0.0), s(20, 0.0), T(20, 0.0);
  std::vector<unsigned char> ok(20, 1);
  lanes::dot2(rows.size(), 20, f.A.data(), f.lda, rows.data(), b.data(), p.data(), s.data(), T.data(), ok.data());
  for (std::size_t l = 0; l < 20; ++l) {
    auto term = [&](std::size_t i) { return std::pair{f.a(static_cast<std::size_t>(rows[i]), l), b[i]}; };
    const double got = lanes::finish(p[l], s[l], T[l], ok[l] != 0, rows.size(), 0.0,
                                     [&] { return exact_sum_of_products(rows.size(), term); });
    EXPECT_EQ(bits(got), bits(exact_sum_of_products(rows.size(), term))) << l;
  }
}

}  // namespace

// error_sums (exact_lanes.hpp) on every kernel: per listed lane, detail::exact_error_sum's verdict
// and result on the lane's terms, and where it holds LongSum's exact sum rounded once; lanes not
// listed and lanes not held keep their old values. Families of a few weights times small integers
// (sums on rounding midpoints, what the certificate leaves to error_sums in dot2_finish) and random,
// zero and special-value families; rows picked through an index list, lanes listed out of order.
TEST(ExactLanes, ErrorSumsHoldWhereTheScalarExactErrorSumHolds) {
  std::mt19937_64 g(2525);
  std::uniform_real_distribution<double> W(0.0, 1.0);
  std::uniform_int_distribution<int> V(-3, 3);
  std::size_t held_total = 0, declined_total = 0;
  const int kernels = for_each_kernel([&](const char* name) {
    for (int trial = 0; trial < 400; ++trial) {
      const std::size_t n = 1 + g() % 6, L = 1 + g() % 70, lda = L + 5, R = n + 2;
      const int kind = trial % 4;  // 0, 1: midpoints; 2: random; 3: zeros and specials
      std::vector<double> A(R * lda), b(n);
      for (double& v : A) {
        v = kind < 2 ? static_cast<double>(V(g)) : kind == 2 ? std::ldexp(W(g) - 0.5, V(g) * 7) : 0.0;
        if (kind == 3) {
          const int r = static_cast<int>(g() % 8);
          v = r == 0 ? INFINITY : r == 1 ? NAN : r == 2 ? -0.0 : r == 3 ? std::ldexp(1.0, -1000) : static_cast<double>(V(g));
        }
      }
      for (double& w : b) w = kind == 1 && g() % 2 ? 1.0 : W(g);
      std::vector<std::int32_t> rows(n);
      for (auto& r : rows) r = static_cast<std::int32_t>(g() % R);
      std::vector<std::int32_t> which;
      for (std::size_t l = 0; l < L; ++l)
        if (g() % 4 != 0) which.push_back(static_cast<std::int32_t>(l));
      std::shuffle(which.begin(), which.end(), g);
      std::vector<double> out(L, 42.0);
      std::vector<unsigned char> held(which.size(), 7);
      lanes::error_sums(n, A.data(), lda, rows.data(), b.data(), which.size(), which.data(), out.data(), held.data());
      std::vector<unsigned char> listed(L, 0);
      for (std::size_t j = 0; j < which.size(); ++j) {
        const std::size_t l = static_cast<std::size_t>(which[j]);
        listed[l] = 1;
        auto term = [&](std::size_t i) { return std::pair{A[static_cast<std::size_t>(rows[i]) * lda + l], b[i]}; };
        double want = 0;
        const bool holds = kparity::reference::detail::exact_error_sum(n, term, want);
        ASSERT_EQ(held[j], holds ? 1 : 0) << name << " trial " << trial << " lane " << l;
        if (!holds) {
          EXPECT_EQ(out[l], 42.0) << name << " trial " << trial << " lane " << l;
          ++declined_total;
          continue;
        }
        ++held_total;
        EXPECT_EQ(bits(out[l]), bits(want)) << name << " trial " << trial << " lane " << l;
        LongSum acc;
        for (std::size_t i = 0; i < n; ++i) acc.add_product(term(i).first, term(i).second);
        EXPECT_EQ(bits(out[l]), bits(acc.value())) << name << " trial " << trial << " lane " << l;
      }
      for (std::size_t l = 0; l < L; ++l)
        if (!listed[l]) EXPECT_EQ(out[l], 42.0) << name << " trial " << trial << " lane " << l;
    }
  });
  EXPECT_GE(kernels, 1);
  EXPECT_GT(held_total, 10000u);
  EXPECT_GT(declined_total, 1000u);
}
