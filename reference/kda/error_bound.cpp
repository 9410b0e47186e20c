// A-priori error bounds of the KDA ops (error_bound.hpp, issue 18 item 1b). Every quantity below is
// an exact value x (computed in fp64 from the inputs; fp64's own error is ~2^-29 of the fp32 terms
// and absorbed by the final 2^-20 inflation) and a bound dx on |x^ - x| for the backend's fp32 x^;
// |x|a = |x| + dx bounds |x^|. u = 2^-24 (elementwise), u_acc = 2^-23 (any-order sums), t = 2 ulp
// (expf, logf; sqrtf and divisions are correctly rounded).
//
// Token (kda.md A.3-A.6), per value head:
//   q^ = q / sqrt(sum q^2 + 1e-6) (with the l2 norm): the sum of K + 1 positive terms is off by
//        gamma_{K+2}(u_acc) relative, the root halves that and adds u, the division or reciprocal
//        and multiply 2u: |dq_c| <= (gamma_{K+2}/2 + 3u) 1.01 |q^_c|; then q_s = q^ * fl32(scale): +2u.
//   gate g: x = fl(a + dt_bias) (u |x|), A = expf(A_log) (t). Bounded: y = A x (t + 2u), sigmoid
//        Lipschitz sigma(1 - sigma) e^dy, its evaluation (t + 2u) relative, times fl32(lb) (2u).
//        Softplus log(1 + e^x): sigma(x) e^dx dx propagated, 1.01 (t sigma(x) + u) from rounding
//        1 + e^x (absolute: the classic loss for x << 0), t |result| from logf; within u |x| of the
//        threshold 20 both branches, which differ by log(1 + e^-20) < 2.1e-9. g = -A sp: A dsp +
//        sp t A + u |g|. alpha = e^g: alpha (e^dg - 1) + alpha e^dg t.
//   beta = sigmoid(b): beta (t + 2u) 1.01. ReplaySSM rounds it through b's dtype: the backend's
//        rounded beta differs from the oracle's only if [beta - dbeta, beta + dbeta] holds a rounding
//        midpoint, and then by the rounded ends' distance (rounding is monotone).
// Recurrent step (A.7) on a state row s (K): y = s o alpha, d = beta (v - y.k), s' = y + d k,
//   o = s'.q. The backend's row error e = s^ - s is carried as a 2-norm bound rho, because the
//   step's linear part e -> (e o alpha)(I - beta k k^T) has 2-norm <= max alpha * max(1, |1 - beta
//   |k|^2|) (a symmetric rank-one update): with the l2 norm, |k| = 1 and the map never expands,
//   where an elementwise bound would double each token. Then
//     rho' = rho max(alpha) max(1, |1 - beta |k|^2|)            (the exact map on e)
//          + |sa o dalpha| + u |ya|                              (inputs at s^, decay rounding)
//          + dd |ka| + da |dk| + 2u (|ya| + da |ka|)             (d's error, k's, the update)
//   with sa = |s| + rho, ya = sa (alpha + dalpha)(1 + u), ra = |v| + ya.ka bounding |v - y^.k^|,
//   du = (|sa o dalpha| + u |ya|) |ka| + |ya| |dk| + gamma_{K+2}(u_acc) ya.ka (Cauchy-Schwarz for the
//   perturbed dot, the classic bound for its rounding), dd = dbeta ra + (beta + dbeta)(du + u ra)
//   + u da, da = (beta + dbeta) ra (1 + u). All norms are 2-norms over the K channels. Each state
//   element of the row is within rho, and o_j within rho' |q| + |s'a| |dq| + gamma_{K+2} s'a.qa.
// ReplaySSM (B.2.4-B.2.7): no recurrence, each quantity bounded elementwise from the rings.
//   W_i = exp(sum_{i' > i} g_i'), Dtot = exp(sum g): any fp32 way of forming the sums is within
//   2 gamma_{m+1}(u_acc) sum |g| + u |arg| of the exponent. The ring operands are rounded to the out
//   dtype (u_io relative, half its smallest subnormal absolutely); S_prev = S0 Dtot + sum_i d_i kw_i
//   with gamma_{m+2}(u_acc) on the sum of the products' magnitudes; sq, sk, kq dot products as
//   above; dl = beta (v - sk); out = sq + dl kq; the flushed state S_prev alpha + dl k; the
//   appended ring entries dl, g, k^ (under the tf32-dot profile k^ rounded to out's dtype first:
//   u_io (|k^| + dk) more, precision_profile.hpp).
// Elements an op does not write, padding rows and rows with a non-finite input get 0 (the rule
// compares classes for non-finite values). A bound beyond 1e37 (magnitudes far past fp32's range:
// an intermediate may overflow) becomes +inf, and so does everything downstream of an fp32
// overflow the recipe sees coming: a sum of squares of the l2 norm, expf(A_log) or a + dt_bias
// reaching FLT_MAX / 2 (fp32 then normalises q to 0, or computes inf * 0 in the gate).
#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "../sparse/lane_clones.hpp"
#include "bound_step.hpp"
#include "kda_detail.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/kda.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::reference::kda {
namespace {

using namespace detail;
using bound::Ctx, bound::Tok, bound::TokRows, bound::RowLanes, bound::prepare_rows, bound::step_rows, bound::rows_begin,
    bound::rows_end;

constexpr double kInflate = 1 + 0x1p-20;
constexpr double kHuge = 1e37;
constexpr double kFltOverflow = 0x1p127;  // FLT_MAX / 2: an fp32 value from here on may overflow

// A bound vector for tensor `v`, and flat row-major indices into it.
std::vector<double> zeros_like(const TensorView& v) { return std::vector<double>(static_cast<std::size_t>(v.numel()), 0.0); }
std::size_t flat(const TensorView& v, std::initializer_list<std::int64_t> idx) {
  std::size_t f = 0;
  int dim = 0;
  for (std::int64_t i : idx) f = f * static_cast<std::size_t>(v.sizes[dim++]) + static_cast<std::size_t>(i);
  return f;
}
// A slot index inside a state pool or ring (the bounds' element loads below do not check it again),
// on a host view.
void check_slot(const TensorView& v, std::int64_t s) {
  elements::require_host(v);
  if (v.ndim() != 4 || s >= v.size(0)) throw std::out_of_range("state slot " + std::to_string(s) + " outside the pool");
}
// Element (i0, i1, i2, i3) of a 4-D view, widened (elements.hpp; the caller stays inside the shape).
double at4(const TensorView& v, std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3) {
  return elements::load_at(v, i0 * v.strides[0] + i1 * v.strides[1] + i2 * v.strides[2] + i3 * v.strides[3]);
}

double dot_abs(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += std::fabs(x[i] * y[i]);
  return s;
}
bool all_finite(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double e) { return std::isfinite(e); });
}
// Finite bounds stay, huge ones become inf; NaN means a non-finite input reached the arithmetic
// (the rule compares classes there): 0.
double settle(double b) {
  if (std::isnan(b)) return 0.0;
  return b >= kHuge ? INFINITY : b * kInflate;
}

