// Recipe (testing guide 1.3a; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
// sections 2.2 and 3.1): first order in u = 2^-24, for one value head of one sequence.
//
// Local errors. Inputs are exact in fp32 (every storage dtype widens exactly). Per token the
// implementation computes, with relative errors:
//   q_s, k_hat  L2 norm: the sum of K squares (gamma_K, any order), + 1e-6 (u; 1e-6f differs from
//               1e-6 by 2.5e-15, below u of any sum >= 1e-6), sqrt (halves that, + u), the division
//               (u): e_k = gamma_K/2 + 3u; q also takes the fp32 scale (u) and the product (u):
//               e_q = gamma_K/2 + 5u. Without the norm e_k = 0, e_q = 2u.
//   alpha       exp(g) within 2 ulp (4u; CUDA's expf, glibc's is tighter); g from its inputs:
//                 g given (fp32):   |dg| = 0
//                 softplus gate:    x = a + dt_bias (u|x|), A = exp(A_log) (4u),
//                                   |d softplus| <= u (|x| + 5 + 2 softplus(x)) (the exp inside,
//                                   1 + e, log within 1 ulp; also covers the x > 20 branch),
//                                   |dg| <= A |d softplus| + 5u |g|
//                 bounded gate:     y = A x (6u|y|), |d sigmoid| <= s ((1 - s)(6u|y| + 4u) + 2u),
//                                   |dg| <= |lb| |d sigmoid| + 2u |g|
//               so |d alpha| <= alpha (|dg| + 4u).
//   beta        sigmoid of the logit: |d beta| <= 6u beta.
// One token maps a state row s (row vector, length K) to s' = s diag(alpha) (I - beta k k^T)
// + beta v k^T (A.7). An fp32 implementation adds, at token t, row j:
//   a_t  after the decay, |a_i| <= |s_i| (d alpha_i + u alpha_i)                 (decay rounding)
//   rho_t k  along k, |rho| <= beta (e_k + gamma_K) sum|s_d k| + |v - u| (d beta + 2u beta)
//        (the predict dot in any order, the subtraction and product of the delta)
//   b_t  after the update, |b_i| <= |d| e_k |k_i| + u (|d k_i| + |s'_i|)         (rank-1 update)
// and the readout o = s' . q_s adds (e_q + gamma_K) sum|s' q_s| (any order, with or without FMA).
// Propagation. The map is linear in s with the same matrix M_t = diag(alpha_t)(I - beta_t k_t k_t^T)
// for every row of the head, so to first order the error of the state after token T is
//   e_T = sum_t (a_t (I - beta_t k_t k_t^T) + rho_t k_t + b_t) M_{t+1} ... M_T,
// exactly; the bound applies |.| only to the local errors, never to the propagators:
//   output at token T:  |e_T . q_T| <= sum_t (sum_i |a_t,i| |((I - beta k k^T) w_t)_i| + |rho_t| |k_t . w_t|
//                        + sum_i |b_t,i| |w_t,i|),  w_t = M_{t+1} ... M_T q_T (vectors, exact);
//   final state (j, c): by Cauchy-Schwarz on each term, with the columns of P_t = M_{t+1} ... M_T and
//                        of (I - beta_t k_t k_t^T) P_t, built backwards in O(K^2) per token.
// Bounding the error by norms token by token instead (||M_t|| = max(1, |1 - beta |k|^2|) ~ K/2
// without the L2 norm) or elementwise (|I - beta k k^T| grows it by ~K per token) gives bounds
// thousands to 10^10 times the state on the test's calls without the L2 norm: useless.
// The result is multiplied by kSafety = 1.05, for the second-order terms dropped above (relative
// size about bound / value, which the host-side test checks stays below 1e-2) and the fp64
// trajectory's own rounding (2^-29 of the fp32 terms).
#include "recurrent_bound.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace kparity::gpu_test {
namespace {

constexpr double kU = 0x1p-24;
constexpr double kTransU = 4 * kU;  // exp/log/sigmoid pieces within 2 ulp
constexpr double kSafety = 1.05;

double gamma(double n) { return n * kU / (1 - n * kU); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }

struct TokenBound {
  std::vector<double> q, k, alpha, dalpha, v;  // exact values; |alpha^ - alpha| <= dalpha
  double beta = 0, dbeta = 0, e_q = 0, e_k = 0;
};

TokenBound token(const kparity::kda::RecurrentArgs& x, std::int64_t t, std::int64_t hv, std::int64_t h,
                 std::int64_t K, std::int64_t V, double scale) {
  TokenBound b;
  b.q.resize(K);
  b.k.resize(K);
  b.v.resize(V);
  for (std::int64_t c = 0; c < K; ++c) {
    b.q[c] = x.q.at({t, h, c});
    b.k[c] = x.k.at({t, h, c});
  }
  for (std::int64_t j = 0; j < V; ++j) b.v[j] = x.v.at({t, hv, j});
  const double gK = gamma(static_cast<double>(K));
  if (x.use_qk_l2norm_in_kernel) {
    for (auto* w : {&b.q, &b.k}) {
      double n = 1e-6;
      for (double e : *w) n += e * e;
      const double r = std::sqrt(n);
      for (double& e : *w) e /= r;
    }
    b.e_k = gK / 2 + 3 * kU;
    b.e_q = gK / 2 + 5 * kU;
  } else {
    b.e_k = 0;
    b.e_q = 2 * kU;
  }
  for (double& e : b.q) e *= scale;
  b.alpha.resize(K);
  b.dalpha.resize(K);
  for (std::int64_t c = 0; c < K; ++c) {
    double g, dg;
    if (x.g) {
      g = x.g->at({t, hv, c});
      dg = 0;
    } else {
      const double xc = x.a->at({t, hv, c}) + x.dt_bias->at({hv, c});
      const double A = std::exp(x.A_log->at({hv}));
      if (x.lower_bound) {
        const double y = A * xc, s = sigmoid(y), lb = *x.lower_bound;
        g = lb * s;
        dg = std::fabs(lb) * s * ((1 - s) * (6 * kU * std::fabs(y) + 4 * kU) + 2 * kU) + 2 * kU * std::fabs(g);
      } else {
        const double sp = xc > 20 ? xc : std::log(1 + std::exp(xc));  // A.3's literal form
        g = -A * sp;
        dg = A * kU * (std::fabs(xc) + 5 + 2 * sp) + 5 * kU * std::fabs(g);
      }
    }
    b.alpha[c] = std::exp(g);
    b.dalpha[c] = b.alpha[c] * (dg + kTransU);
  }
  const double braw = x.beta.at({t, hv});
  b.beta = x.beta_is_logits ? sigmoid(braw) : braw;
  b.dbeta = x.beta_is_logits ? 6 * kU * std::fabs(b.beta) : 0.0;
  return b;
}

}  // namespace

