#pragma once
// Private to reference/kda: the a-priori bound's token of one value head (Tok), its context (Ctx)
// and the recurrence's step on the head's state rows (A.7), used by error_bound.cpp's recurrent,
// packed-decode and ReplaySSM bounds (moved out of error_bound.cpp with the sequence form below,
// issue 32 (3)); error_bound.cpp's header comment derives the arithmetic.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kparity/reference/error_bound.hpp"

namespace kparity::reference::kda::bound {

// One token of one value head: exact values and the bounds of the backend's values.
struct Tok {
  std::vector<double> q, dq, k, dk, g, dg, alpha, dalpha, v;  // q: scaled q_s; k: k^
  double beta = 0, dbeta = 0;
  // An fp32 overflow the recipe sees coming (an infinite bound above): everything this token
  // feeds gets +inf, set directly (inf * 0 in the bound arithmetic would read as NaN).
  bool overflow() const {
    auto any_inf = [](const std::vector<double>& v) {
      return std::any_of(v.begin(), v.end(), [](double e) { return e == INFINITY; });
    };
    return any_inf(dq) || any_inf(dk) || any_inf(dg) || any_inf(dalpha);
  }
};

struct Ctx {
  const Fp32Model& m;
  std::int64_t K = 0;
  double u() const { return m.u; }
  double t() const { return m.transcendental; }
  double g_dot() const { return gamma_n(static_cast<double>(K + 2), m.u_acc); }
};

// What step_rows needs of a token that does not depend on the row: computed once per token, not
// once per row (the same arithmetic in the same order, so the same bounds).
struct TokRows {
  std::vector<double> ka, qa;  // |k| + dk, |q| + dq
  double kk = 0, amax = 0, n_ka = 0, n_dk = 0, n_q = 0, n_dq = 0;
};
void prepare_rows(const Tok& tok, TokRows& r);

// Scratch of step_rows: per row j, the sums of its two sweeps and the step's d and new rho.
struct RowLanes {
  std::vector<double> sya, ssd, syk, res, d, ss2, sdq, rho_new;
};

// The step of A.7 on every state row of a value head at once: the state transposed, ST[i * V + j] =
// S[j][i] (exact, updated in place), rho[j] (row j's 2-norm bound, updated) and d_out[j] (the bound
// of o_j); finite_out[j]: whether the updated row is all finite. `r`: prepare_rows(tok). Each lane j
// is one row's recurrence with its sums over i in order (issue 25: rows in SIMD lanes, the loop of
// step_row at c6c0638 row by row; the same operations per row, so the same bits). Scratch in L.
void step_rows(const Ctx& c, std::vector<double>& ST, std::vector<double>& rho, const Tok& tok, const TokRows& r,
               std::vector<double>& d_out, std::vector<unsigned char>& finite_out, RowLanes& L);
// step_rows in two halves, for a sequence: rows_begin(tok) is the step's first sweep over the state
// (its sums in L); rows_end(tok, next) the rest, and where next is given (rn: prepare_rows(*next)),
// next's rows_begin in the same sweep (issue 32 (3): the update's pass and the next token's first
// read and write the same state and share |s'| + rho'). Every row does the same operations in the
// same order as in two step_rows calls, so the same bits; with next, finite_out is not written.
void rows_begin(const Ctx& c, const std::vector<double>& ST, const std::vector<double>& rho, const Tok& tok,
                const TokRows& r, RowLanes& L);
void rows_end(const Ctx& c, std::vector<double>& ST, std::vector<double>& rho, const Tok& tok, const TokRows& r,
              std::vector<double>& d_out, std::vector<unsigned char>& finite_out, RowLanes& L, const Tok* next,
              const TokRows* rn);

}  // namespace kparity::reference::kda::bound
