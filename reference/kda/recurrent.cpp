// kda/recurrent (spec kda.md A.1-A.7); mirrors fla/ops/kda/naive.py's recurrent form, in the
// sglang [N, HV, V, K] state orientation (A.2). The state stays in R between tokens: it is only
// rounded when stored into final_state.
#include "kda_detail.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::reference::kda {
namespace {

using namespace detail;

struct Dims {
  std::int64_t T, H, HV, K, V, G;
};

template <class R>
Token<R> load_token(const RecurrentArgs& x, const Dims& d, std::int64_t t, std::int64_t hv) {
  const std::int64_t h = hv / d.G;  // A.1
  Token<R> tok;
  tok.q_s.resize(d.K);
  tok.k_hat.resize(d.K);
  tok.alpha.resize(d.K);
  tok.v.resize(d.V);
  ld_run<R>(x.q, {t, h, std::int64_t{0}}, 2, d.K, tok.q_s.data());
  ld_run<R>(x.k, {t, h, std::int64_t{0}}, 2, d.K, tok.k_hat.data());
  ld_run<R>(x.v, {t, hv, std::int64_t{0}}, 2, d.V, tok.v.data());
  if (x.use_qk_l2norm_in_kernel) {  // A.5 table: FLA divides by sqrt(n)
    l2_normalise(tok.q_s, NormForm::divide);
    l2_normalise(tok.k_hat, NormForm::divide);
  }
  // A.6; FLA's default scale is K^-0.5 (fla/ops/kda/naive.py).
  const R scale = host_scalar<R>(x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(d.K)));
  for (R& e : tok.q_s) e = e * scale;
  thread_local std::vector<R> a_row, bias_row;
  if (x.g) {
    ld_run<R>(*x.g, {t, hv, std::int64_t{0}}, 2, d.K, tok.alpha.data());  // g, then alpha = exp(g)
    for (std::int64_t c = 0; c < d.K; ++c) tok.alpha[c] = std::exp(tok.alpha[c]);
  } else {
    a_row.resize(static_cast<std::size_t>(d.K)), bias_row.resize(static_cast<std::size_t>(d.K));
    per_head_k_run<R>(*x.a, t, hv, d.K, a_row.data());
    bias_run<R>(*x.dt_bias, hv, d.K, bias_row.data());
    const R A_log = static_cast<R>(ld(*x.A_log, {hv}));
    const R A = std::exp(A_log);  // once per token, not per channel (gate_A)
    for (std::int64_t c = 0; c < d.K; ++c) tok.alpha[c] = std::exp(gate_A(a_row[c] + bias_row[c], A, x.lower_bound));
  }
  const R bv = static_cast<R>(ld(x.beta, {t, hv}));
  tok.beta = x.beta_is_logits ? sigmoid(bv) : bv;  // A.4 item 1
  return tok;
}

template <class R>
void run(const RecurrentArgs& x) {
  Dims d{};
  d.T = x.q.size(0);
  d.H = x.q.size(1);
  d.K = x.q.size(2);
  d.HV = x.v.size(1);
  d.V = x.v.size(2);
  d.G = d.HV / d.H;
  std::vector<std::int64_t> cu{0, d.T};  // no cu_seqlens: one sequence of T tokens
  if (x.cu_seqlens) {
    cu.resize(x.cu_seqlens->size(0));
    for (std::size_t n = 0; n < cu.size(); ++n) cu[n] = ld_int(*x.cu_seqlens, {static_cast<std::int64_t>(n)});
  }
  const std::int64_t N = static_cast<std::int64_t>(cu.size()) - 1;
  for (std::int64_t n = 0; n < N; ++n) {
    for (std::int64_t hv = 0; hv < d.HV; ++hv) {
      std::vector<R> S(d.V * d.K, R(0));  // absent initial state: zeros; transposed (recurrent_step)
      if (x.initial_state) load_state_T(*x.initial_state, n, hv, d.V, d.K, S);
      StateRange range;  // the oracle's state magnitudes along the sequence (state_range.hpp)
      for (std::int64_t t = cu[n]; t < cu[n + 1]; ++t) {  // an empty sequence passes S through
        const std::vector<R> o = recurrent_step(S, load_token<R>(x, d, t, hv), &range);
        st_run<R>(x.out, {t, hv, std::int64_t{0}}, 2, d.V, o.data());
      }
      if (x.final_state)
        store_state_T(*x.final_state, n, hv, d.V, d.K, S);
    }
  }
}

}  // namespace

void recurrent(const RecurrentArgs& args, Precision p, const ValidateOptions& options) {
  kparity::kda::check_recurrent(args, options);
  if (p == Precision::oracle) run<double>(args);
  else run<float>(args);
}

}  // namespace kparity::reference::kda