// q or k: optional l2 norm, then the scale (q only).
void normalise(const Ctx& c, std::vector<double>& x, std::vector<double>& dx, bool l2, double scale, bool scaled) {
  double rel = 0;
  if (l2) {
    double n = 1e-6;
    for (double e : x) n += e * e;
    const double r = std::sqrt(n);
    for (double& e : x) e /= r;
    rel = (gamma_n(static_cast<double>(x.size() + 2), c.m.u_acc) / 2 + 3 * c.u()) * 1.01;
    if (n >= kFltOverflow) rel = INFINITY;  // fp32's sum of squares may overflow: q^ = q / inf = 0
  }
  if (scaled) {
    for (double& e : x) e *= scale;
    rel += 2 * c.u();
  }
  dx.resize(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) dx[i] = rel * std::fabs(x[i]);
}

double sigmoid_exact(double y) { return 1 / (1 + std::exp(-y)); }

// The gate g and its bound from x = a + dt_bias (both exact inputs).
// A = exp(A_log), taken once per head by the caller (the same value as per channel).
void gate_bound_A(const Ctx& c, double x, double A, const std::optional<double>& lb, double& g, double& dg) {
  const double u = c.u(), t = c.t(), dx = u * std::fabs(x);
  if (A >= kFltOverflow || std::fabs(x) >= kFltOverflow) {  // expf(A_log) or a + dt_bias may overflow
    g = lb ? *lb * sigmoid_exact(A * x) : -A * (x > 20 ? x : std::log1p(std::exp(x)));
    dg = INFINITY;
    return;
  }
  if (lb) {
    const double y = A * x, dy = (t + 2 * u) * 1.01 * std::fabs(y);
    const double s = sigmoid_exact(y);
    const double ds = std::min(0.25, s * (1 - s) * std::exp(dy)) * dy + (t + 2 * u) * 1.01 * (s + dy / 4);
    g = *lb * s;
    dg = std::fabs(*lb) * ds + 2 * u * std::fabs(*lb) * (s + ds);
    return;
  }
  const double sig = sigmoid_exact(x);
  const double sp = x > 20 ? x : std::log1p(std::exp(x));
  const double ds_log = sig * std::exp(dx) * dx + 1.01 * (t * sig + u) + t * (sp + u);
  double dsp = x > 20 ? dx : ds_log;
  if (std::fabs(x - 20) <= 2 * dx + 1e-30) dsp = std::max(dx, ds_log) + 2.1e-9;
  g = -A * sp;
  dg = (A * (1 + t) * dsp + sp * t * A + u * std::fabs(g)) * 1.01;
}