namespace {

// One token of one head: the exact inputs of A.7 and the recipe's local error bounds of every row.
struct Step {
  TokenBound in;
  std::vector<double> a, b;         // [V * K]: |a_t|, |b_t| bounds per row
  std::vector<double> rho, readout;  // [V]
};

}  // namespace

RecurrentBound recurrent_bound(const kparity::kda::RecurrentArgs& x) {
  const std::int64_t T = x.q.size(0), H = x.q.size(1), K = x.q.size(2), HV = x.v.size(1), V = x.v.size(2);
  const std::int64_t G = HV / H;
  std::vector<std::int64_t> cu{0, T};
  if (x.cu_seqlens) {
    cu.resize(static_cast<std::size_t>(x.cu_seqlens->size(0)));
    for (std::size_t n = 0; n < cu.size(); ++n) cu[n] = x.cu_seqlens->at_int({static_cast<std::int64_t>(n)});
  }
  const std::int64_t N = static_cast<std::int64_t>(cu.size()) - 1;
  const double scale = x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(K));
  const double gK = gamma(static_cast<double>(K));
  RecurrentBound r;
  r.out.assign(T * HV * V, 0.0);
  r.out_bound.assign(T * HV * V, 0.0);
  r.state.assign(N * HV * V * K, 0.0);
  r.state_bound.assign(N * HV * V * K, 0.0);
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t hv = 0; hv < HV; ++hv) {
      // Forward: the exact trajectory and the local errors.
      std::vector<double> S(V * K, 0.0);
      if (x.initial_state)
        for (std::int64_t j = 0; j < V; ++j)
          for (std::int64_t c = 0; c < K; ++c) S[j * K + c] = x.initial_state->at({n, hv, j, c});
      std::vector<Step> steps;
      for (std::int64_t t = cu[n]; t < cu[n + 1]; ++t) {
        Step st{token(x, t, hv, hv / G, K, V, scale), std::vector<double>(V * K), std::vector<double>(V * K),
                std::vector<double>(V), std::vector<double>(V)};
        const TokenBound& b = st.in;
        for (std::int64_t j = 0; j < V; ++j) {
          double* s = &S[j * K];
          double u = 0, abs_sk = 0;
          for (std::int64_t c = 0; c < K; ++c) {  // 1. decay, 2. predict
            st.a[j * K + c] = std::fabs(s[c]) * (b.dalpha[c] + kU * b.alpha[c]);
            s[c] *= b.alpha[c];
            u += s[c] * b.k[c];
            abs_sk += std::fabs(s[c] * b.k[c]);
          }
          const double res = b.v[j] - u, d = b.beta * res;  // 3. delta
          st.rho[j] = b.beta * (b.e_k + gK) * abs_sk + std::fabs(res) * (b.dbeta + 2 * kU * b.beta);
          double o = 0, abs_sq = 0;
          for (std::int64_t c = 0; c < K; ++c) {  // 4. update, 5. readout
            s[c] += d * b.k[c];
            st.b[j * K + c] = std::fabs(d) * b.e_k * std::fabs(b.k[c]) + kU * (std::fabs(d * b.k[c]) + std::fabs(s[c]));
            o += s[c] * b.q[c];
            abs_sq += std::fabs(s[c] * b.q[c]);
          }
          st.readout[j] = (b.e_q + gK) * abs_sq;
          r.out[(t * HV + hv) * V + j] = o;
        }
        steps.push_back(std::move(st));
      }
      // Outputs: each token's error dotted with its q, through the exact propagators.
      const std::int64_t t0 = cu[n];
      std::vector<double> w(K), nw(K), acc(V);
      for (std::size_t T1 = 0; T1 < steps.size(); ++T1) {
        w = steps[T1].in.q;
        for (std::int64_t j = 0; j < V; ++j) acc[j] = steps[T1].readout[j];
        for (std::size_t t = T1 + 1; t-- > 0;) {
          const Step& st = steps[t];
          double kw = 0;
          for (std::int64_t c = 0; c < K; ++c) kw += st.in.k[c] * w[c];
          for (std::int64_t c = 0; c < K; ++c) nw[c] = w[c] - st.in.beta * st.in.k[c] * kw;
          for (std::int64_t j = 0; j < V; ++j) {
            double e = std::fabs(st.rho[j] * kw);
            for (std::int64_t c = 0; c < K; ++c)
              e += st.b[j * K + c] * std::fabs(w[c]) + st.a[j * K + c] * std::fabs(nw[c]);
            acc[j] += e;
          }
          for (std::int64_t c = 0; c < K; ++c) w[c] = st.in.alpha[c] * nw[c];
        }
        for (std::int64_t j = 0; j < V; ++j)
          r.out_bound[((t0 + static_cast<std::int64_t>(T1)) * HV + hv) * V + j] = kSafety * acc[j];
      }
      // Final state: the columns of P_t = M_{t+1} ... M_T, built backwards.
      std::vector<double> P(K * K, 0.0), Nm(K * K), kP(K), colP(K), colN(K), err(V * K, 0.0);
      for (std::int64_t i = 0; i < K; ++i) P[i * K + i] = 1;
      for (std::size_t t = steps.size(); t-- > 0;) {
        const Step& st = steps[t];
        std::fill(kP.begin(), kP.end(), 0.0);
        for (std::int64_t i = 0; i < K; ++i)
          for (std::int64_t c = 0; c < K; ++c) kP[c] += st.in.k[i] * P[i * K + c];
        std::fill(colP.begin(), colP.end(), 0.0);
        std::fill(colN.begin(), colN.end(), 0.0);
        for (std::int64_t i = 0; i < K; ++i)
          for (std::int64_t c = 0; c < K; ++c) {
            Nm[i * K + c] = P[i * K + c] - st.in.beta * st.in.k[i] * kP[c];
            colP[c] += P[i * K + c] * P[i * K + c];
            colN[c] += Nm[i * K + c] * Nm[i * K + c];
          }
        for (std::int64_t j = 0; j < V; ++j) {
          double na = 0, nb = 0;
          for (std::int64_t c = 0; c < K; ++c) {
            na += st.a[j * K + c] * st.a[j * K + c];
            nb += st.b[j * K + c] * st.b[j * K + c];
          }
          na = std::sqrt(na);
          nb = std::sqrt(nb);
          for (std::int64_t c = 0; c < K; ++c)
            err[j * K + c] += na * std::sqrt(colN[c]) + std::fabs(st.rho[j] * kP[c]) + nb * std::sqrt(colP[c]);
        }
        for (std::int64_t i = 0; i < K; ++i)
          for (std::int64_t c = 0; c < K; ++c) P[i * K + c] = st.in.alpha[i] * Nm[i * K + c];
      }
      for (std::int64_t j = 0; j < V; ++j) {
        double rn = 0, en = 0;
        for (std::int64_t c = 0; c < K; ++c) {
          const std::int64_t i = ((n * HV + hv) * V + j) * K + c;
          r.state[i] = S[j * K + c];
          r.state_bound[i] = kSafety * err[j * K + c];
          rn += S[j * K + c] * S[j * K + c];
          en += err[j * K + c] * err[j * K + c];
        }
        if (rn > 0) r.worst_relative_state_bound = std::max(r.worst_relative_state_bound, std::sqrt(en / rn));
      }
    }
  }
  return r;
}

