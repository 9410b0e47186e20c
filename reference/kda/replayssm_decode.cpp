// kda/replayssm_decode (spec kda.md B.2, pseudocode B.2.13); mirrors sglang
// helion/kda_replayssm.py. Rings and state are addressed through their strides only.
#include "kda_detail.hpp"
#include "kparity/reference/kda.hpp"
#include "kparity/reference/elements.hpp"
#include "kparity/reference/exact_lanes.hpp"
#include "kparity/reference/planted_fault.hpp"
#include "kparity/reference/precision_profile.hpp"  // tf32-dot: the two dot operands and the k ring store

namespace kparity::reference::kda {
namespace {

using namespace detail;
using kparity::kda::BetaRounding;

struct Dims {
  std::int64_t B, H, HV, K, V, G, L;
};

Dims dims_of(const ReplaySsmDecodeArgs& x) {
  Dims d{};
  d.B = x.mixed_qkv.size(0);
  d.HV = x.initial_state.size(1);
  d.V = x.initial_state.size(2);
  d.K = x.initial_state.size(3);
  d.H = (x.mixed_qkv.size(1) - d.HV * d.V) / 2 / d.K;  // B.0 item 2
  d.G = d.HV / d.H;
  d.L = x.d_cache.size(2);  // B.2.2: the d ring defines L
  return d;
}

template <class R>
struct Head {
  std::vector<R> q_s, k_hat, g, alpha, v;
  R beta = 0, kq = 0;
};

template <class R>
Head<R> load_head(const ReplaySsmDecodeArgs& x, const Dims& d, std::int64_t b, std::int64_t hv) {
  const std::int64_t h = hv / d.G;
  Head<R> t;
  t.q_s.resize(d.K);
  t.k_hat.resize(d.K);
  t.g.resize(d.K);
  t.alpha.resize(d.K);
  t.v.resize(d.V);
  ld_run<R>(x.mixed_qkv, {b, h * d.K}, 1, d.K, t.q_s.data());  // kda_detail.hpp: rows, the same values
  ld_run<R>(x.mixed_qkv, {b, d.H * d.K + h * d.K}, 1, d.K, t.k_hat.data());
  ld_run<R>(x.mixed_qkv, {b, 2 * d.H * d.K + hv * d.V}, 1, d.V, t.v.data());
  if (x.use_qk_l2norm_in_kernel) {  // B.2.9: r = 1/sqrt(n) once, then x * r
    l2_normalise(t.q_s, NormForm::multiply);
    l2_normalise(t.k_hat, NormForm::multiply);
  }
  const R scale = host_scalar<R>(x.scale);
  for (R& e : t.q_s) e = e * scale;
  t.kq = reduce<R>(d.K, [&](std::size_t c) { return std::pair{t.k_hat[c], t.q_s[c]}; });  // B.2.5: undecayed k, q
  const R A_log = static_cast<R>(ld(x.A_log, {hv}));
  thread_local std::vector<R> a_row, bias_row;
  a_row.resize(static_cast<std::size_t>(d.K)), bias_row.resize(static_cast<std::size_t>(d.K));
  per_head_k_run<R>(x.a, b, hv, d.K, a_row.data());
  bias_run<R>(x.dt_bias, hv, d.K, bias_row.data());
  const R A = std::exp(A_log);  // once per token, not per channel (gate_A)
  for (std::int64_t c = 0; c < d.K; ++c) {
    t.g[c] = gate_A(a_row[c] + bias_row[c], A, x.lower_bound);
    t.alpha[c] = std::exp(t.g[c]);
  }
  t.beta = sigmoid(static_cast<R>(ld(x.b, {b, hv})));
  // A.4 item 3/6: beta_rounding is a parameter of the op, so the rounding it selects is part of the
  // function and the oracle applies it too (unlike A.10's incidental rounding points). Otherwise a
  // kernel that ignores the parameter would sit closer to the oracle than the faithful model and no
  // differential bound could flag it (issue 7's self-test bug "beta not rounded").
  if (x.beta_rounding == BetaRounding::through_b_dtype)
    t.beta = static_cast<R>(round_to_dtype(static_cast<double>(t.beta), x.b.dtype));
  return t;
}

// B.2.4: S_prev = S0 diag(exp(Gtot)) + sum_{i<m} d_i (k_i * W_i)^T, W_i = exp(sum_{i'>i} g_i').
template <class R>
std::vector<R> reconstruct(const ReplaySsmDecodeArgs& x, const Dims& d, std::int64_t s, std::int64_t hv,
                           std::int64_t m) {
  const std::int64_t h = hv / d.G;
  const DType io = x.out.dtype;
  // The rings' entries read a row at a time (ld_run: the values ld() gives an element, checked
  // once; issue 32 (3): per-element loads were 7% of a ReplaySSM case).
  std::vector<R> G(m * d.K), Dr(m * d.V), Kr(m * d.K);
  for (std::int64_t i = 0; i < m; ++i) {
    ld_run(x.g_cache, {s, hv, i, std::int64_t{0}}, 3, d.K, G.data() + i * d.K);
    ld_run(x.d_cache, {s, hv, i, std::int64_t{0}}, 3, d.V, Dr.data() + i * d.V);
    ld_run(x.k_cache, {s, h, i, std::int64_t{0}}, 3, d.K, Kr.data() + i * d.K);
  }
  std::vector<R> Dtot(d.K), W(m * d.K);
  for (std::int64_t c = 0; c < d.K; ++c) {
    if constexpr (kFaithful<R>) {  // B.2.4 item 4: fp32 inclusive cumsum, then Gtot - P_i
      std::vector<R> P(m);
      R run = 0;
      for (std::int64_t i = 0; i < m; ++i) P[i] = run = run + G[i * d.K + c];
      const R Gtot = m > 0 ? P[m - 1] : R(0);
      // Test-only fault (planted_fault.hpp): inclusive_suffix_decay subtracts P_{i-1} instead.
      const bool inclusive = planted_fault() == PlantedFault::inclusive_suffix_decay;
      for (std::int64_t i = 0; i < m; ++i)
        W[i * d.K + c] = std::exp(Gtot - (inclusive ? (i > 0 ? P[i - 1] : R(0)) : P[i]));
      Dtot[c] = std::exp(Gtot);
    } else {  // oracle: each exclusive suffix sum exact, rounded once
      LongSum suffix;
      for (std::int64_t i = m - 1; i >= 0; --i) {
        W[i * d.K + c] = std::exp(suffix.value());
        suffix.add(G[i * d.K + c]);
      }
      Dtot[c] = std::exp(suffix.value());
    }
  }
  // B.2.4 precision item 1: both ring operands rounded to the out dtype, fp32 accumulation.
  std::vector<R> dr(m * d.V), kw(m * d.K);
  for (std::int64_t i = 0; i < m; ++i) {
    for (std::int64_t j = 0; j < d.V; ++j) dr[i * d.V + j] = dot_operand(Dr[i * d.V + j], io);
    for (std::int64_t c = 0; c < d.K; ++c) kw[i * d.K + c] = dot_operand(Kr[i * d.K + c] * W[i * d.K + c], io);
  }
  std::vector<R> Sp(d.V * d.K), S0(d.K);
  if constexpr (kFaithful<R>) {
    if (accumulation() == Accumulation::index_order && lane_loops()) {
      // The ring sums with the channels in SIMD lanes (row_dots: each lane's fp32 products added in
      // entry order from +0, faithful_sum's index order), then the same madd an element.
      std::vector<R> xcol(m), ring(d.K);
      for (std::int64_t j = 0; j < d.V; ++j) {
        for (std::int64_t i = 0; i < m; ++i) xcol[i] = dr[i * d.V + j];
        row_dots(m, d.K, kw.data(), xcol.data(), ring.data());
        ld_run(x.initial_state, {s, hv, j, std::int64_t{0}}, 3, d.K, S0.data());
        for (std::int64_t c = 0; c < d.K; ++c) Sp[j * d.K + c] = faithful_madd(S0[c], Dtot[c], ring[c]);
      }
      return Sp;
    }
  }
  for (std::int64_t j = 0; j < d.V; ++j) {
    ld_run(x.initial_state, {s, hv, j, std::int64_t{0}}, 3, d.K, S0.data());
    for (std::int64_t c = 0; c < d.K; ++c) {
      const R s0 = S0[c];
      if constexpr (kFaithful<R>) {
        const R ring = faithful_sum(m, [&](std::int64_t i) { return std::pair{dr[i * d.V + j], kw[i * d.K + c]}; });
        Sp[j * d.K + c] = faithful_madd(s0, Dtot[c], ring);
      } else {  // S0 Dtot + the ring product, one exact sum
        Sp[j * d.K + c] = oracle_sum(m + 1, [&](std::int64_t i) {
          return i < m ? std::pair{dr[i * d.V + j], kw[i * d.K + c]} : std::pair{s0, Dtot[c]};
        });
      }
    }
  }
  return Sp;
}

// A [.., L, X] ring of a 4-D view at (s, head), entries 0..m-1, widened: out[i * X + j].
void load_ring(const TensorView& t, std::int64_t s, std::int64_t head, std::int64_t m, std::int64_t X, double* out) {
  elements::require_host(t);
  if (m == 0 || X == 0) return;
  const std::int64_t base = elements::offset_of(t, {s, head, std::int64_t{0}, std::int64_t{0}});
  if (t.size(2) < m || t.size(3) != X) throw std::out_of_range("ring view smaller than its entries");
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < X; ++j) out[i * X + j] = elements::load_at(t, base + i * t.strides[2] + j * t.strides[3]);
}

// The oracle's head on its fast paths (issue 25): the same exact sums as the per-element code of
// reconstruct<double> and run<double> below, taken in SIMD lanes over the state rows (exact_lanes.hpp)
// on the transposed S_prev, SpT[c * V + j]; every lane certified or summed again exactly. The
// exclusive suffix sums of g are exact in plain fp64 where short_exact_dot's argument certifies it
// (every partial sum a multiple of 2^L below 2^(L + 53)), else taken in a LongSum as below.
void oracle_head_fast(const ReplaySsmDecodeArgs& x, const Dims& d, std::int64_t b, std::int64_t s, std::int64_t hv,
                      std::int64_t m, std::int64_t cur, bool flush, const Head<double>& t) {
  const std::int64_t K = d.K, V = d.V, h = hv / d.G;
  const auto Ku = static_cast<std::size_t>(K), Vu = static_cast<std::size_t>(V), mu = static_cast<std::size_t>(m);
  const DType io = x.out.dtype;
  std::vector<double> G(mu * Ku), D_(mu * Vu), Kc(mu * Ku), W(mu * Ku), Dtot(Ku);
  load_ring(x.g_cache, s, hv, m, K, G.data());
  load_ring(x.d_cache, s, hv, m, V, D_.data());
  load_ring(x.k_cache, s, h, m, K, Kc.data());
  for (std::int64_t c = 0; c < K; ++c) {
    int L = kNoLsb;
    double abs_sum = 0;
    for (std::int64_t i = 0; i < m; ++i) L = std::min(L, lsb_exponent(G[i * K + c])), abs_sum += std::fabs(G[i * K + c]);
    if (m == 0 || L == kNoLsb || exact_in_fp64(abs_sum, L)) {
      double suffix = 0.0;  // exact: every partial sum is representable (zero signs do not reach exp)
      for (std::int64_t i = m - 1; i >= 0; --i) {
        W[i * K + c] = std::exp(suffix);
        suffix += G[i * K + c];
      }
      Dtot[c] = std::exp(suffix);
    } else {
      LongSum suffix;
      for (std::int64_t i = m - 1; i >= 0; --i) {
        W[i * K + c] = std::exp(suffix.value());
        suffix.add(G[i * K + c]);
      }
      Dtot[c] = std::exp(suffix.value());
    }
  }
  // B.2.4 precision item 1: both ring operands rounded to the out dtype. Rows 0..m-1 of A are the d
  // entries; row m is the checkpoint's column c, set per c below, whose factor is Dtot[c].
  std::vector<double> A((mu + 1) * Vu), kw(mu * Ku), S0T(Ku * Vu), SpT(Ku * Vu), bcol(mu + 1);
  for (std::size_t i = 0; i < mu * Vu; ++i) A[i] = dot_operand(D_[i], io);
  for (std::size_t i = 0; i < mu * Ku; ++i) kw[i] = dot_operand(Kc[i] * W[i], io);
  load_state_T(x.initial_state, s, hv, V, K, S0T);
  std::vector<double> p(Vu), sv(Vu), T(Vu), vmu(Vu), dl(Vu), o(Vu);
  std::vector<unsigned char> ok(Vu);
  auto reset = [&] {
    std::fill(p.begin(), p.end(), -0.0), std::fill(sv.begin(), sv.end(), 0.0), std::fill(T.begin(), T.end(), 0.0);
    std::fill(ok.begin(), ok.end(), 1);
  };
  // The d entries' magnitudes, for the in-range promise of each column's sums (state_range.hpp): with
  // the column's factors and its checkpoint row, they show every product in dot2's range, and the
  // lanes then skip that test (issue 32 (3): the tracked form was a sixth of a ReplaySSM case).
  const Magnitudes ring_d = magnitudes(A.data(), mu * Vu);
  for (std::int64_t c = 0; c < K; ++c) {  // S0 Dtot + the ring product, one exact sum per element
    std::copy(S0T.begin() + c * V, S0T.begin() + (c + 1) * V, A.begin() + m * V);
    for (std::int64_t i = 0; i < m; ++i) bcol[i] = kw[i * K + c];
    bcol[mu] = Dtot[c];
    const bool in_range = products_in_range(ring_d, magnitudes(bcol.data(), mu)) &&
                          products_in_range(magnitudes(S0T.data() + c * V, Vu), magnitudes(&Dtot[c], 1));
    // A fresh sum per lane: dot2 and its certificate in one pass (exact_lanes.hpp dot2_finish).
    lanes::dot2_finish(mu + 1, Vu, A.data(), Vu, nullptr, bcol.data(), mu + 1, 0.0, SpT.data() + c * V, [&](std::size_t j) {
      return oracle_sum(mu + 1, [&](std::size_t i) {
        return i < mu ? std::pair{A[i * Vu + j], kw[i * Ku + c]} : std::pair{S0T[c * V + j], Dtot[c]};
      });
    }, in_range);
  }
  // B.2.5: v - Sp (k alpha) and Sp (q alpha) + dl kq, each one exact sum; (-Sp, k alpha) as (Sp, -(k alpha)).
  std::vector<double> negka(Ku), qa(Ku);
  for (std::int64_t k = 0; k < K; ++k) negka[k] = -(t.k_hat[k] * t.alpha[k]), qa[k] = t.q_s[k] * t.alpha[k];
  reset();
  lanes::dot2(Ku, Vu, SpT.data(), Vu, nullptr, negka.data(), p.data(), sv.data(), T.data(), ok.data());
  for (std::size_t j = 0; j < Vu; ++j) lanes::dot2_step(t.v[j], 1.0, p[j], sv[j], T[j], ok[j]);
  lanes::finish_lanes(Vu, p.data(), sv.data(), T.data(), ok.data(), Ku + 1, 0.0, vmu.data(), [&](std::size_t j) {
    return oracle_sum(Ku + 1, [&](std::size_t k) {
      return k < Ku ? std::pair{-SpT[k * Vu + j], t.k_hat[k] * t.alpha[k]} : std::pair{t.v[j], 1.0};
    });
  });
  for (std::size_t j = 0; j < Vu; ++j) dl[j] = t.beta * vmu[j];
  reset();
  lanes::dot2(Ku, Vu, SpT.data(), Vu, nullptr, qa.data(), p.data(), sv.data(), T.data(), ok.data());
  for (std::size_t j = 0; j < Vu; ++j) lanes::dot2_step(dl[j], t.kq, p[j], sv[j], T[j], ok[j]);
  lanes::finish_lanes(Vu, p.data(), sv.data(), T.data(), ok.data(), Ku + 1, 0.0, o.data(), [&](std::size_t j) {
    return oracle_sum(Ku + 1, [&](std::size_t k) {
      return k < Ku ? std::pair{SpT[k * Vu + j], t.q_s[k] * t.alpha[k]} : std::pair{dl[j], t.kq};
    });
  });
  st_run<double>(x.out, {b, std::int64_t{0}, hv, std::int64_t{0}}, 3, V, o.data());
  if (flush) {  // B.2.7: checkpoint only, no ring write; Sp alpha + dl k, one exact sum per element
    std::vector<double> A2(2 * Vu), ST(Ku * Vu), b2(2);
    std::copy(dl.begin(), dl.end(), A2.begin() + V);
    for (std::int64_t k = 0; k < K; ++k) {
      std::copy(SpT.begin() + k * V, SpT.begin() + (k + 1) * V, A2.begin());
      b2[0] = t.alpha[k], b2[1] = t.k_hat[k];
      lanes::dot2_finish(2, Vu, A2.data(), Vu, nullptr, b2.data(), 2, 0.0, ST.data() + k * V, [&](std::size_t j) {
        const std::pair<double, double> decayed{SpT[k * V + j], t.alpha[k]}, update{dl[j], t.k_hat[k]};
        return oracle_sum(2, [&](std::size_t i) { return i == 0 ? decayed : update; });
      });
    }
    store_state_T(x.initial_state, s, hv, V, K, ST);
  } else {  // B.2.6: append at the cursor; k only from the first value head of the group
    for (std::int64_t j = 0; j < V; ++j) st(x.d_cache, {s, hv, cur, j}, dl[j]);
    for (std::int64_t k = 0; k < K; ++k) st(x.g_cache, {s, hv, cur, k}, t.g[k]);
    if (hv % d.G == 0)
      for (std::int64_t k = 0; k < K; ++k) st(x.k_cache, {s, h, cur, k}, k_ring_entry(t.k_hat[k], x.out.dtype));
  }
}

template <class R>
void run(const ReplaySsmDecodeArgs& x) {
  const Dims d = dims_of(x);
  for (std::int64_t b = 0; b < d.B; ++b) {
    const std::int64_t s = ld_int(x.ssm_state_indices, {b});
    if (s < 0) {  // B.2.3 item 1: cursors, state and rings are not even read
      for (std::int64_t hv = 0; hv < d.HV; ++hv)
        for (std::int64_t j = 0; j < d.V; ++j) st(x.out, {b, 0, hv, j}, 0.0);
      continue;
    }
    const std::int64_t c = ld_int(x.write_pos, {b});
    const bool flush = c == d.L - 1 || (x.force_flush && ld_int(*x.force_flush, {b}) != 0);  // B.2.3 item 2
    for (std::int64_t hv = 0; hv < d.HV; ++hv) {
      const Head<R> t = load_head<R>(x, d, b, hv);
      // Positions >= c are never read (B.2.3 item 3): garbage there cannot leak in.
      // Test-only fault (planted_fault.hpp): ring_read_past_cursor folds one entry too many.
      const std::int64_t m = planted_fault() == PlantedFault::ring_read_past_cursor ? c + 1 : c;
      if constexpr (!kFaithful<R>) {
        if (oracle_fast_paths()) {
          oracle_head_fast(x, d, b, s, hv, m, c, flush, t);
          continue;
        }
      }
      const std::vector<R> Sp = reconstruct<R>(x, d, s, hv, m);
      std::vector<R> dl(d.V);
      std::vector<R> sqs, sks;  // the faithful readout's sums, in lanes over the rows when it may
      if constexpr (kFaithful<R>) {
        if (accumulation() == Accumulation::index_order && lane_loops()) {
          // Sp transposed, then row_dots: each row's fp32 products added in channel order from +0,
          // as faithful_sum's index order adds them (a scalar chain of adds a row before).
          std::vector<R> SpT(d.V * d.K), qa(d.K), ka(d.K);
          for (std::int64_t j = 0; j < d.V; ++j)
            for (std::int64_t k = 0; k < d.K; ++k) SpT[k * d.V + j] = Sp[j * d.K + k];
          for (std::int64_t k = 0; k < d.K; ++k) qa[k] = t.q_s[k] * t.alpha[k], ka[k] = t.k_hat[k] * t.alpha[k];
          sqs.resize(d.V), sks.resize(d.V);
          row_dots(d.K, d.V, SpT.data(), qa.data(), sqs.data());
          row_dots(d.K, d.V, SpT.data(), ka.data(), sks.data());
        }
      }
      for (std::int64_t j = 0; j < d.V; ++j) {  // B.2.5
        if constexpr (kFaithful<R>) {
          if (!sqs.empty()) {
            dl[j] = t.beta * (t.v[j] - sks[j]);
            st(x.out, {b, 0, hv, j}, faithful_madd(dl[j], t.kq, sqs[j]));
            continue;
          }
          const R* row = &Sp[j * d.K];
          const R sq = faithful_sum(d.K, [&](std::int64_t k) { return std::pair{row[k], t.q_s[k] * t.alpha[k]}; });
          const R sk = faithful_sum(d.K, [&](std::int64_t k) { return std::pair{row[k], t.k_hat[k] * t.alpha[k]}; });
          dl[j] = t.beta * (t.v[j] - sk);
          st(x.out, {b, 0, hv, j}, faithful_madd(dl[j], t.kq, sq));
        } else {  // v - Sp (k alpha) and Sp (q alpha) + dl kq, each one exact sum
          const R* row = &Sp[j * d.K];
          const R v_minus_sk = oracle_sum(d.K + 1, [&](std::int64_t k) {
            return k < d.K ? std::pair{-row[k], t.k_hat[k] * t.alpha[k]} : std::pair{t.v[j], R(1)};
          });
          dl[j] = t.beta * v_minus_sk;
          st(x.out, {b, 0, hv, j}, oracle_sum(d.K + 1, [&](std::int64_t k) {
               return k < d.K ? std::pair{row[k], t.q_s[k] * t.alpha[k]} : std::pair{dl[j], t.kq};
             }));
        }
      }
      // The stores a state or ring row at a time (st_run: each value stored as st() stores it).
      if (flush) {  // B.2.7: checkpoint only, no ring write
        std::vector<R> row(d.K);
        for (std::int64_t j = 0; j < d.V; ++j) {
          for (std::int64_t k = 0; k < d.K; ++k) {
            if constexpr (kFaithful<R>) {
              const R prod = Sp[j * d.K + k] * t.alpha[k];
              row[k] = faithful_madd(dl[j], t.k_hat[k], prod);
            } else {  // Sp alpha + dl k, one exact sum
              const std::pair<R, R> decayed{Sp[j * d.K + k], t.alpha[k]}, update{dl[j], t.k_hat[k]};
              row[k] = oracle_sum(2, [&](std::size_t i) { return i == 0 ? decayed : update; });
            }
          }
          st_run(x.initial_state, {s, hv, j, std::int64_t{0}}, 3, d.K, row.data());
        }
      } else {  // B.2.6: append at c; k only from the first value head of the group
        st_run(x.d_cache, {s, hv, c, std::int64_t{0}}, 3, d.V, dl.data());
        st_run(x.g_cache, {s, hv, c, std::int64_t{0}}, 3, d.K, t.g.data());
        // The oracle stores k_hat rounded once (the op's contract); the faithful model under the
        // tf32-dot profile rounds it through out's dtype first, as sglang's Triton kernel does.
        if (hv % d.G == 0) {
          std::vector<R> kr(d.K);
          for (std::int64_t k = 0; k < d.K; ++k) kr[k] = k_ring_entry(t.k_hat[k], x.out.dtype);
          st_run(x.k_cache, {s, hv / d.G, c, std::int64_t{0}}, 3, d.K, kr.data());
        }
      }
    }
  }
}

}  // namespace

void replayssm_decode(const ReplaySsmDecodeArgs& args, Precision p, const ValidateOptions& options) {
  kparity::kda::check_replayssm_decode(args, options);
  // a and dt_bias as upstream reads them (a.view(batch, -1)): a contiguous `a` of another 3-D shape
  // with the same element count is the same call (found by the hostile-mutation property).
  const ReplaySsmDecodeArgs flat = kparity::kda::replayssm_flattened(args);
  if (p == Precision::oracle) run<double>(flat);
  else run<float>(flat);
}

// B.2.8 items 2-3. Padding rows keep their cursor: the op never looked at it.
void advance_cursors(const ReplaySsmDecodeArgs& args) {
  const std::int64_t B = args.write_pos.size(0), L = args.d_cache.size(2);
  for (std::int64_t b = 0; b < B; ++b) {
    if (args.ssm_state_indices.at_int({b}) < 0) continue;
    const std::int64_t c = args.write_pos.at_int({b});
    const bool flush = c == L - 1 || (args.force_flush && args.force_flush->at_int({b}) != 0);
    const std::int64_t next = flush ? 0 : c + 1;
    args.write_pos.store_int(std::span<const std::int64_t>(&b, 1), next);
  }
}

}  // namespace kparity::reference::kda