void gate_bound(const Ctx& c, double x, double A_log, const std::optional<double>& lb, double& g, double& dg) {
  gate_bound_A(c, x, std::exp(A_log), lb, g, dg);
}

void alpha_bound(const Ctx& c, Tok& tok) {
  const std::size_t K = tok.g.size();
  tok.alpha.resize(K);
  tok.dalpha.resize(K);
  for (std::size_t i = 0; i < K; ++i) {
    tok.alpha[i] = std::exp(tok.g[i]);
    const double e = tok.dg[i] == 0 ? 1.0 : std::exp(tok.dg[i]);  // exp(+-0) is exactly 1 (a given g)
    tok.dalpha[i] = e == INFINITY ? INFINITY : tok.alpha[i] * (e - 1) + tok.alpha[i] * e * c.t();
  }
}

void beta_from_logit(const Ctx& c, Tok& tok, double b) {
  tok.beta = sigmoid_exact(b);
  tok.dbeta = tok.beta * (c.t() + 2 * c.u()) * 1.01;
}

// One token of a decode op (B.0): row r, value head hv, from mixed_qkv, the gate inputs and b.
template <class Args>
Tok decode_token(const Ctx& c, const Args& x, std::int64_t r, std::int64_t hv, std::int64_t H, std::int64_t V) {
  const std::int64_t K = c.K, h = hv / (x.initial_state.size(1) / H);
  Tok tok;
  tok.q.resize(K), tok.k.resize(K), tok.g.resize(K), tok.dg.resize(K), tok.v.resize(V);
  for (std::int64_t i = 0; i < K; ++i) {
    tok.q[i] = x.mixed_qkv.at({r, h * K + i});
    tok.k[i] = x.mixed_qkv.at({r, H * K + h * K + i});
    gate_bound(c, per_head_k(x.a, r, hv, i, K) + bias_at(x.dt_bias, hv, i, K), x.A_log.at({hv}), x.lower_bound,
               tok.g[i], tok.dg[i]);
  }
  for (std::int64_t j = 0; j < V; ++j) tok.v[j] = x.mixed_qkv.at({r, 2 * H * K + hv * V + j});
  normalise(c, tok.q, tok.dq, x.use_qk_l2norm_in_kernel, x.scale, true);
  normalise(c, tok.k, tok.dk, x.use_qk_l2norm_in_kernel, 1.0, false);
  alpha_bound(c, tok);
  beta_from_logit(c, tok, x.b.at({r, hv}));
  return tok;
}

}  // namespace