::testing::AssertionResult within_rounded(const TensorView& got, const std::vector<double>& exact,
                                          const std::vector<double>& bound, const std::string& what, double* share) {
  const std::int64_t n = got.numel();
  if (static_cast<std::size_t>(n) != exact.size())
    return ::testing::AssertionFailure() << what << ": " << n << " elements, the recipe has " << exact.size();
  struct Bad {
    std::int64_t i;
    double got, lo, hi;
  };
  std::vector<Bad> bad;
  double worst = 0;
  std::int64_t i_worst = -1;
  for (std::int64_t i = 0; i < n; ++i) {
    const double g = got.load_flat(i), x = exact[i];
    const double lo = round_to_dtype(x - bound[i], got.dtype), hi = round_to_dtype(x + bound[i], got.dtype);
    const bool ok = g >= lo && g <= hi;  // NaN fails too
    if (!ok) bad.push_back({i, g, lo, hi});
    const double allowed = std::max(hi - x, x - lo);
    // An infinity inside the interval is the rounding of a value past the dtype's range: no share.
    const double sh = !std::isfinite(g) ? (ok ? 0.0 : INFINITY)
                                        : allowed > 0 ? std::fabs(g - x) / allowed : (g == x ? 0.0 : INFINITY);
    if (!(sh <= worst)) {
      worst = sh;
      i_worst = i;
    }
  }
  if (share) *share = worst;
  if (bad.empty()) return ::testing::AssertionSuccess();
  std::ostringstream os;
  os.precision(9);
  os << what << ": Mismatched elements: " << bad.size() << " / " << n << " (" << 100.0 * bad.size() / n
     << "%) outside [rt(exact - bound), rt(exact + bound)] in " << dtype_name(got.dtype) << "; worst at " << i_worst
     << ": got " << got.load_flat(i_worst) << ", exact " << exact[i_worst] << ", bound " << bound[i_worst] << " ("
     << 100 * worst << "% of allowed)\n  first (index, got, allowed interval):";
  for (std::size_t w = 0; w < std::min<std::size_t>(bad.size(), 30); ++w)
    os << " (" << bad[w].i << ", " << bad[w].got << ", [" << bad[w].lo << ", " << bad[w].hi << "])";
  return ::testing::AssertionFailure() << os.str();
}

}  // namespace kparity::gpu_test
