// kda/packed_decode (spec kda.md B.1); mirrors sglang helion/kda_decode.py and the Triton
// fused_recurrent_kda_packed_decode in fla/fused_recurrent.py.
#include "kda_detail.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::reference::kda {
namespace {

using namespace detail;

struct Dims {
  std::int64_t B, H, HV, K, V, G;
};

Dims dims_of(const PackedDecodeArgs& x) {
  Dims d{};
  d.B = x.mixed_qkv.size(0);
  d.HV = x.initial_state.size(1);
  d.V = x.initial_state.size(2);
  d.K = x.initial_state.size(3);
  d.H = (x.mixed_qkv.size(1) - d.HV * d.V) / 2 / d.K;  // B.0 item 2: H is inferred
  d.G = d.HV / d.H;
  return d;
}

template <class R>
Token<R> load_token(const PackedDecodeArgs& x, const Dims& d, std::int64_t b, std::int64_t hv, NormForm nf) {
  const std::int64_t h = hv / d.G;  // A.1
  Token<R> t;
  t.q_s.resize(d.K);
  t.k_hat.resize(d.K);
  t.alpha.resize(d.K);
  t.v.resize(d.V);
  ld_run<R>(x.mixed_qkv, {b, h * d.K}, 1, d.K, t.q_s.data());  // B.0 item 1
  ld_run<R>(x.mixed_qkv, {b, d.H * d.K + h * d.K}, 1, d.K, t.k_hat.data());
  ld_run<R>(x.mixed_qkv, {b, 2 * d.H * d.K + hv * d.V}, 1, d.V, t.v.data());
  if (x.use_qk_l2norm_in_kernel) {
    l2_normalise(t.q_s, nf);
    l2_normalise(t.k_hat, nf);
  }
  const R scale = host_scalar<R>(x.scale);
  for (R& e : t.q_s) e = e * scale;  // A.6: after normalisation, q only
  const R A_log = static_cast<R>(ld(x.A_log, {hv}));
  thread_local std::vector<R> a_row, bias_row;
  a_row.resize(static_cast<std::size_t>(d.K)), bias_row.resize(static_cast<std::size_t>(d.K));
  per_head_k_run<R>(x.a, b, hv, d.K, a_row.data());
  bias_run<R>(x.dt_bias, hv, d.K, bias_row.data());
  const R A = std::exp(A_log);  // once per token, not per channel (gate_A)
  for (std::int64_t c = 0; c < d.K; ++c) t.alpha[c] = std::exp(gate_A(a_row[c] + bias_row[c], A, x.lower_bound));
  t.beta = sigmoid(static_cast<R>(ld(x.b, {b, hv})));  // B.1 item 3: fp32, never rounded
  return t;
}

template <class R>
void run(const PackedDecodeArgs& x) {
  const Dims d = dims_of(x);
  // A.5 table: the Helion packed decode multiplies by rsqrt only for a bf16 state.
  const NormForm nf = kFaithful<R> && x.initial_state.dtype == DType::bf16 ? NormForm::multiply : NormForm::divide;
  for (std::int64_t b = 0; b < d.B; ++b) {
    const std::int64_t s = ld_int(x.ssm_state_indices, {b});
    if (s < 0) {  // B.1 item 1: padding row, nothing but zeros in out
      for (std::int64_t hv = 0; hv < d.HV; ++hv)
        for (std::int64_t j = 0; j < d.V; ++j) st(x.out, {b, 0, hv, j}, 0.0);
      continue;
    }
    for (std::int64_t hv = 0; hv < d.HV; ++hv) {
      const Token<R> t = load_token<R>(x, d, b, hv, nf);
      std::vector<R> S(d.V * d.K);  // transposed (recurrent_step)
      load_state_T(x.initial_state, s, hv, d.V, d.K, S);
      const std::vector<R> o = recurrent_step(S, t);
      st_run<R>(x.out, {b, std::int64_t{0}, hv, std::int64_t{0}}, 3, d.V, o.data());
      // B.1 item 4: the state is written back (rounded to its dtype) on every step.
      store_state_T(x.initial_state, s, hv, d.V, d.K, S);
    }
  }
}

}  // namespace

void packed_decode(const PackedDecodeArgs& args, Precision p, const ValidateOptions& options) {
  kparity::kda::check_packed_decode(args, options);
  if (p == Precision::oracle) run<double>(args);
  else run<float>(args);
}

}  // namespace kparity::reference::kda