// ------------------------------------------------------------------------------------------------

ErrorBounds recurrent_error_bound(const RecurrentArgs& x, const Fp32Model& m) {
  const std::int64_t T = x.q.size(0), H = x.q.size(1), K = x.q.size(2), HV = x.v.size(1), V = x.v.size(2);
  if (H == 0 || HV % H != 0) throw std::invalid_argument("kda/recurrent error bound: HV must be a multiple of H");
  const std::int64_t G = HV / H;
  const Ctx c{m, K};
  ErrorBounds b;
  std::vector<double>& out_b = b["out"];
  out_b = zeros_like(x.out);
  std::vector<double>* fs_b = nullptr;
  if (x.final_state) {
    fs_b = &b["final_state"];
    *fs_b = zeros_like(*x.final_state);
  }
  std::vector<std::int64_t> cu{0, T};
  if (x.cu_seqlens) {
    cu.resize(static_cast<std::size_t>(x.cu_seqlens->size(0)));
    for (std::size_t n = 0; n < cu.size(); ++n) cu[n] = x.cu_seqlens->at_int({static_cast<std::int64_t>(n)});
  }
  const double scale = x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(K));
  TokRows trs[2];
  RowLanes lanes;
  std::vector<double> d_o;
  std::vector<unsigned char> row_finite;
  for (std::size_t n = 0; n + 1 < cu.size(); ++n) {
    for (std::int64_t hv = 0; hv < HV; ++hv) {
      const std::int64_t h = hv / G;
      std::vector<double> ST(static_cast<std::size_t>(V * K), 0.0);  // transposed: ST[i * V + j]
      std::vector<double> rho(V, 0.0);
      bool finite = true, overflow = false;
      if (x.initial_state) load_state_T(*x.initial_state, static_cast<std::int64_t>(n), hv, V, K, ST);
      // A token's rows read as runs (ld_run: the same values as at() an element, checked once), the
      // bias row and exp(A_log) once per head, the token's vectors reused (every field is rewritten
      // each token). Issue 32 (3): per-element loads and A_log's exp were 8% of the bound.
      // Two tokens in turn: t's, and t - 1's, whose step ends in the sweep that begins t's (rows_end).
      Tok toks[2];
      for (Tok& tk : toks) tk.q.resize(K), tk.k.resize(K), tk.g.resize(K), tk.dg.resize(K), tk.v.resize(V);
      std::int64_t pend = -1;  // the token whose step is under way, if any
      auto end_step = [&](const Tok* next, const TokRows* rn) {
        rows_end(c, ST, rho, toks[pend & 1], trs[pend & 1], d_o, row_finite, lanes, next, rn);
        for (std::int64_t j = 0; j < V; ++j) out_b[flat(x.out, {pend, hv, j})] = settle(d_o[j]);
        pend = -1;
      };
      std::vector<double> a_row(static_cast<std::size_t>(x.g ? 0 : K)), bias(a_row.size());
      const double A = x.g ? 0.0 : std::exp(x.A_log->at({hv}));
      if (!x.g) bias_run(*x.dt_bias, hv, K, bias.data());
      for (std::int64_t t = cu[n]; t < cu[n + 1]; ++t) {
        Tok& tok = toks[t & 1];
        ld_run(x.q, {t, h, std::int64_t{0}}, 2, K, tok.q.data());
        ld_run(x.k, {t, h, std::int64_t{0}}, 2, K, tok.k.data());
        ld_run(x.v, {t, hv, std::int64_t{0}}, 2, V, tok.v.data());
        if (x.g) ld_run(*x.g, {t, hv, std::int64_t{0}}, 2, K, tok.g.data());
        else per_head_k_run(*x.a, t, hv, K, a_row.data());
        const double bv = x.beta.at({t, hv});
        // After a token with a non-finite input every bound of this head is 0, as zeros_like left
        // it: the token's reads (checked as before), no arithmetic (issue 32 (3)).
        if (!finite) continue;
        normalise(c, tok.q, tok.dq, x.use_qk_l2norm_in_kernel, scale, true);
        normalise(c, tok.k, tok.dk, x.use_qk_l2norm_in_kernel, 1.0, false);
        if (x.g) std::fill(tok.dg.begin(), tok.dg.end(), 0.0);
        else
          for (std::int64_t i = 0; i < K; ++i) gate_bound_A(c, a_row[i] + bias[i], A, x.lower_bound, tok.g[i], tok.dg[i]);
        alpha_bound(c, tok);
        if (x.beta_is_logits) beta_from_logit(c, tok, bv);
        else tok.beta = bv, tok.dbeta = 0;
        finite = all_finite(tok.q) && all_finite(tok.k) && all_finite(tok.alpha) && all_finite(tok.v) && std::isfinite(tok.beta);
        overflow = overflow || (finite && tok.overflow());
        // A token after an fp32 overflow gets +inf, one with a non-finite input 0: no step either way.
        const bool live = finite && !overflow;
        if (live) prepare_rows(tok, trs[t & 1]);
        if (pend >= 0) end_step(live ? &tok : nullptr, live ? &trs[t & 1] : nullptr);
        else if (live) rows_begin(c, ST, rho, tok, trs[t & 1], lanes);
        if (live) pend = t;
        else if (finite)
          for (std::int64_t j = 0; j < V; ++j) out_b[flat(x.out, {t, hv, j})] = INFINITY;
      }
      if (pend >= 0) end_step(nullptr, nullptr);
      if (fs_b)
        for (std::int64_t j = 0; j < V; ++j)
          for (std::int64_t i = 0; i < K; ++i)
            (*fs_b)[flat(*x.final_state, {static_cast<std::int64_t>(n), hv, j, i})] =
                !finite ? 0.0 : overflow ? INFINITY : settle(rho[j]);
    }
  }
  return b;
}

