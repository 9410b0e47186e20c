// kda/chunk's faithful model under the kparity-chunk profile: kparity's chunked CUDA kernel
// (kernels/kda/chunk*) in scalar fp32, rounding where it rounds. docs/kda_chunk_kernel.md section 3
// is the specification; each numbered point there is one function here, named in its comment.
// Nothing is stored in a 16-bit type between the stages: the kernel keeps every intermediate in fp32
// and rounds only the operands it feeds to tensor cores, to TF32 by cvt.rna, so its error (and this
// model's) is a TF32 operand rounding (2^-11 relative) per product plus fp32 arithmetic, where fla's
// chunk_kda (chunk_fla.cpp) stores bf16 intermediates (2^-9).
//
// Per value head and sequence, in chunks of 16 token slots from the sequence's start; a sequence
// that ends inside a chunk leaves its last slots empty (q = k = v = 0, beta = 0, g = 0), as the
// kernel pads them, so every sum below runs over the 16 slots as the kernel's does.
//
// Where the model knowingly sums in another order than the kernel (the rule allows twice the
// model's error, enough for a reordering of the same rounding points):
//   * an mma.sync step's 8 exact TF32 products are added to the accumulator one by one, in index
//     order (the hardware adds them in its own order);
//   * v_new's and o's channel sums run as one chain over all K channels, where a launch whose V tile
//     is 32 or 16 columns (few sequences x heads, or K = 256) splits the channels over 2 or 4 warps
//     and adds their partial sums (doc 3.2, 3.9).
// CUDA's expf, logf (up to 2 ulp) are std::exp, std::log here.
#include "chunk_kparity.hpp"

#include <algorithm>
#include <array>
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

constexpr I kSlots = 16;          // the kernel's chunk, token slots
constexpr I kRefSlot = 7;         // doc 3.7: the reference row of the factorised decay
constexpr float kSafeSpan = 64;   // doc 3.7: the largest |Gc_i - ref| the tensor-core form takes
constexpr int kLanes = 32;        // doc 3.4: the warp that sums a token's squares

// doc 3.4: sum_c x[c]^2 as the kernel's warp forms it: lane l sums channels l, l + 32, ... with
// fmaf from 0, then a xor butterfly over the 32 lanes (offsets 16, 8, 4, 2, 1; both lanes of a pair
// add the same two values, so every lane ends with lane 0's sum).
float sum_of_squares(const std::vector<float>& x) {
  std::array<float, kLanes> s{};
  for (std::size_t c = 0; c < x.size(); ++c) s[c % kLanes] = std::fma(x[c], x[c], s[c % kLanes]);
  for (int off = kLanes / 2; off >= 1; off /= 2) {
    std::array<float, kLanes> t{};
    for (int l = 0; l < kLanes; ++l) t[l] = s[l] + s[l ^ off];
    s = t;
  }
  return s[0];
}

// doc 3.4: x / sqrtf(sum_c x^2 + 1e-6f), each element one division.
void l2_normalise_lanes(std::vector<float>& x) {
  const float n = std::sqrt(sum_of_squares(x) + 1e-6f);
  for (float& e : x) e = e / n;
}

// One chunk of one value head: its 16 slots after the loads and preprocessing (doc 3.1-3.4), fp32.
struct Slots {
  I K = 0, V = 0, n = 0;                 // n real tokens, the rest empty
  std::vector<float> q, k, g, v, beta;   // 16 x K (q_s), 16 x K (k_hat), 16 x K (natural log), 16 x V, 16
};

// doc 3.1-3.4 for token `row` into slot t: q_s = fl32(q_hat * scale), k_hat, g, v, beta.
void preprocess(const RecurrentArgs& x, I row, I h, I hv, float scale, Slots& s, I t) {
  const I K = s.K;
  std::vector<float> q(K), k(K);
  ld_run<float>(x.q, {row, h, I{0}}, 2, K, q.data());
  ld_run<float>(x.k, {row, h, I{0}}, 2, K, k.data());
  ld_run<float>(x.v, {row, hv, I{0}}, 2, s.V, &s.v[t * s.V]);
  if (x.use_qk_l2norm_in_kernel) l2_normalise_lanes(q), l2_normalise_lanes(k);
  log_gate_run(x, row, hv, K, &s.g[t * K]);  // doc 3.2
  for (I c = 0; c < K; ++c) s.q[t * K + c] = q[c] * scale, s.k[t * K + c] = k[c];
  const float b = static_cast<float>(ld(x.beta, {row, hv}));
  s.beta[t] = x.beta_is_logits ? sigmoid(b) : b;  // doc 3.3 (allow_neg_eigval's 2 sigmoid: chunk.cpp)
}

