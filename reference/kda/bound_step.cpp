// bound_step.hpp: the a-priori bound's step on a value head's state rows, and its sequence form.
#include "bound_step.hpp"

#include "../sparse/lane_clones.hpp"
#include "bound_rows_avx2.hpp"

namespace kparity::reference::kda::bound {
namespace {

using detail::bound_rows_avx2_preferred, detail::bound_sweep1_avx2, detail::bound_sweep2_avx2, detail::bound_sweep21_avx2;


// The first sweep's sums start from zero, the residual from v.
void begin_lanes(const Tok& tok, RowLanes& L) {
  const std::size_t V = tok.v.size();
  for (auto* v : {&L.sya, &L.ssd, &L.syk}) v->assign(V, 0.0);
  L.res.assign(tok.v.begin(), tok.v.end());
}

// The step's first sweep (rows_begin) over the tiled rows where `tiles`, then over the rows past the
// last whole tile. Compiled for AVX-512, AVX2 and the baseline, picked at run time (issue 32 B: it
// was a seventh of a kernel-sized KDA case's host time in the baseline build's SSE2): its lanes are
// rows, each with its operations in the same order, and the library builds with -ffp-contract=off,
// so every clone gives the same bits.
KPARITY_CLONES
void sweep1_rows(const Ctx& c, const double* ST, const double* rho, const Tok& tok, const TokRows& r, RowLanes& L,
                 bool tiles) {
  const double u = c.u();
  const std::size_t K = tok.k.size(), V = tok.v.size();
  double* __restrict sya = L.sya.data();
  double* __restrict ssd = L.ssd.data();
  double* __restrict syk = L.syk.data();
  double* __restrict res = L.res.data();
  const double* __restrict rh = rho;
  const double* __restrict al_ = tok.alpha.data();
  const double* __restrict dal_ = tok.dalpha.data();
  const double* __restrict k_ = tok.k.data();
  const double* __restrict ka_ = r.ka.data();
  // Rows in tiles of kTile lanes, each tile's sums over i kept in registers for the whole sweep
  // (issue 32 (3): the row-at-a-time loop loaded and stored its four sums every element). Each
  // lane still adds its terms in order i = 0, 1, ..., so the sums are the same bits; rows past the
  // last whole tile take the plain loop.
  constexpr std::size_t kTile = 16;
  static const bool avx2 = bound_rows_avx2_preferred();  // then 8-row tiles (bound_rows_avx2.hpp)
  const std::size_t tiled = V - V % (avx2 ? 8 : kTile);
  if (tiles && avx2) bound_sweep1_avx2(K, V, tiled, ST, rh, al_, dal_, k_, ka_, 1 + u, sya, ssd, syk, res);
  for (std::size_t j0 = 0; tiles && !avx2 && j0 < tiled; j0 += kTile) {
    double a_ya[kTile] = {}, a_sd[kTile] = {}, a_yk[kTile] = {}, a_res[kTile], rj[kTile];
    for (std::size_t l = 0; l < kTile; ++l) a_res[l] = res[j0 + l], rj[l] = rh[j0 + l];
    for (std::size_t i = 0; i < K; ++i) {
      const double* __restrict row = ST + i * V + j0;
      const double al = al_[i], dal = dal_[i], ki = k_[i], kai = ka_[i];
      for (std::size_t l = 0; l < kTile; ++l) {
        const double sa = std::fabs(row[l]) + rj[l];
        const double ya = sa * (al + dal) * (1 + u);
        const double sdal = sa * dal;
        const double y = row[l] * al;
        a_ya[l] += ya * ya;
        a_sd[l] += sdal * sdal;
        a_yk[l] += std::fabs(ya * kai);
        a_res[l] -= y * ki;
      }
    }
    for (std::size_t l = 0; l < kTile; ++l)
      sya[j0 + l] = a_ya[l], ssd[j0 + l] = a_sd[l], syk[j0 + l] = a_yk[l], res[j0 + l] = a_res[l];
  }
  for (std::size_t i = 0; i < K && tiled < V; ++i) {
    const double* __restrict row = ST + i * V;
    const double al = tok.alpha[i], dal = tok.dalpha[i], ki = tok.k[i], kai = r.ka[i];
    for (std::size_t j = tiled; j < V; ++j) {
      const double sa = std::fabs(row[j]) + rh[j];
      const double ya = sa * (al + dal) * (1 + u);
      const double sdal = sa * dal;
      const double y = row[j] * al;
      sya[j] += ya * ya;
      ssd[j] += sdal * sdal;
      syk[j] += std::fabs(ya * kai);
      res[j] -= y * ki;
    }
  }
}

}  // namespace

// The four norms' sums of squares and k.k in one loop, each still in index order from +0 (issue 32
// (3): five loops, each a chain of dependent adds, were 1.5% of a recurrent case); the norms are
// sqrt(sum) * (1 + 2^-40).
void prepare_rows(const Tok& tok, TokRows& r) {
  const std::size_t K = tok.k.size();
  r.ka.resize(K), r.qa.resize(K);
  double kk = 0, s_ka = 0, s_dk = 0, s_q = 0, s_dq = 0;
  for (std::size_t i = 0; i < K; ++i) {
    const double ka = std::fabs(tok.k[i]) + tok.dk[i];
    r.ka[i] = ka;
    r.qa[i] = std::fabs(tok.q[i]) + tok.dq[i];
    kk += tok.k[i] * tok.k[i];
    s_ka += ka * ka, s_dk += tok.dk[i] * tok.dk[i], s_q += tok.q[i] * tok.q[i], s_dq += tok.dq[i] * tok.dq[i];
  }
  r.kk = kk;
  r.amax = *std::max_element(tok.alpha.begin(), tok.alpha.end());
  const double n = 1 + 0x1p-40;
  r.n_ka = std::sqrt(s_ka) * n, r.n_dk = std::sqrt(s_dk) * n, r.n_q = std::sqrt(s_q) * n, r.n_dq = std::sqrt(s_dq) * n;
}

void rows_begin(const Ctx& c, const std::vector<double>& ST, const std::vector<double>& rho, const Tok& tok,
                const TokRows& r, RowLanes& L) {
  begin_lanes(tok, L);
  sweep1_rows(c, ST.data(), rho.data(), tok, r, L, true);
}

KPARITY_CLONES
void rows_end(const Ctx& c, std::vector<double>& ST, std::vector<double>& rho, const Tok& tok, const TokRows& r,
              std::vector<double>& d_out, std::vector<unsigned char>& finite_out, RowLanes& L, const Tok* next,
              const TokRows* rn_) {
  const double u = c.u();
  const std::size_t K = tok.k.size(), V = tok.v.size();
  for (auto* v : {&L.ss2, &L.sdq}) v->assign(V, 0.0);
  L.d.resize(V), L.rho_new.resize(V), d_out.resize(V), finite_out.assign(V, 1);
  constexpr std::size_t kTile = 16;
  static const bool avx2 = bound_rows_avx2_preferred();  // then 8-row tiles (bound_rows_avx2.hpp)
  const std::size_t tiled = V - V % (avx2 ? 8 : kTile);
  const bool fused = next && avx2;  // else the next token's first sweep follows on its own
  const double* __restrict al_ = tok.alpha.data();
  const double* __restrict k_ = tok.k.data();
  const double* sya = L.sya.data();
  const double* ssd = L.ssd.data();
  const double* syk = L.syk.data();
  const double* res = L.res.data();
  const double ba = tok.beta + tok.dbeta;
  for (std::size_t j = 0; j < V; ++j) {
    const double n_ya = std::sqrt(sya[j]) * (1 + 0x1p-40), dy = std::sqrt(ssd[j]) * (1 + 0x1p-40) + u * n_ya;
    const double yk = syk[j];
    const double ra = std::fabs(tok.v[j]) + yk;
    const double du = dy * r.n_ka + n_ya * r.n_dk + c.g_dot() * yk;
    const double da = ba * ra * (1 + u);
    const double dd = tok.dbeta * ra + ba * (du + u * ra) + u * da;
    const double lin = rho[j] * r.amax * std::max(1.0, std::fabs(1 - tok.beta * r.kk));
    L.rho_new[j] = lin + dy + dd * r.n_ka + da * r.n_dk + 2 * u * (n_ya + da * r.n_ka);
    L.d[j] = tok.beta * res[j];
  }
  double* __restrict ss2 = L.ss2.data();
  double* __restrict sdq = L.sdq.data();
  const double* __restrict dj = L.d.data();
  const double* __restrict rn = L.rho_new.data();
  const double* __restrict qa_ = r.qa.data();
  unsigned char* __restrict fin = finite_out.data();
  // The update and the output's sums, tiled the same way (same order per lane). Whether a row stays
  // finite is a sum of sv - sv (0, or NaN from the first inf or NaN on): arithmetic the compiler
  // keeps in vector lanes, where a flag array kept the loop scalar.
  if (fused) {
    begin_lanes(*next, L);  // the sums above are spent: now the next token's
    bound_sweep21_avx2(K, V, tiled, ST.data(), rn, al_, k_, qa_, dj, ss2, sdq, next->alpha.data(), next->dalpha.data(),
                       next->k.data(), rn_->ka.data(), 1 + u, L.sya.data(), L.ssd.data(), L.syk.data(), L.res.data());
  } else if (avx2) {
    bound_sweep2_avx2(K, V, tiled, ST.data(), rn, al_, k_, qa_, dj, ss2, sdq, fin);
  }
  for (std::size_t j0 = 0; !avx2 && j0 < tiled; j0 += kTile) {
    double a_s2[kTile] = {}, a_dq[kTile] = {}, a_nf[kTile] = {}, dl[kTile], rl[kTile];
    for (std::size_t l = 0; l < kTile; ++l) dl[l] = dj[j0 + l], rl[l] = rn[j0 + l];
    for (std::size_t i = 0; i < K; ++i) {
      double* __restrict row = ST.data() + i * V + j0;
      const double al = al_[i], ki = k_[i], qai = qa_[i];
      for (std::size_t l = 0; l < kTile; ++l) {
        const double y = row[l] * al;
        const double sv = y + dl[l] * ki;
        row[l] = sv;
        a_nf[l] += sv - sv;
        const double s2a = std::fabs(sv) + rl[l];
        a_s2[l] += s2a * s2a;
        a_dq[l] += std::fabs(s2a * qai);
      }
    }
    for (std::size_t l = 0; l < kTile; ++l)
      ss2[j0 + l] = a_s2[l], sdq[j0 + l] = a_dq[l], fin[j0 + l] = static_cast<unsigned char>(a_nf[l] == 0);
  }
  for (std::size_t i = 0; i < K && tiled < V; ++i) {
    double* __restrict row = ST.data() + i * V;
    const double al = tok.alpha[i], ki = tok.k[i], qai = r.qa[i];
    for (std::size_t j = tiled; j < V; ++j) {
      const double y = row[j] * al;
      const double sv = y + dj[j] * ki;
      row[j] = sv;
      fin[j] &= static_cast<unsigned char>(std::isfinite(sv));
      const double s2a = std::fabs(sv) + rn[j];
      ss2[j] += s2a * s2a;
      sdq[j] += std::fabs(s2a * qai);
    }
  }
  for (std::size_t j = 0; j < V; ++j) {
    rho[j] = L.rho_new[j];
    d_out[j] = rho[j] * r.n_q + std::sqrt(ss2[j]) * (1 + 0x1p-40) * r.n_dq + c.g_dot() * sdq[j];
  }
  if (next) {
    if (!fused) begin_lanes(*next, L);
    sweep1_rows(c, ST.data(), rho.data(), *next, *rn_, L, !fused);
  }
}

void step_rows(const Ctx& c, std::vector<double>& ST, std::vector<double>& rho, const Tok& tok, const TokRows& r,
               std::vector<double>& d_out, std::vector<unsigned char>& finite_out, RowLanes& L) {
  rows_begin(c, ST, rho, tok, r, L);
  rows_end(c, ST, rho, tok, r, d_out, finite_out, L, nullptr, nullptr);
}

}  // namespace kparity::reference::kda::bound