ErrorBounds packed_decode_error_bound(const PackedDecodeArgs& x, const Fp32Model& m) {
  const std::int64_t B = x.mixed_qkv.size(0), HV = x.initial_state.size(1), V = x.initial_state.size(2),
                     K = x.initial_state.size(3);
  const std::int64_t H = (x.mixed_qkv.size(1) - HV * V) / 2 / K;
  const Ctx c{m, K};
  ErrorBounds b;
  std::vector<double>& out_b = b["out"];
  std::vector<double>& st_b = b["initial_state"];
  out_b = zeros_like(x.out);
  st_b = zeros_like(x.initial_state);
  TokRows rows;
  RowLanes lanes;
  std::vector<double> ST(static_cast<std::size_t>(V * K)), rho, d_o;
  std::vector<unsigned char> row_finite;
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t s = x.ssm_state_indices.at_int({r});
    if (s < 0) continue;  // padding: zeros, exact
    check_slot(x.initial_state, s);
    for (std::int64_t hv = 0; hv < HV; ++hv) {
      Tok tok = decode_token(c, x, r, hv, H, V);
      const bool finite = all_finite(tok.q) && all_finite(tok.k) && all_finite(tok.alpha) && all_finite(tok.v) &&
                          std::isfinite(tok.beta);
      prepare_rows(tok, rows);
      load_state_T(x.initial_state, s, hv, V, K, ST);
      rho.assign(V, 0.0);
      step_rows(c, ST, rho, tok, rows, d_o, row_finite, lanes);
      const bool ovf = tok.overflow();
      for (std::int64_t j = 0; j < V; ++j) {
        const bool ok = finite && row_finite[j];
        out_b[flat(x.out, {r, 0, hv, j})] = !ok ? 0.0 : ovf ? INFINITY : settle(d_o[j]);
        const double e = !ok ? 0.0 : ovf ? INFINITY : settle(rho[j]);
        const std::size_t at = flat(x.initial_state, {s, hv, j, 0});
        std::fill(st_b.begin() + static_cast<std::ptrdiff_t>(at), st_b.begin() + static_cast<std::ptrdiff_t>(at + K), e);
      }
    }
  }
  return b;
}