Slots load(const RecurrentArgs& x, I t0, I n, I hv, I H, I HV) {
  Slots s;
  s.K = x.q.size(2), s.V = x.v.size(2), s.n = n;
  s.q.assign(kSlots * s.K, 0.0f), s.k.assign(kSlots * s.K, 0.0f), s.g.assign(kSlots * s.K, 0.0f);
  s.v.assign(kSlots * s.V, 0.0f), s.beta.assign(kSlots, 0.0f);
  const float scale = host_scalar<float>(x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(s.K)));
  for (I t = 0; t < n; ++t) preprocess(x, t0 + t, hv / (HV / H), hv, scale, s, t);
  return s;
}

// doc 3.5-3.6: the chunk's gate sums and per-token factors.
struct Gates {
  std::vector<float> Gc, Rs, decay;  // 16 x K inclusive prefix, 16 x K exclusive suffix, K
  std::vector<float> Qg, Kd, x;      // 16 x K each: q_s e^Gc, k_hat e^Rs, b (k_hat e^Gc)
};

Gates gates(const Slots& s) {
  const I K = s.K;
  Gates G;
  G.Gc.assign(kSlots * K, 0.0f), G.Rs.assign(kSlots * K, 0.0f), G.decay.assign(K, 0.0f);
  for (I c = 0; c < K; ++c) {
    float acc = s.g[c];
    G.Gc[c] = acc;
    for (I i = 1; i < kSlots; ++i) G.Gc[i * K + c] = acc = acc + s.g[i * K + c];
    G.decay[c] = std::exp(acc);
    float r = 0.0f;  // Rs_15 = 0, then summed from the chunk's end
    for (I j = kSlots - 2; j >= 0; --j) G.Rs[j * K + c] = r = r + s.g[(j + 1) * K + c];
  }
  G.Qg.resize(kSlots * K), G.Kd.resize(kSlots * K), G.x.resize(kSlots * K);
  for (I t = 0; t < kSlots; ++t)
    for (I c = 0; c < K; ++c) {
      const I e = t * K + c;
      G.Qg[e] = s.q[e] * std::exp(G.Gc[e]);
      G.Kd[e] = s.k[e] * std::exp(G.Rs[e]);
      G.x[e] = s.beta[t] * (s.k[e] * std::exp(G.Gc[e]));
    }
  return G;
}

// doc 3.7: whether every fl32(Gc_i - ref) of the chunk (all slots, all channels) is within
// +-kSafeSpan; NaN and inf are not.
bool is_safe(const Gates& G, I K) {
  for (I i = 0; i < kSlots; ++i)
    for (I c = 0; c < K; ++c) {
      const float d = G.Gc[i * K + c] - G.Gc[kRefSlot * K + c];
      if (!(std::fabs(d) <= kSafeSpan)) return false;
    }
  return true;
}

// A chain of mma.sync steps: acc + sum_m tf32(a(m)) tf32(b(m)), m < n, fp32, the exact products
// added in index order.
template <class A, class B>
float mma_chain(I n, A a, B b, float acc = 0.0f) {
  for (I m = 0; m < n; ++m) acc = acc + round_to_tf32(a(m)) * round_to_tf32(b(m));
  return acc;
}

// doc 3.7: A_kk (j < i) and A_qk (j <= i), 16 x 16, zero elsewhere; tensor cores on a safe chunk,
// the exact elementwise form otherwise.
void intra(const Slots& s, const Gates& G, std::vector<float>& Akk, std::vector<float>& Aqk) {
  const I K = s.K;
  Akk.assign(kSlots * kSlots, 0.0f), Aqk.assign(kSlots * kSlots, 0.0f);
  const auto at = [K](const std::vector<float>& t, I i, I c) { return t[i * K + c]; };
  if (is_safe(G, K)) {
    std::vector<float> Kp(kSlots * K), Qp(kSlots * K), Km(kSlots * K);
    for (I i = 0; i < kSlots; ++i)
      for (I c = 0; c < K; ++c) {
        const float ref = at(G.Gc, kRefSlot, c), Gi = at(G.Gc, i, c);
        Kp[i * K + c] = at(s.k, i, c) * std::exp(Gi - ref);
        Qp[i * K + c] = at(s.q, i, c) * std::exp(Gi - ref);
        Km[i * K + c] = at(s.k, i, c) * std::exp(ref - Gi);
      }
    for (I i = 0; i < kSlots; ++i)
      for (I j = 0; j <= i; ++j) {
        const auto km = [&](I c) { return Km[j * K + c]; };
        Aqk[i * kSlots + j] = mma_chain(K, [&](I c) { return Qp[i * K + c]; }, km);
        if (j < i) Akk[i * kSlots + j] = s.beta[i] * mma_chain(K, [&](I c) { return Kp[i * K + c]; }, km);
      }
    return;
  }
  std::vector<float> e(K);
  for (I i = 0; i < kSlots; ++i)
    for (I j = 0; j <= i; ++j) {
      for (I c = 0; c < K; ++c) {  // e^(g_{j+1} + ... + g_i): 0, never NaN, with a -inf inside
        float P = 0.0f;
        for (I m = j + 1; m <= i; ++m) P = P + at(s.g, m, c);
        e[c] = std::exp(P);
      }
      float aq = 0.0f, ak = 0.0f;
      for (I c = 0; c < K; ++c) {
        aq = std::fma(at(s.q, i, c) * e[c], at(s.k, j, c), aq);
        ak = std::fma(at(s.k, i, c) * e[c], at(s.k, j, c), ak);
      }
      Aqk[i * kSlots + j] = aq;
      if (j < i) Akk[i * kSlots + j] = s.beta[i] * ak;
    }
}

