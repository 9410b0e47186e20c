// Scalar model of the chunked kernel's algorithm (docs/kda_chunk_kernel.md), in two precisions:
// fp64 without roundings (checks the algorithm against the recurrence) and fp32 with the kernel's
// rounding points and tf32 operands (what the kernel should compute up to summation order).
#include "chunk_model.hpp"

#include <cmath>
#include <algorithm>
#include <array>
#include <cstring>
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

template <class R>
void run(const kparity::kda::ChunkArgs& a) {
  using O = Ops<R>;
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
      const std::int64_t h = hv / G;
      std::vector<R> S(K * V, R(0));  // S[k][v]
      if (a.initial_state)
        for (std::int64_t k = 0; k < K; ++k)
          for (std::int64_t v = 0; v < V; ++v) S[k * V + v] = static_cast<R>(st_at(*a.initial_state, n, hv, k, v));
      const R A_log = (a.use_gate_in_kernel && a.A_log) ? static_cast<R>(a.A_log->at({hv})) : R(0);
      for (std::int64_t t0 = bos; t0 < eos; t0 += C) {
        const int L = static_cast<int>(std::min<std::int64_t>(C, eos - t0));
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
              const R A = O::ex(A_log);
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
            q[i * K + c] = qv * scale;
          }
          for (std::int64_t c = 0; c < V; ++c) v[i * V + c] = static_cast<R>(a.v.at({b, t, hv, c}));
          R x = static_cast<R>(a.beta.at({b, t, hv}));
          // allow_neg_eigval: fla stores 2 sigmoid(b) as an fp32 tensor (reference/kda/chunk.cpp).
          if (a.use_beta_sigmoid_in_kernel) x = a.allow_neg_eigval ? R(float(R(2) * sigm(x))) : sigm(x);
          be[i] = x;
        }
        // doc 3.5
        std::vector<R> Gc(C * K), Rs(C * K), decay(K);
        for (std::int64_t c = 0; c < K; ++c) {
          R acc = g[c];
          Gc[c] = acc;
          for (int i = 1; i < C; ++i) Gc[i * K + c] = acc = acc + g[i * K + c];
          decay[c] = O::ex(acc);
          R r = 0;
          Rs[(C - 1) * K + c] = 0;
          for (int j = C - 2; j >= 0; --j) Rs[j * K + c] = r = r + g[(j + 1) * K + c];
        }
        // doc 3.7
        bool safe = true;
        for (int i = 0; i < C; ++i)
          for (std::int64_t c = 0; c < K; ++c) safe &= std::fabs(Gc[i * K + c] - Gc[7 * K + c]) <= R(64);
        std::vector<R> Akk(C * C, 0), Aqk(C * C, 0);
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
            Aqk[i * C + j] = aq;
          }
        // doc 3.6, 3.8
        std::vector<R> w(C * K), u(C * V);
        for (std::int64_t c = 0; c < K; ++c)
          for (int i = 0; i < C; ++i) {
            R acc = be[i] * (kk[i * K + c] * O::ex(Gc[i * K + c]));
            for (int j = 0; j < i; ++j) acc = O::fma(-Akk[i * C + j], w[j * K + c], acc);
            w[i * K + c] = acc;
          }
        for (std::int64_t c = 0; c < V; ++c)
          for (int i = 0; i < C; ++i) {
            R acc = be[i] * v[i * V + c];
            for (int j = 0; j < i; ++j) acc = O::fma(-Akk[i * C + j], u[j * V + c], acc);
            u[i * V + c] = acc;
          }
        // doc 3.9-3.11
        std::vector<R> vn(C * V), o(C * V);
        for (int i = 0; i < C; ++i) {
          std::vector<R> qg(K), kd(K);
          for (std::int64_t c = 0; c < K; ++c) qg[c] = O::op(q[i * K + c] * O::ex(Gc[i * K + c]));
          for (std::int64_t col = 0; col < V; ++col) {
            R x = u[i * V + col], y = 0;
            for (std::int64_t c = 0; c < K; ++c) {
              const R s = O::op(S[c * V + col]);
              x += s * O::op(-w[i * K + c]);
              y += s * qg[c];
            }
            vn[i * V + col] = x;
            o[i * V + col] = y;
          }
        }
        for (int i = 0; i < C; ++i)
          for (std::int64_t col = 0; col < V; ++col) {
            R y = o[i * V + col];
            for (int j = 0; j <= i; ++j) y += O::op(Aqk[i * C + j]) * O::op(vn[j * V + col]);
            if (i < L) a.out.store(std::array<std::int64_t, 4>{b, t0 + i, hv, col}, static_cast<double>(y));
          }
        for (std::int64_t c = 0; c < K; ++c)
          for (std::int64_t col = 0; col < V; ++col) {
            R s = S[c * V + col] * decay[c];
            for (int j = 0; j < C; ++j) s += O::op(vn[j * V + col]) * O::op(kk[j * K + c] * O::ex(Rs[j * K + c]));
            S[c * V + col] = s;
          }
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

void chunk_model(const kparity::kda::ChunkArgs& a, ChunkModel m) {
  if (m == ChunkModel::exact) run<double>(a);
  else run<float>(a);
}

}  // namespace kparity::gpu_test