ErrorBounds replayssm_decode_error_bound(const ReplaySsmDecodeArgs& args, const Fp32Model& m) {
  const ReplaySsmDecodeArgs x = kparity::kda::replayssm_flattened(args);
  const std::int64_t B = x.mixed_qkv.size(0), HV = x.initial_state.size(1), V = x.initial_state.size(2),
                     K = x.initial_state.size(3), L = x.d_cache.size(2);
  const std::int64_t H = (x.mixed_qkv.size(1) - HV * V) / 2 / K, G = HV / H;
  const Ctx c{m, K};
  const double u = m.u, t = m.transcendental, ua = m.u_acc;
  const DType io = x.out.dtype;
  const double u_io = io == DType::f32 ? 0.0 : unit_roundoff(io), uf_io = io == DType::f32 ? 0.0 : underflow_unit(io);
  ErrorBounds b;
  std::vector<double>& out_b = b["out"];
  std::vector<double>& st_b = b["initial_state"];
  std::vector<double>& d_b = b["d_cache"];
  std::vector<double>& k_b = b["k_cache"];
  std::vector<double>& g_b = b["g_cache"];
  out_b = zeros_like(args.out), st_b = zeros_like(args.initial_state), d_b = zeros_like(args.d_cache);
  k_b = zeros_like(args.k_cache), g_b = zeros_like(args.g_cache);
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t s = x.ssm_state_indices.at_int({r});
    if (s < 0) continue;
    check_slot(x.initial_state, s);
    check_slot(x.d_cache, s), check_slot(x.k_cache, s), check_slot(x.g_cache, s);
    const std::int64_t cpos = x.write_pos.at_int({r});
    const bool flush = cpos == L - 1 || (x.force_flush && x.force_flush->at_int({r}) != 0);
    const std::int64_t mm = cpos;  // ring entries folded
    for (std::int64_t hv = 0; hv < HV; ++hv) {
      const std::int64_t h = hv / G;
      Tok tok = decode_token(c, x, r, hv, H, V);
      if (x.beta_rounding == kparity::kda::BetaRounding::through_b_dtype) {
        const DType bt = x.b.dtype;
        const double br = round_to_dtype(tok.beta, bt);
        const double lo = round_to_dtype(tok.beta - tok.dbeta, bt), hi = round_to_dtype(tok.beta + tok.dbeta, bt);
        tok.dbeta = std::max(hi - br, br - lo);
        tok.beta = br;
      }
      // The ring entries this step folds, read once (m x V, m x K, m x K).
      std::vector<double> rd(mm * V), rk(mm * K), rg(mm * K);
      for (std::int64_t e = 0; e < mm; ++e) {
        for (std::int64_t j = 0; j < V; ++j) rd[e * V + j] = at4(x.d_cache, s, hv, e, j);
        for (std::int64_t i = 0; i < K; ++i) rk[e * K + i] = at4(x.k_cache, s, h, e, i), rg[e * K + i] = at4(x.g_cache, s, hv, e, i);
      }
      // B.2.4: the decays of the ring entries and of the checkpoint.
      std::vector<double> W(mm * K), dW(mm * K), Dt(K), dDt(K);
      bool finite = all_finite(tok.q) && all_finite(tok.k) && all_finite(tok.alpha) && all_finite(tok.v) &&
                    std::isfinite(tok.beta);
      const bool ovf = tok.overflow();
      for (std::int64_t i = 0; i < K; ++i) {
        double sum_abs = 0, suffix = 0;
        for (std::int64_t e = 0; e < mm; ++e) sum_abs += std::fabs(rg[e * K + i]);
        const double dsum = 2 * gamma_n(static_cast<double>(mm + 1), ua) * sum_abs;
        for (std::int64_t e = mm - 1; e >= 0; --e) {
          const double darg = dsum + u * (std::fabs(suffix) + dsum), ex = std::exp(darg);
          W[e * K + i] = std::exp(suffix);
          dW[e * K + i] = W[e * K + i] * (ex - 1) + W[e * K + i] * ex * t;
          suffix += rg[e * K + i];
        }
        const double darg = dsum + u * (std::fabs(suffix) + dsum), ex = std::exp(darg);
        Dt[i] = std::exp(suffix);
        dDt[i] = Dt[i] * (ex - 1) + Dt[i] * ex * t;
        finite = finite && std::isfinite(suffix) && std::isfinite(sum_abs);
      }
      auto fin = [&](double e) { return !finite ? 0.0 : ovf ? INFINITY : settle(e); };
      // S_prev and its elementwise bound. What a term needs of its ring entry e and channel i (kw, its
      // bound, |kw| + dkw) and of e and row j (|d| + ddr, ddr) is taken once, not once per (j, i, e)
      // (the same expressions, so the same values), and the sums over e run with the channels in
      // vector lanes, each lane adding in e order as before (issue 32 (3)).
      std::vector<double> Sp(V * K), dSp(V * K);
      const double g_ring = gamma_n(static_cast<double>(mm + 2), ua);
      std::vector<double> kw(mm * K), dkw(mm * K), kwa(mm * K), da_(mm * V), ddr(mm * V);
      for (std::int64_t e = 0; e < mm; ++e) {
        for (std::int64_t i = 0; i < K; ++i) {
          const double kc = rk[e * K + i], w = W[e * K + i], dw = dW[e * K + i];
          kw[e * K + i] = kc * w;
          dkw[e * K + i] = std::fabs(kc) * dw + (u + u_io * (1 + u)) * std::fabs(kc) * (w + dw) + uf_io;
          kwa[e * K + i] = std::fabs(kw[e * K + i]) + dkw[e * K + i];
        }
        for (std::int64_t j = 0; j < V; ++j) {
          const double d = rd[e * V + j];
          ddr[e * V + j] = u_io * std::fabs(d) + uf_io;
          da_[e * V + j] = std::fabs(d) + ddr[e * V + j];
        }
      }
      std::vector<double> s0row(K);
      for (std::int64_t j = 0; j < V; ++j) {
        elements::load_run(x.initial_state, elements::offset_of(x.initial_state, {s, hv, j, std::int64_t{0}}),
                           x.initial_state.strides[3], K, s0row.data());
        double* __restrict val = Sp.data() + j * K;
        double* __restrict err = dSp.data() + j * K;
        for (std::int64_t i = 0; i < K; ++i) {
          const double s0 = s0row[i];
          val[i] = s0 * Dt[i];
          err[i] = std::fabs(s0) * dDt[i] + u * std::fabs(s0) * (Dt[i] + dDt[i]);
        }
        std::vector<double>& mag = s0row;  // |s0| (Dt + dDt), then the magnitudes' sum
        for (std::int64_t i = 0; i < K; ++i) mag[i] = std::fabs(mag[i]) * (Dt[i] + dDt[i]);
        ring_terms(K, mm, rd.data() + j, V, da_.data() + j, ddr.data() + j, kw.data(), dkw.data(), kwa.data(), val, err,
                   mag.data());
        for (std::int64_t i = 0; i < K; ++i) err[i] = err[i] + g_ring * mag[i];
      }
      // B.2.5
      std::vector<double> qa_(K), dqa(K), ka_(K), dka(K), qmag(K), kmag(K);
      for (std::int64_t i = 0; i < K; ++i) {
        const double aa = tok.alpha[i] + tok.dalpha[i];
        qa_[i] = tok.q[i] * tok.alpha[i];
        ka_[i] = tok.k[i] * tok.alpha[i];
        dqa[i] = tok.dq[i] * aa + std::fabs(tok.q[i]) * tok.dalpha[i] + u * (std::fabs(tok.q[i]) + tok.dq[i]) * aa;
        dka[i] = tok.dk[i] * aa + std::fabs(tok.k[i]) * tok.dalpha[i] + u * (std::fabs(tok.k[i]) + tok.dk[i]) * aa;
        qmag[i] = std::fabs(qa_[i]) + dqa[i];
        kmag[i] = std::fabs(ka_[i]) + dka[i];
      }
      double kq = 0, kq_mag = 0, dkq = 0;
      for (std::int64_t i = 0; i < K; ++i) {
        const double qa = std::fabs(tok.q[i]) + tok.dq[i], kaa = std::fabs(tok.k[i]) + tok.dk[i];
        kq += tok.k[i] * tok.q[i];
        kq_mag += qa * kaa;
        dkq += tok.dk[i] * qa + kaa * tok.dq[i];
      }
      dkq += c.g_dot() * kq_mag;
      const double ba = tok.beta + tok.dbeta;
      std::vector<double> dl(V), ddl(V);
      for (std::int64_t j = 0; j < V; ++j) {
        double sq = 0, sk = 0, dsq = 0, dsk = 0, sq_mag = 0, sk_mag = 0;
        for (std::int64_t i = 0; i < K; ++i) {
          const double sp = Sp[j * K + i], spa = std::fabs(sp) + dSp[j * K + i];
          sq += sp * qa_[i];
          sk += sp * ka_[i];
          dsq += dSp[j * K + i] * qmag[i] + spa * dqa[i];
          dsk += dSp[j * K + i] * kmag[i] + spa * dka[i];
          sq_mag += spa * qmag[i];
          sk_mag += spa * kmag[i];
        }
        dsq += c.g_dot() * sq_mag;
        dsk += c.g_dot() * sk_mag;
        const double ra = std::fabs(tok.v[j]) + sk_mag;
        dl[j] = tok.beta * (tok.v[j] - sk);
        const double dla = ba * ra * (1 + u);
        ddl[j] = tok.dbeta * ra + ba * (dsk + u * ra) + u * dla;
        const double dout = dsq + ddl[j] * kq_mag + dla * dkq + 2 * u * (sq_mag + dla * kq_mag);
        out_b[flat(args.out, {r, 0, hv, j})] = fin(dout);
        if (flush) {
          for (std::int64_t i = 0; i < K; ++i) {
            const double spa = std::fabs(Sp[j * K + i]) + dSp[j * K + i], aa = tok.alpha[i] + tok.dalpha[i];
            const double kaa = std::fabs(tok.k[i]) + tok.dk[i];
            const double e = dSp[j * K + i] * aa + spa * tok.dalpha[i] + ddl[j] * kaa + dla * tok.dk[i] +
                             2 * u * (spa * aa + dla * kaa);
            st_b[flat(args.initial_state, {s, hv, j, i})] = fin(e);
          }
        }
      }
      if (!flush) {
        for (std::int64_t j = 0; j < V; ++j) d_b[flat(args.d_cache, {s, hv, cpos, j})] = fin(ddl[j]);
        for (std::int64_t i = 0; i < K; ++i) g_b[flat(args.g_cache, {s, hv, cpos, i})] = fin(tok.dg[i]);
        // Under the tf32-dot profile (precision_profile.hpp item 2) k^ is rounded to out's dtype
        // before the ring's store: u_io relative to |k| + dk, half out's smallest subnormal absolutely.
        const bool through_out = k_ring_through_out();
        if (hv % G == 0)
          for (std::int64_t i = 0; i < K; ++i) {
            const double dk = through_out ? tok.dk[i] + u_io * (std::fabs(tok.k[i]) + tok.dk[i]) + uf_io : tok.dk[i];
            k_b[flat(args.k_cache, {s, h, cpos, i})] = fin(dk);
          }
      }
    }
  }
  return b;
}

}  // namespace kparity::reference::kda
