// The KDA bound's step in its sequence form (reference/kda/bound_step.hpp): rows_begin, then
// rows_end with the next token joining the state sweep, gives the state, rho and every output bound
// of one step_rows call per token, bit for bit, whole 8-row tiles and the rows past them alike.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "../../reference/kda/bound_step.hpp"

namespace {

namespace b = kparity::reference::kda::bound;

bool same(const std::vector<double>& x, const std::vector<double>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

b::Tok draw_token(std::mt19937_64& g, std::size_t K, std::size_t V) {
  std::normal_distribution<double> N;
  std::uniform_real_distribution<double> U01(0.0, 1.0);
  b::Tok t;
  for (auto* v : {&t.q, &t.k, &t.dq, &t.dk, &t.alpha, &t.dalpha}) v->resize(K);
  t.v.resize(V);
  for (std::size_t i = 0; i < K; ++i) {
    t.q[i] = N(g), t.k[i] = N(g) / 8, t.dq[i] = 1e-7 * std::abs(t.q[i]), t.dk[i] = 1e-7 * std::abs(t.k[i]);
    t.alpha[i] = 0.5 + U01(g) / 2, t.dalpha[i] = 1e-7 * t.alpha[i];
  }
  for (double& x : t.v) x = N(g);
  t.beta = U01(g), t.dbeta = 1e-7 * t.beta;
  return t;
}

TEST(BoundStep, SequenceFormIsStepRowsTokenByToken) {
  std::mt19937_64 g(20261206);
  const kparity::reference::Fp32Model m;
  for (std::size_t V : {1u, 7u, 8u, 13u, 16u, 35u, 64u}) {
    const std::size_t K = 3 + V % 9, T = 6;
    const b::Ctx c{m, static_cast<std::int64_t>(K)};
    std::vector<b::Tok> toks;
    std::vector<b::TokRows> rows(T);
    for (std::size_t t = 0; t < T; ++t) toks.push_back(draw_token(g, K, V)), b::prepare_rows(toks[t], rows[t]);
    std::normal_distribution<double> N;
    std::vector<double> S0(K * V);
    for (double& x : S0) x = N(g);
    // Token by token.
    std::vector<double> ST = S0, rho(V, 0.0), d_o;
    std::vector<unsigned char> fin;
    b::RowLanes L;
    std::vector<std::vector<double>> outs;
    for (std::size_t t = 0; t < T; ++t) b::step_rows(c, ST, rho, toks[t], rows[t], d_o, fin, L), outs.push_back(d_o);
    // The sequence form.
    std::vector<double> ST2 = S0, rho2(V, 0.0), d2;
    b::RowLanes L2;
    b::rows_begin(c, ST2, rho2, toks[0], rows[0], L2);
    for (std::size_t t = 0; t < T; ++t) {
      const bool last = t + 1 == T;
      b::rows_end(c, ST2, rho2, toks[t], rows[t], d2, fin, L2, last ? nullptr : &toks[t + 1], last ? nullptr : &rows[t + 1]);
      EXPECT_TRUE(same(d2, outs[t])) << "V " << V << " token " << t;
    }
    EXPECT_TRUE(same(ST2, ST)) << "V " << V;
    EXPECT_TRUE(same(rho2, rho)) << "V " << V;
  }
}

}  // namespace
