// kda/chunk's faithful model under the kparity-chunk profile: kparity's chunked CUDA kernel
// (kernels/kda/chunk*, its algorithm and rounding points in docs/kda_chunk_kernel.md) in scalar fp32,
// rounding where it rounds. Nothing is stored in a 16-bit type between the stages: the kernel keeps
// every intermediate in fp32 and rounds only the operands it feeds to tensor cores, to TF32 by
// cvt.rna, so its error (and this model's) is a TF32 operand rounding (2^-11 relative) per product
// plus fp32 accumulation, where fla's chunk_kda (chunk_fla.cpp) stores bf16 intermediates (2^-9).
//
// Per value head and sequence, in chunks of kChunk = 16 tokens from the sequence's start (a
// sequence ending mid-chunk ends with a short chunk):
//
//   preprocess   per token, fp32, as kda/recurrent's faithful model (recurrent.cpp, kda.md A.3-A.6):
//                q, k l2-normalised (divide form), q scaled, the gate g (natural log, per channel:
//                g as given or the in-kernel gate), beta (sigmoid of logits or as given)
//   cumsum       Gc_i = g_0 + ... + g_i per channel, fp32, in token order (gate_cumsum)
//   form         tensor-core form where every |Gc_i| <= kSafeSpan (span_is_safe): the
//                decay e^(Gc_i - Gc_j) split as e^(Gc_i) * e^(-Gc_j), each factor in fp32 range;
//                otherwise (a gate below the contract's lower bound, -inf) the exact fp32 form:
//                e^(g_{j+1} + ... + g_i) per element (decay_between), 0 and never NaN at -inf
//   A_kk, A_qk   A_kk[i][j] = beta_i sum_c k_i k_j e^(Gc_i - Gc_j), j < i; A_qk[i][j] = sum_c
//                q_i k_j e^(Gc_i - Gc_j), j <= i; tensor-core form: TF32 operands (q_i e^Gc_i,
//                k_i e^Gc_i, k_j e^-Gc_j), fp32 accumulation (mma); fp32 throughout otherwise
//   inverse      T = (I + A_kk)^-1 by forward substitution in fp32 (invert_unit_lower)
//   w, u         w = T (beta k e^Gc), u = T (beta v): TF32 operands, fp32 accumulation
//   v_new        u - w S: TF32 operands w, S, fp32 accumulation (S fp32 across chunks)
//   out          (q e^Gc) S + A_qk v_new: TF32 operands, one fp32 accumulator, stored in out's dtype
//   state        S <- e^(Gc_last) S + (k e^(Gc_last - Gc))^T v_new: the decayed state is the
//                accumulator, TF32 operands k e^(..), v_new; fp32 between chunks, stored at the end
//
// The kernel's MMAs sum in their own order; the model sums in index order (the fuzzer's rule allows
// twice the model's error, enough for a reordering of the same rounding points).
#include "chunk_kparity.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <vector>

#include "chunk_heads.hpp"
#include "kda_detail.hpp"

