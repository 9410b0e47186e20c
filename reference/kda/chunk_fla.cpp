// kda/chunk's faithful model under the fla-chunk profile: fla's chunk_kda (fla/ops/kda/chunk_fwd.py
// and the kernels it calls, @bc3b101d) in fp32, rounding where it rounds. Measured on the H200
// (2026-12-02): chunk_kda's final_state is off the exact result by hundreds of bf16 units in its
// smallest entries and out by a few bf16 roundings, where fused_recurrent_kda (kparity's default
// faithful model) is fp32-tight; with the inputs widened to fp32 the same calls erred ~4x less
// (TF32 instead of bf16 operands). Those errors come from the pipeline's stored intermediates, all
// in the inputs' dtypes, which this model reproduces:
//
//   l2norm_fwd            q, k normalised in fp32 (x * 1/sqrt(sum x^2 + 1e-6)), stored in their dtype
//   chunk_local_cumsum    g * log2(e), summed within each chunk in fp32 (fp32 tensor)
//   intra (token-parallel or, with safe_gate, sub-chunk kernel)
//                         Aqk = scale * sum_c q_i k_j 2^(g_i - g_j), j <= i: stored in k's dtype;
//                         Akk = beta_i * sum_c k_i k_j 2^(g_i - g_j), j < i, fp32; off-diagonal
//                         16-token blocks (and safe_gate's diagonal ones) as tl.dot of fp32 operands
//                         against a reference row gn, i.e. TF32 operands q_i 2^(g_i - gn), k_j 2^(gn - g_j)
//   solve_tril            (I + Akk)^-1: 16x16 diagonal blocks by forward substitution in fp32,
//                         merged with TF32 dots; stored in k's dtype
//   recompute_w_u         u = A (v beta), w = A (k beta 2^g), the right operands rounded to v's / k's
//                         dtype, the results stored in v's / k's dtype; kg = k 2^(g_last - g) likewise
//   chunk_delta_h         per chunk: h (fp32) stored in k's dtype; v_new = u - w h_stored, stored in
//                         v's dtype; h = h 2^(g_last) + kg^T v_new, fp32 across chunks (final_state)
//   chunk_gla_fwd_o       o = scale (q 2^g)_rounded h_stored + Aqk v_new, stored in out's dtype
//
// Tensor-core dots of 16-bit operands are exact products summed in fp32; the model sums in index
// order (a kernel's MMA order differs: the fuzzer's rule allows twice the model's error). Products
// that Triton computes in a 16-bit type (two bf16 factors) are rounded there.
#include "chunk_fla.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "chunk_heads.hpp"
#include "kda_detail.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::reference::kda::detail {
namespace {

using kparity::kda::RecurrentArgs;
using I = std::int64_t;

constexpr float kLog2e = 1.4426950408889634f;  // fla's RCP_LN2, an fp32 constant
constexpr I kSub = 16;                           // fla's BC: the sub-chunk of the intra kernels

bool is16(DType t) { return dtype_size(t) == 2; }
float tf32(float x) { return truncate_to_tf32(x); }

struct Seq {
  I K = 0, V = 0, n = 0;                  // n tokens of one value head
  DType qt{}, kt{}, vt{}, bt{}, ot{};
  std::vector<float> q, k, g, v, beta;    // n x K, n x K, n x K (the gate, natural log), n x V, n
};

Seq load(const RecurrentArgs& x, I bos, I n, I hv, I H, I HV) {
  Seq s;
  s.K = x.q.size(2), s.V = x.v.size(2), s.n = n;
  s.qt = x.q.dtype, s.kt = x.k.dtype, s.vt = x.v.dtype, s.bt = x.beta.dtype, s.ot = x.out.dtype;
  const I K = s.K, V = s.V, h = hv / (HV / H);
  s.q.resize(n * K), s.k.resize(n * K), s.g.resize(n * K), s.v.resize(n * V), s.beta.resize(n);
  std::vector<float> normed;
  for (I t = 0; t < n; ++t) {
    const I row = bos + t;
    float* q = &s.q[t * K];
    float* k = &s.k[t * K];
    ld_run<float>(x.q, {row, h, I{0}}, 2, K, q);
    ld_run<float>(x.k, {row, h, I{0}}, 2, K, k);
    ld_run<float>(x.v, {row, hv, I{0}}, 2, V, &s.v[t * V]);
    if (x.use_qk_l2norm_in_kernel) {  // l2norm_fwd: y = x * (1 / sqrt(sum x^2 + eps)), stored in x's dtype
      for (auto [p, dt] : {std::pair{q, s.qt}, std::pair{k, s.kt}}) {
        normed.assign(p, p + K);
        l2_normalise(normed, NormForm::multiply);
        for (I c = 0; c < K; ++c) p[c] = round_through(normed[c], dt);
      }
    }
    log_gate_run(x, row, hv, K, &s.g[t * K]);
    const float b = static_cast<float>(ld(x.beta, {row, hv}));
    s.beta[t] = x.beta_is_logits ? sigmoid(b) : b;  // fused_beta_sigmoid writes fp32
  }
  if (x.beta_is_logits) s.bt = DType::f32;
  return s;
}

// (I + L)^-1 of a strictly lower n x n block L (row-major, stride ld), by forward substitution in
// fp32 as fla's kernels do it: row i of -L, plus the sum over m < i of (-L[i][m]) times row m of
// the inverse's strictly lower part built so far (the identity is added after the loop).
void invert_block(const float* L, I ld, I n, float* Ai, I lda) {
  for (I i = 0; i < n; ++i) {
    std::vector<float> a(static_cast<std::size_t>(n), 0.0f);
    for (I m = 0; m < i; ++m) a[m] = -L[i * ld + m];
    std::vector<float> row = a;
    for (I j = 0; j < i; ++j) {
      float acc = 0.0f;
      for (I m = j + 1; m < i; ++m) acc += a[m] * Ai[m * lda + j];
      row[j] = a[j] + acc;
    }
    for (I j = 0; j < n; ++j) Ai[i * lda + j] = j < i ? row[j] : (j == i ? 1.0f : 0.0f);
  }
}

// C (r x c) = A (r x m) B (m x c), operands truncated to TF32, fp32 sums in order.
void tf32_mm(const float* A, I lda, const float* B, I ldb, I r, I m, I c, float* C, I ldc) {
  for (I i = 0; i < r; ++i)
    for (I j = 0; j < c; ++j) {
      float acc = 0.0f;
      for (I t = 0; t < m; ++t) acc += tf32(A[i * lda + t]) * tf32(B[t * ldb + j]);
      C[i * ldc + j] = acc;
    }
}

void run_head(const RecurrentArgs& x, I bos, I len, I hv, I H, I HV, I BT, bool safe_gate, std::vector<float>& h) {
  const Seq s = load(x, bos, len, hv, H, HV);
  const I K = s.K, V = s.V;
  const float scale = static_cast<float>(x.scale ? *x.scale : 1.0 / std::sqrt(static_cast<double>(K)));
  std::vector<float> gc, Aqk, Akk, Ai, u, w, kg, vnew, vupd, hs(K * V), o(V);
  for (I c0 = 0; c0 < len; c0 += BT) {
    const I n = std::min(BT, len - c0);
    // The in-chunk cumulative gate, then times log2(e) (chunk_local_cumsum, kda_gate_chunk_cumsum).
    gc.assign(n * K, 0.0f);
    for (I c = 0; c < K; ++c) {
      float acc = 0.0f;
      for (I t = 0; t < n; ++t) {
        acc = acc + s.g[(c0 + t) * K + c];
        gc[t * K + c] = acc * kLog2e;
      }
    }
    const auto Q = [&](I t, I c) { return s.q[(c0 + t) * K + c]; };
    const auto Kx = [&](I t, I c) { return s.k[(c0 + t) * K + c]; };
    const auto G = [&](I t, I c) { return gc[t * K + c]; };
    const auto beta = [&](I t) { return s.beta[c0 + t]; };

    // Aqk (j <= i, stored in k's dtype) and Akk (j < i, fp32).
    Aqk.assign(n * n, 0.0f), Akk.assign(n * n, 0.0f);
    for (I i = 0; i < n; ++i) {
      const I si = i / kSub * kSub;  // the sub-chunk of row i
      for (I j = 0; j <= i; ++j) {
        float aq = 0.0f, ak = 0.0f;
        if (j >= si && !safe_gate) {  // token-parallel diagonal block: fp32 products
          for (I c = 0; c < K; ++c) {
            const float kgj = Kx(j, c) * std::exp2(G(i, c) - G(j, c));
            aq += Q(i, c) * kgj;
            ak += (Kx(i, c) * beta(i)) * kgj;
          }
          Aqk[i * n + j] = round_through(aq * scale, s.kt);
          if (j < i) Akk[i * n + j] = ak;
          continue;
        }
        // tl.dot of fp32 operands against a reference row: the sub-chunk's first row for the
        // off-diagonal blocks; safe_gate's diagonal block its middle row (min(BC/2, n_left - 1)).
        const I gn = j >= si ? si + std::min<I>(kSub / 2, len - c0 - si - 1) : si;
        for (I c = 0; c < K; ++c) {
          const float right = tf32(Kx(j, c) * std::exp2(G(gn, c) - G(j, c)));
          aq += tf32(Q(i, c) * std::exp2(G(i, c) - G(gn, c))) * right;
          ak += tf32(Kx(i, c) * std::exp2(G(i, c) - G(gn, c))) * right;
        }
        Aqk[i * n + j] = round_through(aq * scale, s.kt);
        if (j < i) Akk[i * n + j] = ak * beta(i);
      }
    }
    // (I + Akk)^-1: diagonal blocks by forward substitution, the rest merged with TF32 dots.
    const I nb = (n + kSub - 1) / kSub;
    Ai.assign(n * n, 0.0f);
    for (I b = 0; b < nb; ++b) {
      const I o0 = b * kSub, m = std::min(kSub, n - o0);
      invert_block(&Akk[o0 * n + o0], n, m, &Ai[o0 * n + o0], n);
    }
    for (I r = 1; r < nb; ++r) {
      const I r0 = r * kSub, rm = std::min(kSub, n - r0);
      for (I c = r - 1; c >= 0; --c) {
        const I cc0 = c * kSub;
        // sum over blocks m in [c, r) of Akk[r][m] Ai[m][c], then -Ai[r][r] times it (fla's order:
        // for the block next to the diagonal, -(Ai[r][r] Akk[r][c]) Ai[c][c]).
        std::vector<float> acc(static_cast<std::size_t>(rm * kSub), 0.0f), part(static_cast<std::size_t>(rm * kSub));
        std::vector<float> out(static_cast<std::size_t>(rm * kSub));
        if (c == r - 1) {
          tf32_mm(&Ai[r0 * n + r0], n, &Akk[r0 * n + cc0], n, rm, rm, kSub, acc.data(), kSub);
          tf32_mm(acc.data(), kSub, &Ai[cc0 * n + cc0], n, rm, kSub, kSub, out.data(), kSub);
        } else {
          for (I mb = c; mb < r; ++mb) {
            const I m0 = mb * kSub;
            tf32_mm(&Akk[r0 * n + m0], n, &Ai[m0 * n + cc0], n, rm, kSub, kSub, part.data(), kSub);
            for (std::size_t e = 0; e < acc.size(); ++e) acc[e] += part[e];
          }
          tf32_mm(&Ai[r0 * n + r0], n, acc.data(), kSub, rm, rm, kSub, out.data(), kSub);
        }
        for (I i = 0; i < rm; ++i)
          for (I j = 0; j < kSub; ++j) Ai[(r0 + i) * n + cc0 + j] = -out[i * kSub + j];
      }
    }
    for (float& e : Ai) e = round_through(e, s.kt);

    // u, w, kg (recompute_w_u_fwd), stored in v's and k's dtypes.
    u.assign(n * V, 0.0f), w.assign(n * K, 0.0f), kg.assign(n * K, 0.0f);
    std::vector<float> vb(n * V), kb(n * K);
    for (I t = 0; t < n; ++t) {
      for (I j = 0; j < V; ++j) vb[t * V + j] = round_through(s.v[(c0 + t) * V + j] * beta(t), s.vt);
      for (I c = 0; c < K; ++c) {
        float e = Kx(t, c) * beta(t);
        if (is16(s.kt) && is16(s.bt)) e = round_through(e, s.kt);  // a 16-bit product in Triton
        kb[t * K + c] = round_through(e * std::exp2(G(t, c)), s.kt);
        kg[t * K + c] = round_through(Kx(t, c) * std::exp2(G(n - 1, c) - G(t, c)), s.kt);
      }
    }
    for (I i = 0; i < n; ++i) {
      for (I j = 0; j < V; ++j) {
        float acc = 0.0f;
        for (I m = 0; m <= i; ++m) acc += Ai[i * n + m] * vb[m * V + j];
        u[i * V + j] = round_through(acc, s.vt);
      }
      for (I c = 0; c < K; ++c) {
        float acc = 0.0f;
        for (I m = 0; m <= i; ++m) acc += Ai[i * n + m] * kb[m * K + c];
        w[i * K + c] = round_through(acc, s.kt);
      }
    }
    // chunk_delta_h: the state as stored for this chunk, v_new, the update.
    for (I e = 0; e < K * V; ++e) hs[e] = round_through(h[e], s.kt);
    // v_new as stored (v's dtype, read by the output) and as the update's operand (k's dtype).
    vnew.assign(n * V, 0.0f), vupd.assign(n * V, 0.0f);
    for (I i = 0; i < n; ++i)
      for (I j = 0; j < V; ++j) {
        float acc = 0.0f;
        for (I c = 0; c < K; ++c) acc += w[i * K + c] * round_through(hs[c * V + j], s.kt);
        const float d = u[i * V + j] - acc;
        vnew[i * V + j] = round_through(d, s.vt);
        vupd[i * V + j] = round_through(d, s.kt);
      }
    for (I c = 0; c < K; ++c) {
      const float decay = std::exp2(G(n - 1, c));
      for (I j = 0; j < V; ++j) {
        float acc = 0.0f;
        for (I t = 0; t < n; ++t) acc += kg[t * K + c] * vupd[t * V + j];
        h[c * V + j] = h[c * V + j] * decay + acc;
      }
    }
    // chunk_gla_fwd_o_gk.
    for (I i = 0; i < n; ++i) {
      std::vector<float> qg(K);
      for (I c = 0; c < K; ++c) qg[c] = round_through(Q(i, c) * std::exp2(G(i, c)), s.qt);
      for (I j = 0; j < V; ++j) {
        float inter = 0.0f, intra = 0.0f;
        for (I c = 0; c < K; ++c) inter += qg[c] * round_through(hs[c * V + j], s.qt);
        for (I m = 0; m <= i; ++m) intra += round_through(Aqk[i * n + m], s.vt) * vnew[m * V + j];
        o[j] = inter * scale + intra;
      }
      st_run<float>(x.out, {bos + c0 + i, hv, I{0}}, 2, V, o.data());
    }
  }
}

}  // namespace

void chunk_fla_faithful(const RecurrentArgs& x, std::int64_t chunk_size, bool safe_gate) {
  const I H = x.q.size(1), HV = x.v.size(1);
  // h as fla holds it, [K][V]: exactly the K-first state for_each_sequence_head gives.
  for_each_sequence_head(x, [&](I bos, I len, I hv, std::vector<float>& h) {
    run_head(x, bos, len, hv, H, HV, chunk_size, safe_gate, h);
  });
}

}  // namespace kparity::reference::kda::detail
