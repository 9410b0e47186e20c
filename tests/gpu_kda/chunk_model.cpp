// Scalar model of the chunked kernel's algorithm (docs/kda_chunk_kernel.md), in two precisions:
// fp64 without roundings (checks the algorithm against the recurrence) and fp32 with the kernel's
// rounding points and tf32 operands (what the kernel should compute up to summation order).
#include "chunk_model.hpp"

#include <cmath>
#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace kparity::gpu_test {
namespace {

constexpr int C = 16;

float tf32_rna(float x) {
  if (!std::isfinite(x)) return x;
  std::uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x1000u) & ~0x1FFFu;  // round half away from zero on the magnitude, 10 mantissa bits
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

template <class R>
struct Ops;
template <>
struct Ops<double> {
  static double op(double x) { return x; }  // tensor-core operand: exact
  static double ex(double x) { return std::exp(x); }
  static double fma(double a, double b, double c) { return a * b + c; }
};
template <>
struct Ops<float> {
  static float op(float x) { return tf32_rna(x); }
  static float ex(float x) { return std::exp(x); }
  static float fma(float a, float b, float c) { return std::fmaf(a, b, c); }
};

template <class R>
R sigm(R x) { return R(1) / (R(1) + Ops<R>::ex(-x)); }

// One 16-token chunk's operands as the prep kernel leaves them for the chain (doc 3.1-3.8): w (not
// negated), u, the per-token factors Qg and Kd before (qg_f, kd_f) and after (qg, kd) tf32 rounding,
// A_qk and the decay exp(Gc_15).
template <class R>
struct Block {
  int L = 0;
  std::vector<R> w, u, qg_f, kd_f, qg, kd, aqk, decay;
};

template <class R>
struct Seq {
  const kparity::kda::ChunkArgs& a;
  const kparity::kda::ChunkDims& d;
  std::int64_t b, hv, h;
  R scale, A_log;
};

template <class R>
Block<R> prep_block(const Seq<R>& s, std::int64_t t0, std::int64_t eos) {
  using O = Ops<R>;
  const auto& a = s.a;
  const std::int64_t K = s.d.K, V = s.d.V, b = s.b, hv = s.hv, h = s.h;
  Block<R> blk;
  const int L = blk.L = static_cast<int>(std::min<std::int64_t>(C, eos - t0));
  std::vector<R> q(C * K, 0), kk(C * K, 0), g(C * K, 0), v(C * V, 0), be(C, 0);
  for (int i = 0; i < L; ++i) {
    const std::int64_t t = t0 + i;
    R sq = 0, sk = 0;
    for (std::int64_t c = 0; c < K; ++c) {
      q[i * K + c] = static_cast<R>(a.q.at({b, t, h, c}));
      kk[i * K + c] = static_cast<R>(a.k.at({b, t, h, c}));
      R x = static_cast<R>(a.g.at({b, t, hv, c}));
      if (a.use_gate_in_kernel) {  // doc 3.2
        const R dtb = a.dt_bias ? static_cast<R>(a.dt_bias->load_flat(hv * K + c)) : R(0);
        x = x + dtb;
        const R A = O::ex(s.A_log);
        if (a.lower_bound) x = static_cast<R>(static_cast<float>(*a.lower_bound)) * sigm(A * x);
        else x = -A * (x > R(20) ? x : std::log(R(1) + O::ex(x)));
      }
      g[i * K + c] = x;
      sq = O::fma(q[i * K + c], q[i * K + c], sq);
      sk = O::fma(kk[i * K + c], kk[i * K + c], sk);
    }
    const R nq = std::sqrt(sq + R(1e-6f)), nk = std::sqrt(sk + R(1e-6f));
    for (std::int64_t c = 0; c < K; ++c) {
      R qv = q[i * K + c];
      if (a.use_qk_l2norm_in_kernel) { qv = qv / nq; kk[i * K + c] = kk[i * K + c] / nk; }
      q[i * K + c] = qv * s.scale;
    }
    for (std::int64_t c = 0; c < V; ++c) v[i * V + c] = static_cast<R>(a.v.at({b, t, hv, c}));
    R x = static_cast<R>(a.beta.at({b, t, hv}));
    // allow_neg_eigval: fla stores 2 sigmoid(b) as an fp32 tensor (reference/kda/chunk.cpp).
    if (a.use_beta_sigmoid_in_kernel) x = a.allow_neg_eigval ? R(float(R(2) * sigm(x))) : sigm(x);
    be[i] = x;
  }
  // doc 3.5
  std::vector<R> Gc(C * K), Rs(C * K);
  blk.decay.resize(K);
  for (std::int64_t c = 0; c < K; ++c) {
    R acc = g[c];
    Gc[c] = acc;
    for (int i = 1; i < C; ++i) Gc[i * K + c] = acc = acc + g[i * K + c];
    blk.decay[c] = O::ex(acc);
    R r = 0;
    Rs[(C - 1) * K + c] = 0;
    for (int j = C - 2; j >= 0; --j) Rs[j * K + c] = r = r + g[(j + 1) * K + c];
  }
  // doc 3.7
  bool safe = true;
  for (int i = 0; i < C; ++i)
    for (std::int64_t c = 0; c < K; ++c) safe &= std::fabs(Gc[i * K + c] - Gc[7 * K + c]) <= R(64);
  std::vector<R> Akk(C * C, 0);
  blk.aqk.assign(C * C, 0);
  for (int i = 0; i < C; ++i)
    for (int j = 0; j <= i; ++j) {
      R ak = 0, aq = 0;
      for (std::int64_t c = 0; c < K; ++c) {
        if (safe) {
          const R ref = Gc[7 * K + c];
          const R ep = O::ex(Gc[i * K + c] - ref), em = O::ex(ref - Gc[j * K + c]);
          const R km = O::op(kk[j * K + c] * em);
          ak += O::op(kk[i * K + c] * ep) * km;
          aq += O::op(q[i * K + c] * ep) * km;
        } else {
          R P = 0;
          for (int m = j + 1; m <= i; ++m) P = P + g[m * K + c];
          const R e = O::ex(P);
          aq = O::fma(q[i * K + c] * e, kk[j * K + c], aq);
          ak = O::fma(kk[i * K + c] * e, kk[j * K + c], ak);
        }
      }
      Akk[i * C + j] = j < i ? be[i] * ak : R(0);
      blk.aqk[i * C + j] = aq;
    }
  // doc 3.6, 3.8
  blk.w.resize(C * K), blk.u.resize(C * V);
  for (std::int64_t c = 0; c < K; ++c)
    for (int i = 0; i < C; ++i) {
      R acc = be[i] * (kk[i * K + c] * O::ex(Gc[i * K + c]));
      for (int j = 0; j < i; ++j) acc = O::fma(-Akk[i * C + j], blk.w[j * K + c], acc);
      blk.w[i * K + c] = acc;
    }
  for (std::int64_t c = 0; c < V; ++c)
    for (int i = 0; i < C; ++i) {
      R acc = be[i] * v[i * V + c];
      for (int j = 0; j < i; ++j) acc = O::fma(-Akk[i * C + j], blk.u[j * V + c], acc);
      blk.u[i * V + c] = acc;
    }
  blk.qg_f.resize(C * K), blk.kd_f.resize(C * K), blk.qg.resize(C * K), blk.kd.resize(C * K);
  for (int i = 0; i < C; ++i)
    for (std::int64_t c = 0; c < K; ++c) {
      blk.qg_f[i * K + c] = q[i * K + c] * O::ex(Gc[i * K + c]);
      blk.kd_f[i * K + c] = kk[i * K + c] * O::ex(Rs[i * K + c]);
      blk.qg[i * K + c] = O::op(blk.qg_f[i * K + c]);
      blk.kd[i * K + c] = O::op(blk.kd_f[i * K + c]);
    }
  return blk;
}

template <class R>
void store_out(const Seq<R>& s, std::int64_t t0, int L, const std::vector<R>& y) {
  const std::int64_t V = s.d.V;
  for (int i = 0; i < L; ++i)
    for (std::int64_t col = 0; col < V; ++col)
      s.a.out.store(std::array<std::int64_t, 4>{s.b, t0 + i, s.hv, col}, static_cast<double>(y[i * V + col]));
}

// v = u + S^T (-w)^T and o = S^T Qg^T from the state S[k][v] (doc 3.9, 3.10's first product): tf32
// operands, channels in increasing order.
template <class R>
void state_products(std::int64_t K, std::int64_t V, const std::vector<R>& S, const std::vector<R>& u,
                    const std::vector<R>& w, const std::vector<R>& qg, std::vector<R>& vn, std::vector<R>& o) {
  using O = Ops<R>;
  vn.resize(C * V), o.resize(C * V);
  for (int i = 0; i < C; ++i)
    for (std::int64_t col = 0; col < V; ++col) {
      R x = u[i * V + col], y = 0;
      for (std::int64_t c = 0; c < K; ++c) {
        const R s = O::op(S[c * V + col]);
        x += s * O::op(-w[i * K + c]);
        y += s * qg[i * K + c];
      }
      vn[i * V + col] = x;
      o[i * V + col] = y;
    }
}

// y += sum_j M[i][j] v[j] over j <= i (lower) or every j (full), tf32 operands, j in order.
template <class R>
void add_token_mix(std::int64_t V, const std::vector<R>& M, bool lower, R sign, const std::vector<R>& v,
                   std::vector<R>& y) {
  using O = Ops<R>;
  for (int i = 0; i < C; ++i)
    for (std::int64_t col = 0; col < V; ++col) {
      R acc = y[i * V + col];
      for (int j = 0; j <= (lower ? i : C - 1); ++j) acc += O::op(sign * M[i * C + j]) * O::op(v[j * V + col]);
      y[i * V + col] = acc;
    }
}

// m chunks a chain step, composed (docs/kda_chunk_composed.md); m = 1 is the kernel today (doc
// 3.9-3.11: every table below is then the chunk's own operand). With S0 the state before the
// step, D_b = Diag(decay of chunk b), D(a, b) = D_{a+1} ... D_{b-1} (empty: I):
//   v_b = u_b - (w_b D(-1, b)) S0 - sum_{a<b} M_ba v_a,    M_ba = (w_b D(a, b)) Kd_a^T
//   o_b = (Qg_b D(-1, b)) S0 + sum_{a<b} N_ba v_a + Aqk_b v_b,    N_ba = (Qg_b D(a, b)) Kd_a^T
//   S   = D(-1, m) S0 + sum_a (Kd_a D(a, m))^T v_a
// Every table is a product of a chunk's operands with decays of magnitude <= 1 (fp32 multiplies,
// chained in chunk order) or a tf32 product of them over the channels: none depends on the state, so
// the prep kernel can form them, and the chain's serial path per m chunks is one round of products
// with S0, the 16-token mixes and one update, instead of m of each.
template <class R>
void chain_many(const Seq<R>& s, std::int64_t t0, const std::vector<Block<R>>& bl, std::vector<R>& S) {
  using O = Ops<R>;
  const std::int64_t K = s.d.K, V = s.d.V;
  const int m = static_cast<int>(bl.size());
  // between(a, b)[c] = decay_{a+1}[c] * ... * decay_{b-1}[c], chained in order (a = -1: from chunk 0).
  const auto between = [&](int a, int b) {
    std::vector<R> d(K, R(1));
    for (int x = a + 1; x < b; ++x)
      for (std::int64_t c = 0; c < K; ++c) d[c] = x == a + 1 ? bl[x].decay[c] : d[c] * bl[x].decay[c];
    return d;
  };
  std::vector<std::vector<R>> v(m), y(m);
  for (int b = 0; b < m; ++b) {  // the round of products with S0
    const std::vector<R> pre = between(-1, b);
    std::vector<R> wd(C * K), qd(C * K);
    for (int i = 0; i < C; ++i)
      for (std::int64_t c = 0; c < K; ++c) {
        wd[i * K + c] = b == 0 ? bl[b].w[i * K + c] : bl[b].w[i * K + c] * pre[c];
        qd[i * K + c] = b == 0 ? bl[b].qg[i * K + c] : O::op(bl[b].qg_f[i * K + c] * pre[c]);
      }
    state_products(K, V, S, bl[b].u, wd, qd, v[b], y[b]);
  }
  for (int b = 0; b < m; ++b) {  // the mixes, chunk by chunk
    for (int a = 0; a < b; ++a) {
      const std::vector<R> mid = between(a, b);
      std::vector<R> M(C * C, 0), N(C * C, 0);
      for (int i = 0; i < C; ++i)
        for (int j = 0; j < C; ++j) {
          R mm = 0, nn = 0;
          for (std::int64_t c = 0; c < K; ++c) {
            const R wb = a + 1 == b ? bl[b].w[i * K + c] : bl[b].w[i * K + c] * mid[c];
            const R qb = a + 1 == b ? bl[b].qg[i * K + c] : O::op(bl[b].qg_f[i * K + c] * mid[c]);
            mm += O::op(wb) * bl[a].kd[j * K + c];
            nn += qb * bl[a].kd[j * K + c];
          }
          M[i * C + j] = mm, N[i * C + j] = nn;
        }
      add_token_mix(V, M, false, R(-1), v[a], v[b]);
      add_token_mix(V, N, false, R(1), v[a], y[b]);
    }
    add_token_mix(V, bl[b].aqk, true, R(1), v[b], y[b]);
    store_out(s, t0 + b * C, bl[b].L, y[b]);
  }
  const std::vector<R> all = between(-1, m);
  std::vector<std::vector<R>> kdm(m);
  for (int a = 0; a < m; ++a) {
    const std::vector<R> post = between(a, m);
    kdm[a].resize(C * K);
    for (int j = 0; j < C; ++j)
      for (std::int64_t c = 0; c < K; ++c)
        kdm[a][j * K + c] = a + 1 == m ? bl[a].kd[j * K + c] : O::op(bl[a].kd_f[j * K + c] * post[c]);
  }
  for (std::int64_t c = 0; c < K; ++c)
    for (std::int64_t col = 0; col < V; ++col) {
      R x = S[c * V + col] * all[c];
      for (int a = 0; a < m; ++a)
        for (int j = 0; j < C; ++j) x += O::op(v[a][j * V + col]) * kdm[a][j * K + c];
      S[c * V + col] = x;
    }
}

template <class R>
void run(const kparity::kda::ChunkArgs& a, int per_step) {
  const kparity::kda::ChunkDims d = kparity::kda::chunk_dims(a);
  const std::int64_t K = d.K, V = d.V, G = d.HV / d.H;
  const R scale = static_cast<R>(static_cast<float>(a.scale ? *a.scale : 1.0 / std::sqrt(double(K))));
  const bool varlen = a.cu_seqlens.has_value();
  auto st_at = [&](const TensorView& s, std::int64_t n, std::int64_t hv, std::int64_t k, std::int64_t v) {
    return d.state_v_first ? s.at({n, hv, v, k}) : s.at({n, hv, k, v});
  };
  for (std::int64_t n = 0; n < d.N; ++n) {
    const std::int64_t b = varlen ? 0 : n;
    const std::int64_t bos = varlen ? std::int64_t(a.cu_seqlens->load_flat(n)) : 0;
    const std::int64_t eos = varlen ? std::int64_t(a.cu_seqlens->load_flat(n + 1)) : d.T;
    for (std::int64_t hv = 0; hv < d.HV; ++hv) {
      const R A_log = (a.use_gate_in_kernel && a.A_log) ? static_cast<R>(a.A_log->at({hv})) : R(0);
      const Seq<R> s{a, d, b, hv, hv / G, scale, A_log};
      std::vector<R> S(K * V, R(0));  // S[k][v]
      if (a.initial_state)
        for (std::int64_t k = 0; k < K; ++k)
          for (std::int64_t v = 0; v < V; ++v) S[k * V + v] = static_cast<R>(st_at(*a.initial_state, n, hv, k, v));
      for (std::int64_t t0 = bos; t0 < eos;) {
        std::vector<Block<R>> bl;
        for (int b = 0; b < per_step && t0 + b * C < eos; ++b) bl.push_back(prep_block(s, t0 + b * C, eos));
        chain_many(s, t0, bl, S);
        t0 += static_cast<std::int64_t>(bl.size()) * C;
      }
      if (a.output_final_state && a.final_state)
        for (std::int64_t k = 0; k < K; ++k)
          for (std::int64_t v = 0; v < V; ++v) {
            const std::array<std::int64_t, 4> idx =
                d.state_v_first ? std::array<std::int64_t, 4>{n, hv, v, k} : std::array<std::int64_t, 4>{n, hv, k, v};
            a.final_state->store(idx, static_cast<double>(S[k * V + v]));
          }
    }
  }
}

}  // namespace

void chunk_model(const kparity::kda::ChunkArgs& a, ChunkModel m, int chunks_per_step) {
  if (chunks_per_step < 1) throw std::invalid_argument("chunk_model: chunks_per_step must be at least 1");
  if (m == ChunkModel::exact) run<double>(a, chunks_per_step);
  else run<float>(a, chunks_per_step);
}

}  // namespace kparity::gpu_test