namespace kparity::reference::kda::detail {

float round_to_tf32(float x) noexcept {
  if (!std::isfinite(x)) return x;
  // Half a unit of TF32's last place added to the magnitude, then the low 13 bits dropped: round to
  // nearest with ties away from zero (cvt.rna). The carry may reach the exponent (and give inf).
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  return std::bit_cast<float>((u + 0x1000u) & 0xffffe000u);
}

namespace {

using kparity::kda::RecurrentArgs;
using I = std::int64_t;

constexpr I kChunk = 16;  // the kernel's chunk, tokens
// The largest in-chunk gate span (per channel, -Gc_last) the tensor-core form takes: e^80 = 5.5e34
// leaves room in fp32 for the factor e^(-Gc_j) times a normalised k, and the contract's lower bound
// (-5 per token over 16 tokens) stays inside it.
constexpr float kSafeSpan = 80.0f;

// One value head of one sequence after preprocessing (fp32).
struct Head {
  I K = 0, V = 0, n = 0;
  std::vector<float> q, k, g, v, beta;  // n x K (scaled), n x K, n x K (natural log), n x V, n
};

// Preprocessing of token `row` into slot t of `s`, as kda/recurrent's faithful model does it.
void preprocess(const RecurrentArgs& x, I row, I h, I hv, float scale, Head& s, I t) {
  const I K = s.K;
  std::vector<float> q(K), k(K);
  ld_run<float>(x.q, {row, h, I{0}}, 2, K, q.data());
  ld_run<float>(x.k, {row, h, I{0}}, 2, K, k.data());
  ld_run<float>(x.v, {row, hv, I{0}}, 2, s.V, &s.v[t * s.V]);
  if (x.use_qk_l2norm_in_kernel) {
    l2_normalise(q, NormForm::divide);
    l2_normalise(k, NormForm::divide);
  }
  log_gate_run(x, row, hv, K, &s.g[t * K]);
  for (I c = 0; c < K; ++c) s.q[t * K + c] = q[c] * scale, s.k[t * K + c] = k[c];
  const float b = static_cast<float>(ld(x.beta, {row, hv}));
  s.beta[t] = x.beta_is_logits ? sigmoid(b) : b;
}

Head load(const RecurrentArgs& x, I bos, I n, I hv, I H, I HV) {
  Head s;
  s.K = x.q.size(2), s.V = x.v.size(2), s.n = n;
  s.q.resize(n * s.K), s.k.resize(n * s.K), s.g.resize(n * s.K), s.v.resize(n * s.V), s.beta.resize(n);
  const float scale = host_scalar<float>(x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(s.K)));
  for (I t = 0; t < n; ++t) preprocess(x, bos + t, hv / (HV / H), hv, scale, s, t);
  return s;
}

// The chunk [c0, c0 + n) of a head: its gate's in-chunk cumulative sum and the form it takes.
struct Chunk {
  I c0 = 0, n = 0;
  std::vector<float> Gc;  // n x K
  bool tensor_cores = false;
};

// Gc_i = g_0 + ... + g_i per channel, fp32, in token order.
void gate_cumsum(const Head& s, Chunk& ch) {
  const I K = s.K;
  ch.Gc.assign(ch.n * K, 0.0f);
  for (I c = 0; c < K; ++c) {
    float acc = 0.0f;
    for (I t = 0; t < ch.n; ++t) ch.Gc[t * K + c] = acc = acc + s.g[(ch.c0 + t) * K + c];
  }
}

// Whether the factorised decay stays in fp32 range: every cumulative gate of the chunk within
// +-kSafeSpan (a log-decay gate is <= 0, so that is Gc_last >= -kSafeSpan; a NaN or infinite gate
// makes the chunk unsafe).
bool span_is_safe(const Chunk& ch) {
  for (const float G : ch.Gc)
    if (!(G >= -kSafeSpan && G <= kSafeSpan)) return false;
  return true;
}

// e^(g_{j+1} + ... + g_i) on channel c (tokens of the chunk, j <= i): the exact form's decay from
// token j to token i, its exponent summed in token order (0 with a -inf inside, 1 for j == i).
float decay_between(const Head& s, const Chunk& ch, I j, I i, I c) {
  float e = 0.0f;
  for (I t = j + 1; t <= i; ++t) e = e + s.g[(ch.c0 + t) * s.K + c];
  return std::exp(e);
}

// sum_m tf32(a(m)) tf32(b(m)), m < n, fp32 accumulation from `acc`: one MMA reduction.
template <class A, class B>
float mma_dot(I n, A a, B b, float acc = 0.0f) {
  for (I m = 0; m < n; ++m) acc = acc + round_to_tf32(a(m)) * round_to_tf32(b(m));
  return acc;
}

// A_kk (j < i, zero elsewhere) and A_qk (j <= i), n x n.
void intra_matrices(const Head& s, const Chunk& ch, std::vector<float>& Akk, std::vector<float>& Aqk) {
  const I K = s.K, n = ch.n, c0 = ch.c0;
  Akk.assign(n * n, 0.0f), Aqk.assign(n * n, 0.0f);
  const auto q = [&](I t, I c) { return s.q[(c0 + t) * K + c]; };
  const auto k = [&](I t, I c) { return s.k[(c0 + t) * K + c]; };
  const auto G = [&](I t, I c) { return ch.Gc[t * K + c]; };
  for (I i = 0; i < n; ++i)
    for (I j = 0; j <= i; ++j) {
      float aq = 0.0f, ak = 0.0f;
      if (ch.tensor_cores) {
        const auto right = [&](I c) { return k(j, c) * std::exp(-G(j, c)); };
        aq = mma_dot(K, [&](I c) { return q(i, c) * std::exp(G(i, c)); }, right);
        ak = mma_dot(K, [&](I c) { return k(i, c) * std::exp(G(i, c)); }, right);
      } else {
        for (I c = 0; c < K; ++c) {
          const float kd = k(j, c) * decay_between(s, ch, j, i, c);
          aq = aq + q(i, c) * kd;
          ak = ak + k(i, c) * kd;
        }
      }
      Aqk[i * n + j] = aq;
      if (j < i) Akk[i * n + j] = s.beta[c0 + i] * ak;
    }
}

// T = (I + L)^-1 for a strictly lower n x n L: row by row, T[i][j] = -(L[i][j] + sum over j < m < i
// of L[i][m] T[m][j]), fp32 in index order; T[i][i] = 1.
std::vector<float> invert_unit_lower(const std::vector<float>& L, I n) {
  std::vector<float> T(n * n, 0.0f);
  for (I i = 0; i < n; ++i) {
    for (I j = 0; j < i; ++j) {
      float acc = L[i * n + j];
      for (I m = j + 1; m < i; ++m) acc = acc + L[i * n + m] * T[m * n + j];
      T[i * n + j] = -acc;
    }
    T[i * n + i] = 1.0f;
  }
  return T;
}

// w = T (beta k e^Gc) (n x K) and u = T (beta v) (n x V); the right operands formed in fp32.
void wy(const Head& s, const Chunk& ch, const std::vector<float>& T, std::vector<float>& w, std::vector<float>& u) {
  const I K = s.K, V = s.V, n = ch.n, c0 = ch.c0;
  std::vector<float> kb(n * K), vb(n * V);
  for (I t = 0; t < n; ++t) {
    const float b = s.beta[c0 + t];
    for (I c = 0; c < K; ++c) kb[t * K + c] = (b * s.k[(c0 + t) * K + c]) * std::exp(ch.Gc[t * K + c]);
    for (I j = 0; j < V; ++j) vb[t * V + j] = b * s.v[(c0 + t) * V + j];
  }
  w.assign(n * K, 0.0f), u.assign(n * V, 0.0f);
  for (I i = 0; i < n; ++i) {
    const auto Ti = [&](I m) { return T[i * n + m]; };
    for (I c = 0; c < K; ++c) w[i * K + c] = mma_dot(i + 1, Ti, [&](I m) { return kb[m * K + c]; });
    for (I j = 0; j < V; ++j) u[i * V + j] = mma_dot(i + 1, Ti, [&](I m) { return vb[m * V + j]; });
  }
}

// v_new = u - w S (n x V), S[c * V + j] the chunk's incoming state.
std::vector<float> new_values(const Head& s, I n, const std::vector<float>& u, const std::vector<float>& w,
                              const std::vector<float>& S) {
  const I K = s.K, V = s.V;
  std::vector<float> vn(n * V);
  for (I i = 0; i < n; ++i)
    for (I j = 0; j < V; ++j)
      vn[i * V + j] = u[i * V + j] - mma_dot(K, [&](I c) { return w[i * K + c]; }, [&](I c) { return S[c * V + j]; });
  return vn;
}

// o_i = (q_i e^Gc_i) S + sum_{m <= i} A_qk[i][m] v_new_m, one accumulator; stored in out's dtype.
void output(const RecurrentArgs& x, const Head& s, const Chunk& ch, I bos, I hv, const std::vector<float>& Aqk,
            const std::vector<float>& vn, const std::vector<float>& S) {
  const I K = s.K, V = s.V, n = ch.n;
  std::vector<float> qg(K), o(V);
  for (I i = 0; i < n; ++i) {
    for (I c = 0; c < K; ++c) qg[c] = s.q[(ch.c0 + i) * K + c] * std::exp(ch.Gc[i * K + c]);
    for (I j = 0; j < V; ++j) {
      const float inter = mma_dot(K, [&](I c) { return qg[c]; }, [&](I c) { return S[c * V + j]; });
      o[j] = mma_dot(i + 1, [&](I m) { return Aqk[i * n + m]; }, [&](I m) { return vn[m * V + j]; }, inter);
    }
    st_run<float>(x.out, {bos + ch.c0 + i, hv, I{0}}, 2, V, o.data());
  }
}

// S <- e^(Gc_last) S + (k e^(Gc_last - Gc))^T v_new; the exact form's factors through decay_between.
void update_state(const Head& s, const Chunk& ch, const std::vector<float>& vn, std::vector<float>& S) {
  const I K = s.K, V = s.V, n = ch.n, last = n - 1;
  std::vector<float> kd(n);
  for (I c = 0; c < K; ++c) {
    for (I t = 0; t < n; ++t) {
      const float d = ch.tensor_cores ? std::exp(ch.Gc[last * K + c] - ch.Gc[t * K + c]) : decay_between(s, ch, t, last, c);
      kd[t] = s.k[(ch.c0 + t) * K + c] * d;
    }
    const float decay = std::exp(ch.Gc[last * K + c]);
    for (I j = 0; j < V; ++j)
      S[c * V + j] = mma_dot(n, [&](I t) { return kd[t]; }, [&](I t) { return vn[t * V + j]; }, S[c * V + j] * decay);
  }
}

void run_head(const RecurrentArgs& x, I bos, I len, I hv, I H, I HV, std::vector<float>& S) {
  const Head s = load(x, bos, len, hv, H, HV);
  std::vector<float> Akk, Aqk, w, u;
  for (I c0 = 0; c0 < len; c0 += kChunk) {
    Chunk ch;
    ch.c0 = c0, ch.n = std::min(kChunk, len - c0);
    gate_cumsum(s, ch);
    ch.tensor_cores = span_is_safe(ch);
    intra_matrices(s, ch, Akk, Aqk);
    wy(s, ch, invert_unit_lower(Akk, ch.n), w, u);
    const std::vector<float> vn = new_values(s, ch.n, u, w, S);
    output(x, s, ch, bos, hv, Aqk, vn, S);
    update_state(s, ch, vn, S);
  }
}

}  // namespace

void chunk_kparity_faithful(const RecurrentArgs& x) {
  const I H = x.q.size(1), HV = x.v.size(1);
  for_each_sequence_head(x, [&](I bos, I len, I hv, std::vector<float>& S) { run_head(x, bos, len, hv, H, HV, S); });
}

}  // namespace kparity::reference::kda::detail
