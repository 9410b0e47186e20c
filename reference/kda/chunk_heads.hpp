#pragma once
// Private to reference/kda: what the chunked faithful models (chunk_fla.cpp, chunk_kparity.cpp)
// share: the walk over the sequences and value heads of one kda/chunk batch row, and a token's gate.
#include <cstdint>
#include <vector>

#include "kda_detail.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"

namespace kparity::reference::kda::detail {

// For each sequence n of `x` (cu_seqlens, or the whole row) and value head hv: the fp32 state S,
// K-first (S[c * V + j], the transposed layout load_state_T gives; zeros without initial_state),
// then run(bos, len, hv, S), then S stored into final_state when given.
template <class Run>
void for_each_sequence_head(const kparity::kda::RecurrentArgs& x, Run run) {
  using I = std::int64_t;
  const I T = x.q.size(0), K = x.q.size(2), HV = x.v.size(1), V = x.v.size(2);
  std::vector<I> cu{0, T};
  if (x.cu_seqlens) {
    cu.resize(static_cast<std::size_t>(x.cu_seqlens->size(0)));
    for (std::size_t n = 0; n < cu.size(); ++n) cu[n] = ld_int(*x.cu_seqlens, {static_cast<I>(n)});
  }
  for (std::size_t n = 0; n + 1 < cu.size(); ++n)
    for (I hv = 0; hv < HV; ++hv) {
      std::vector<float> S(static_cast<std::size_t>(K * V), 0.0f);
      if (x.initial_state) load_state_T(*x.initial_state, static_cast<I>(n), hv, V, K, S);
      run(cu[n], cu[n + 1] - cu[n], hv, S);
      if (x.final_state) store_state_T(*x.final_state, static_cast<I>(n), hv, V, K, S);
    }
}

// Token `row`'s log-space gate on value head hv, K channels into g, in fp32: g as given, or the
// in-kernel gate of a + dt_bias (kda.md A.3).
inline void log_gate_run(const kparity::kda::RecurrentArgs& x, std::int64_t row, std::int64_t hv, std::int64_t K, float* g) {
  if (x.g) {
    ld_run<float>(*x.g, {row, hv, std::int64_t{0}}, 2, K, g);
    return;
  }
  thread_local std::vector<float> a, bias;
  a.resize(static_cast<std::size_t>(K)), bias.resize(static_cast<std::size_t>(K));
  per_head_k_run<float>(*x.a, row, hv, K, a.data());
  bias_run<float>(*x.dt_bias, hv, K, bias.data());
  const float A_log = static_cast<float>(ld(*x.A_log, {hv}));
  const float A = std::exp(A_log);  // once per row, not per channel (gate_A)
  for (std::int64_t c = 0; c < K; ++c) g[c] = gate_A(a[c] + bias[c], A, x.lower_bound);
}

}  // namespace kparity::reference::kda::detail