// doc 3.8: (I + A_kk) y = rhs by forward substitution, column by column: y_i = rhs_i - sum_{j<i}
// A_kk[i][j] y_j as fmaf(-A_kk[i][j], y_j, acc) from acc = rhs_i, j in order. rhs, y: 16 x n.
std::vector<float> substitute(const std::vector<float>& Akk, const std::vector<float>& rhs, I n) {
  std::vector<float> y(kSlots * n);
  for (I col = 0; col < n; ++col)
    for (I i = 0; i < kSlots; ++i) {
      float acc = rhs[i * n + col];
      for (I j = 0; j < i; ++j) acc = std::fma(-Akk[i * kSlots + j], y[j * n + col], acc);
      y[i * n + col] = acc;
    }
  return y;
}

// doc 3.9: v_new = u + S^T (-w)^T on tensor cores, accumulated from u over the channels (16 x V).
std::vector<float> new_values(const Slots& s, const std::vector<float>& u, const std::vector<float>& w,
                              const std::vector<float>& S) {
  const I K = s.K, V = s.V;
  std::vector<float> vn(kSlots * V);
  for (I i = 0; i < kSlots; ++i)
    for (I j = 0; j < V; ++j)
      vn[i * V + j] = mma_chain(K, [&](I c) { return S[c * V + j]; }, [&](I c) { return -w[i * K + c]; }, u[i * V + j]);
  return vn;
}

// doc 3.10: o_i = S^T Qg_i from 0 over the channels, then + A_qk[i][m] v_new_m over token block
// 0-7 and, for rows 8-15, block 8-15 (the block wholly above the diagonal is skipped); out's dtype.
void output(const RecurrentArgs& x, const Slots& s, const Gates& G, I t0, I hv, const std::vector<float>& Aqk,
            const std::vector<float>& vn, const std::vector<float>& S) {
  const I K = s.K, V = s.V;
  std::vector<float> o(V);
  for (I i = 0; i < s.n; ++i) {
    const I m_end = i < kSlots / 2 ? kSlots / 2 : kSlots;
    for (I j = 0; j < V; ++j) {
      const float inter = mma_chain(K, [&](I c) { return S[c * V + j]; }, [&](I c) { return G.Qg[i * K + c]; });
      o[j] = mma_chain(m_end, [&](I m) { return Aqk[i * kSlots + m]; }, [&](I m) { return vn[m * V + j]; }, inter);
    }
    st_run<float>(x.out, {t0 + i, hv, I{0}}, 2, V, o.data());
  }
}

// doc 3.11: S <- fl32(S decay), then + v_new^T Kd over the 16 slots on tensor cores.
void update_state(const Slots& s, const Gates& G, const std::vector<float>& vn, std::vector<float>& S) {
  const I K = s.K, V = s.V;
  for (I c = 0; c < K; ++c)
    for (I j = 0; j < V; ++j)
      S[c * V + j] = mma_chain(kSlots, [&](I t) { return vn[t * V + j]; }, [&](I t) { return G.Kd[t * K + c]; },
                               S[c * V + j] * G.decay[c]);
}

// One chunk: preprocessing, the intra-chunk matrices, w and u, v_new, out, the state update.
void run_chunk(const RecurrentArgs& x, I t0, I n, I hv, I H, I HV, std::vector<float>& S) {
  const Slots s = load(x, t0, n, hv, H, HV);
  const Gates G = gates(s);
  std::vector<float> Akk, Aqk;
  intra(s, G, Akk, Aqk);
  std::vector<float> bv(kSlots * s.V);
  for (I t = 0; t < kSlots; ++t)
    for (I j = 0; j < s.V; ++j) bv[t * s.V + j] = s.beta[t] * s.v[t * s.V + j];
  const std::vector<float> w = substitute(Akk, G.x, s.K), u = substitute(Akk, bv, s.V);
  const std::vector<float> vn = new_values(s, u, w, S);
  output(x, s, G, t0, hv, Aqk, vn, S);
  update_state(s, G, vn, S);
}

}  // namespace

void chunk_kparity_faithful(const RecurrentArgs& x) {
  const I H = x.q.size(1), HV = x.v.size(1);
  for_each_sequence_head(x, [&](I bos, I len, I hv, std::vector<float>& S) {
    for (I t0 = bos; t0 < bos + len; t0 += kSlots) run_chunk(x, t0, std::min(kSlots, bos + len - t0), hv, H, HV, S);
  });
}

}  // namespace kparity::reference::kda::detail
