// An implementation plugin in plain C++ on the CPU (kparity/impl_abi.h): all five ops in fp32 with
// the upstream kernels' rounding points, reading every tensor through its DLPack strides. It uses
// nothing of kparity but the ABI header, the way a third-party plugin would; `kparity fuzz --impl
// libkparity_example_cpu_impl.so --op kda/packed_decode` fuzzes it. Loops are written for clarity,
// in their own order (not the reference's), which the differential rule allows.
#include <kparity/impl_abi.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace {

using I = std::int64_t;

// ---- dtypes ------------------------------------------------------------------------------------

enum class Kind { f32, bf16, f16, i32, i64, other };

Kind kind_of(const DLTensor* t) {
  const DLDataType d = t->dtype;
  if (d.lanes != 1) return Kind::other;
  if (d.code == kDLFloat && d.bits == 32) return Kind::f32;
  if (d.code == kDLBfloat && d.bits == 16) return Kind::bf16;
  if (d.code == kDLFloat && d.bits == 16) return Kind::f16;
  if (d.code == kDLInt && d.bits == 32) return Kind::i32;
  if (d.code == kDLInt && d.bits == 64) return Kind::i64;
  return Kind::other;
}

float bf16_to_f32(std::uint16_t h) {
  const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

std::uint16_t f32_to_bf16(float f) {  // round to nearest even; NaN stays a quiet NaN
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<std::uint16_t>((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}

// A strided DLTensor, elements addressed by multi-index, loaded and stored as float.
struct View {
  const DLTensor* t = nullptr;
  Kind kind = Kind::other;

  explicit View(const DLTensor* x) : t(x), kind(x ? kind_of(x) : Kind::other) {}
  explicit operator bool() const { return t != nullptr; }
  I size(int d) const { return t->shape[d < 0 ? d + t->ndim : d]; }
  int ndim() const { return t->ndim; }
  char* base() const { return static_cast<char*>(t->data) + t->byte_offset; }
  I off(std::initializer_list<I> idx) const {
    I o = 0;
    int d = 0;
    for (I i : idx) o += i * t->strides[d++];
    return o;
  }
  float ld(I o) const {
    switch (kind) {
      case Kind::f32: return reinterpret_cast<const float*>(base())[o];
      case Kind::bf16: return bf16_to_f32(reinterpret_cast<const std::uint16_t*>(base())[o]);
      case Kind::f16: return static_cast<float>(reinterpret_cast<const _Float16*>(base())[o]);
      case Kind::i32: return static_cast<float>(reinterpret_cast<const std::int32_t*>(base())[o]);
      case Kind::i64: return static_cast<float>(reinterpret_cast<const std::int64_t*>(base())[o]);
      default: return NAN;
    }
  }
  I ldi(I o) const {
    if (kind == Kind::i32) return reinterpret_cast<const std::int32_t*>(base())[o];
    if (kind == Kind::i64) return reinterpret_cast<const std::int64_t*>(base())[o];
    return static_cast<I>(ld(o));
  }
  void st(I o, float v) const {
    switch (kind) {
      case Kind::f32: reinterpret_cast<float*>(base())[o] = v; break;
      case Kind::bf16: reinterpret_cast<std::uint16_t*>(base())[o] = f32_to_bf16(v); break;
      case Kind::f16: reinterpret_cast<_Float16*>(base())[o] = static_cast<_Float16>(v); break;
      default: break;
    }
  }
  // Element i of the tensor read as a flat row-major sequence (upstream's pointer arithmetic).
  I flat_off(I i) const {
    I o = 0;
    for (int d = t->ndim - 1; d >= 0; --d) {
      o += (i % t->shape[d]) * t->strides[d];
      i /= t->shape[d];
    }
    return o;
  }
  float ld_flat(I i) const { return ld(flat_off(i)); }
  I ldi_flat(I i) const { return ldi(flat_off(i)); }
};

// rt(x, dtype of t): the rounding point of a 16-bit tensor, identity for fp32.
float rt(float x, Kind k) {
  if (k == Kind::bf16) return bf16_to_f32(f32_to_bf16(x));
  if (k == Kind::f16) return static_cast<float>(static_cast<_Float16>(x));
  return x;
}

bool is_float(const View& v) { return v.kind == Kind::f32 || v.kind == Kind::bf16 || v.kind == Kind::f16; }
bool is_int(const View& v) { return v.kind == Kind::i32 || v.kind == Kind::i64; }

// ---- KDA ---------------------------------------------------------------------------------------

float softplus(float x) { return x > 20.f ? x : std::log(1.f + std::exp(x)); }  // sglang's literal form
float sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

float gate(float x, float A_log, const double* lower_bound) {
  const float A = std::exp(A_log);
  if (lower_bound) return static_cast<float>(*lower_bound) * sigmoid(A * x);
  return -A * softplus(x);
}

void l2norm(std::vector<float>& x, bool multiply) {
  float n = 0.f;
  for (float e : x) n += e * e;
  const float root = std::sqrt(n + 1e-6f);
  const float r = 1.f / root;
  for (float& e : x) e = multiply ? e * r : e / root;
}

struct DecodeDims {
  I B, H, HV, K, V, G;
};

DecodeDims decode_dims(const View& mixed, const View& state) {
  DecodeDims d{};
  d.B = mixed.size(0);
  d.HV = state.size(1);
  d.V = state.size(2);
  d.K = state.size(3);
  d.H = (mixed.size(1) - d.HV * d.V) / 2 / d.K;
  d.G = d.HV / d.H;
  return d;
}

// a[b, hv, c] and dt_bias[hv, c] in their flat [.., HV*K] or split [.., HV, K] forms.
float per_head(const View& a, I b, I hv, I c, I K) {
  return a.ndim() == 3 ? a.ld(a.off({b, hv, c})) : a.ld(a.off({b, hv * K + c}));
}
float bias(const View& t, I hv, I c, I K) { return t.ndim() == 2 ? t.ld(t.off({hv, c})) : t.ld(t.off({hv * K + c})); }
// ReplaySSM reads them as upstream does, a.view(B, -1) and dt_bias.view(-1) (kda.md C.1 #3): both
// are contiguous, so any shape with the right element count means the same flat sequence.
float per_head_flat(const View& a, I b, I hv, I c, I HV, I K) { return a.ld_flat(b * HV * K + hv * K + c); }
float bias_flat(const View& t, I hv, I c, I K) { return t.ld_flat(hv * K + c); }

struct Head {
  std::vector<float> q, k, g, v;
  float beta = 0.f;
};

Head load_head(const View& mixed, const View& a, const View& b, const View& A_log, const View& dt_bias,
               const DecodeDims& d, I row, I hv, float scale, bool l2, bool multiply, const double* lb, bool flat) {
  Head t;
  const I h = hv / d.G;
  t.q.resize(d.K);
  t.k.resize(d.K);
  t.g.resize(d.K);
  t.v.resize(d.V);
  for (I c = 0; c < d.K; ++c) {
    t.q[c] = mixed.ld(mixed.off({row, h * d.K + c}));
    t.k[c] = mixed.ld(mixed.off({row, d.H * d.K + h * d.K + c}));
  }
  for (I j = 0; j < d.V; ++j) t.v[j] = mixed.ld(mixed.off({row, 2 * d.H * d.K + hv * d.V + j}));
  if (l2) {
    l2norm(t.q, multiply);
    l2norm(t.k, multiply);
  }
  for (float& e : t.q) e *= scale;
  const float al = A_log.ld(A_log.off({hv}));
  for (I c = 0; c < d.K; ++c) {
    const float x = flat ? per_head_flat(a, row, hv, c, d.HV, d.K) + bias_flat(dt_bias, hv, c, d.K)
                         : per_head(a, row, hv, c, d.K) + bias(dt_bias, hv, c, d.K);
    t.g[c] = gate(x, al, lb);
  }
  t.beta = sigmoid(b.ld(b.off({row, hv})));
  return t;
}

const char* check_decode(const View& mixed, const View& state, const View& out, const View& idx) {
  if (!is_float(mixed) || !is_float(state) || !is_float(out)) return "supported float dtypes: float32, bfloat16, float16";
  if (!is_int(idx)) return "ssm_state_indices must be int32 or int64";
  return nullptr;
}

int packed_decode(const DLTensor* mixed_qkv, const DLTensor* a, const DLTensor* b, const DLTensor* A_log,
                  const DLTensor* dt_bias, double scale, DLTensor* initial_state, DLTensor* out,
                  const DLTensor* ssm_state_indices, int use_qk_l2norm_in_kernel, const double* lower_bound,
                  const kparity_impl_context* ctx) {
  const View X(mixed_qkv), Av(a), Bv(b), AL(A_log), DT(dt_bias), S0(initial_state), O(out), idx(ssm_state_indices);
  if (const char* why = check_decode(X, S0, O, idx)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, why);
  const DecodeDims d = decode_dims(X, S0);
  const bool multiply = S0.kind == Kind::bf16;  // kda.md A.5: rsqrt-multiply for a bf16 state
  std::vector<float> S(d.V * d.K);
  for (I row = 0; row < d.B; ++row) {
    const I s = idx.ldi(idx.off({row}));
    for (I hv = 0; hv < d.HV; ++hv) {
      if (s < 0) {
        for (I j = 0; j < d.V; ++j) O.st(O.off({row, 0, hv, j}), 0.f);
        continue;
      }
      const Head t = load_head(X, Av, Bv, AL, DT, d, row, hv, static_cast<float>(scale), use_qk_l2norm_in_kernel,
                               multiply, lower_bound, false);
      for (I j = 0; j < d.V; ++j)
        for (I c = 0; c < d.K; ++c) S[j * d.K + c] = S0.ld(S0.off({s, hv, j, c})) * std::exp(t.g[c]);
      for (I j = 0; j < d.V; ++j) {
        float* r = &S[j * d.K];
        float u = 0.f;
        for (I c = d.K - 1; c >= 0; --c) u += r[c] * t.k[c];  // its own order: last channel first
        const float delta = t.beta * (t.v[j] - u);
        float o = 0.f;
        for (I c = d.K - 1; c >= 0; --c) {
          r[c] = r[c] + delta * t.k[c];
          o += r[c] * t.q[c];
        }
        O.st(O.off({row, 0, hv, j}), o);
        for (I c = 0; c < d.K; ++c) S0.st(S0.off({s, hv, j, c}), r[c]);
      }
    }
  }
  return KPARITY_IMPL_OK;
}

int replayssm_decode(const DLTensor* mixed_qkv, const DLTensor* a, const DLTensor* b, const DLTensor* A_log,
                     const DLTensor* dt_bias, double scale, DLTensor* initial_state, DLTensor* d_cache,
                     DLTensor* k_cache, DLTensor* g_cache, DLTensor* out, const DLTensor* ssm_state_indices,
                     const DLTensor* write_pos, const DLTensor* force_flush, int use_qk_l2norm_in_kernel,
                     const double* lower_bound, int beta_in_fp32, const kparity_impl_context* ctx) {
  const View X(mixed_qkv), Av(a), Bv(b), AL(A_log), DT(dt_bias), S0(initial_state), Dc(d_cache), Kc(k_cache),
      Gc(g_cache), O(out), idx(ssm_state_indices), wp(write_pos), ff(force_flush);
  if (const char* why = check_decode(X, S0, O, idx)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, why);
  // Upstream's own check (kda.md C.1 #12), with its message: the only ring dtype that is fixed.
  if (Gc.kind != Kind::f32) return kparity_impl_fail(ctx, KPARITY_IMPL_REJECTED, "`g_cache` must have dtype torch.float32.");
  if (!is_float(Dc) || !is_float(Kc)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, "ring dtypes: float32, bfloat16, float16");
  const DecodeDims d = decode_dims(X, S0);
  const I L = Dc.size(2);
  const Kind io = O.kind;
  std::vector<float> Sp(d.V * d.K), P(L * d.K), W(L * d.K);
  for (I row = 0; row < d.B; ++row) {
    const I s = idx.ldi(idx.off({row}));
    if (s < 0) {  // B.2.3 item 1: cursors, state and rings are not even read
      for (I hv = 0; hv < d.HV; ++hv)
        for (I j = 0; j < d.V; ++j) O.st(O.off({row, 0, hv, j}), 0.f);
      continue;
    }
    const I c = wp.ldi(wp.off({row}));
    const bool flush = c == L - 1 || (ff && ff.ldi(ff.off({row})) != 0);
    for (I hv = 0; hv < d.HV; ++hv) {
      const I h = hv / d.G;
      Head t = load_head(X, Av, Bv, AL, DT, d, row, hv, static_cast<float>(scale), use_qk_l2norm_in_kernel, true,
                         lower_bound, true);
      if (!beta_in_fp32) t.beta = rt(t.beta, Bv.kind);  // A.4 item 3
      float kq = 0.f;
      for (I k = 0; k < d.K; ++k) kq += t.k[k] * t.q[k];
      // B.2.4: inclusive fp32 prefix of the gates, W_i = exp(Gtot - P_i), positions < c only.
      for (I k = 0; k < d.K; ++k) {
        float run = 0.f;
        for (I i = 0; i < c; ++i) P[i * d.K + k] = run = run + Gc.ld(Gc.off({s, hv, i, k}));
        for (I i = 0; i < c; ++i) W[i * d.K + k] = std::exp(run - P[i * d.K + k]);
        for (I j = 0; j < d.V; ++j) Sp[j * d.K + k] = S0.ld(S0.off({s, hv, j, k})) * std::exp(run);
      }
      for (I i = 0; i < c; ++i)  // the ring term entry by entry, operands rounded to out's dtype
        for (I j = 0; j < d.V; ++j) {
          const float dj = rt(Dc.ld(Dc.off({s, hv, i, j})), io);
          for (I k = 0; k < d.K; ++k) Sp[j * d.K + k] += dj * rt(Kc.ld(Kc.off({s, h, i, k})) * W[i * d.K + k], io);
        }
      std::vector<float> delta(d.V);
      for (I j = 0; j < d.V; ++j) {
        float sq = 0.f, sk = 0.f;
        for (I k = 0; k < d.K; ++k) {
          const float alpha = std::exp(t.g[k]);
          sq += Sp[j * d.K + k] * (t.q[k] * alpha);
          sk += Sp[j * d.K + k] * (t.k[k] * alpha);
        }
        delta[j] = t.beta * (t.v[j] - sk);
        O.st(O.off({row, 0, hv, j}), sq + delta[j] * kq);
      }
      if (flush) {
        for (I j = 0; j < d.V; ++j)
          for (I k = 0; k < d.K; ++k) {
            const float prod = Sp[j * d.K + k] * std::exp(t.g[k]);
            S0.st(S0.off({s, hv, j, k}), prod + delta[j] * t.k[k]);
          }
      } else {
        for (I j = 0; j < d.V; ++j) Dc.st(Dc.off({s, hv, c, j}), delta[j]);
        for (I k = 0; k < d.K; ++k) Gc.st(Gc.off({s, hv, c, k}), t.g[k]);
        if (hv % d.G == 0)
          for (I k = 0; k < d.K; ++k) Kc.st(Kc.off({s, h, c, k}), t.k[k]);
      }
    }
  }
  return KPARITY_IMPL_OK;
}

int recurrent(const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* g, const DLTensor* beta,
              const double* scale, const DLTensor* initial_state, int use_qk_l2norm_in_kernel,
              const DLTensor* cu_seqlens, const DLTensor* a, const DLTensor* dt_bias, const DLTensor* A_log,
              const double* lower_bound, int beta_is_logits, DLTensor* out, DLTensor* final_state,
              const kparity_impl_context* ctx) {
  const View Q(q), Kt(k), Vt(v), Gt(g), Bt(beta), S0(initial_state), cu(cu_seqlens), At(a), DT(dt_bias), AL(A_log),
      O(out), SF(final_state);
  if (!is_float(Q) || !is_float(Vt) || !is_float(O)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, "float dtypes only");
  const I T = Q.size(0), H = Q.size(1), K = Q.size(2), HV = Vt.size(1), V = Vt.size(2), G = HV / H;
  std::vector<I> bounds{0, T};
  if (cu) {
    bounds.resize(cu.size(0));
    for (I n = 0; n < cu.size(0); ++n) bounds[n] = cu.ldi(cu.off({n}));
  }
  const float sc = static_cast<float>(scale ? *scale : 1.0 / std::sqrt(static_cast<double>(K)));
  std::vector<float> S(V * K), qv(K), kv(K), alpha(K);
  for (I n = 0; n + 1 < static_cast<I>(bounds.size()); ++n)
    for (I hv = 0; hv < HV; ++hv) {
      const I h = hv / G;
      for (I j = 0; j < V; ++j)
        for (I c = 0; c < K; ++c) S[j * K + c] = S0 ? S0.ld(S0.off({n, hv, j, c})) : 0.f;
      for (I t = bounds[n]; t < bounds[n + 1]; ++t) {
        for (I c = 0; c < K; ++c) {
          qv[c] = Q.ld(Q.off({t, h, c}));
          kv[c] = Kt.ld(Kt.off({t, h, c}));
          const float lg = Gt ? Gt.ld(Gt.off({t, hv, c}))
                              : gate(per_head(At, t, hv, c, K) + bias(DT, hv, c, K), AL.ld(AL.off({hv})), lower_bound);
          alpha[c] = std::exp(lg);
        }
        if (use_qk_l2norm_in_kernel) {
          l2norm(qv, false);
          l2norm(kv, false);
        }
        for (float& e : qv) e *= sc;
        float bt = Bt.ld(Bt.off({t, hv}));
        if (beta_is_logits) bt = sigmoid(bt);
        for (I j = 0; j < V; ++j) {
          float* r = &S[j * K];
          float u = 0.f;
          for (I c = 0; c < K; ++c) u += (r[c] *= alpha[c]) * kv[c];
          const float delta = bt * (Vt.ld(Vt.off({t, hv, j})) - u);
          float o = 0.f;
          for (I c = 0; c < K; ++c) o += (r[c] += delta * kv[c]) * qv[c];
          O.st(O.off({t, hv, j}), o);
        }
      }
      if (SF)
        for (I j = 0; j < V; ++j)
          for (I c = 0; c < K; ++c) SF.st(SF.off({n, hv, j, c}), S[j * K + c]);
    }
  return KPARITY_IMPL_OK;
}

// ---- sparse attention ----------------------------------------------------------------------------

struct Key {
  const View* src;
  I row;
  bool shifted;
};

// One token's softmax with a zero-value sink (sparse_attention.md C.1, C.3, C.4): fp32 logits, a
// -FLT_MAX running-max seed, weights rounded to the storage dtype for P.V while Z sums them
// unrounded, the sink folded in at the end; base 2 (decode, log2 e folded into the scale) or e.
void attend(const View& Q, const View& sink, const View& O, const View* lse, I t, const std::vector<Key>& keys,
            double scale, double shift, bool base2) {
  const I H = Q.size(1), D = Q.size(2);
  const float log2e = 1.4426950408889634f;
  const float sc = static_cast<float>(base2 ? scale * 1.4426950408889634 : scale);
  const float sh = static_cast<float>(base2 ? shift * 1.4426950408889634 : shift);
  std::vector<float> s(keys.size()), num(D);
  for (I h = 0; h < H; ++h) {
    const float sink32 = sink.ld_flat(h);
    const float sig = base2 ? sink32 * log2e + sh : sink32 + sh;
    bool any_nan = std::isnan(sig);
    float M = -FLT_MAX;
    for (std::size_t n = 0; n < keys.size(); ++n) {
      float dot = 0.f;
      for (I x = 0; x < D; ++x) dot += Q.ld(Q.off({t, h, x})) * keys[n].src->ld(keys[n].src->off({keys[n].row, x}));
      s[n] = dot * sc + (keys[n].shifted ? sh : 0.f);
      if (std::isnan(s[n])) any_nan = true;
      else M = std::max(M, s[n]);
    }
    if (!std::isnan(sig)) M = std::max(M, sig);
    float l;
    std::fill(num.begin(), num.end(), 0.f);
    const float inf = std::numeric_limits<float>::infinity();
    // Upstream's finalisation (docs/upstream_conventions.md): a NaN logit or sink, or a +inf sink,
    // makes Z NaN and the Z > 0 test gives zeros and lse -inf (decided here before any sum).
    if (sig == inf || any_nan) {
      l = -inf;
    } else {
      float Z = 0.f;
      for (std::size_t n = 0; n < keys.size(); ++n) {
        const float w = base2 ? std::exp2(s[n] - M) : std::exp(s[n] - M);
        Z += w;
        const float wv = rt(w, Q.kind);
        for (I x = 0; x < D; ++x) num[x] += wv * keys[n].src->ld(keys[n].src->off({keys[n].row, x}));
      }
      Z += base2 ? std::exp2(sig - M) : std::exp(sig - M);
      if (Z > 0.f) {
        for (float& e : num) e /= std::max(Z, 1e-30f);
        l = base2 ? (M + std::log2(Z)) * 0.6931471805599453f : M + std::log(Z);
      } else {  // Z = 0 or NaN (a +inf logit): zeros, whatever the numerator holds (0 * inf)
        std::fill(num.begin(), num.end(), 0.f);
        l = -inf;
      }
    }
    for (I x = 0; x < D; ++x) O.st(O.off({t, h, x}), num[x]);
    if (lse) lse->st(lse->off({t, h}), l);
  }
}

// Token t's span of a CSR list: [indptr[t], indptr[t+1]), empty when it does not increase.
std::pair<I, I> span(const View& indptr, I t) {
  const I b = indptr.ldi_flat(t), e = indptr.ldi_flat(t + 1);
  return {b, std::max(b, e)};
}

const char* check_sparse(const View& q, const View& out) {
  if (q.kind != Kind::bf16 && q.kind != Kind::f16) return "q must be bfloat16 or float16";
  if (out.kind != q.kind) return "out must have q's dtype";
  return nullptr;
}

int paged_prefill(const DLTensor* q, const DLTensor* unified_kv, const DLTensor* kv_indices_prefix,
                  const DLTensor* kv_indptr_prefix, const DLTensor* kv, const DLTensor* kv_indices_extend,
                  const DLTensor* kv_indptr_extend, const DLTensor* attn_sink, double softmax_scale, int return_lse,
                  double replicated_logit_shift, DLTensor* out, DLTensor* lse, const kparity_impl_context* ctx) {
  const View Q(q), U(unified_kv), ip(kv_indices_prefix), pp(kv_indptr_prefix), E(kv), ie(kv_indices_extend),
      pe(kv_indptr_extend), sink(attn_sink), O(out), Lse(lse);
  if (const char* why = check_sparse(Q, O)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, why);
  std::vector<Key> keys;
  for (I t = 0; t < Q.size(0); ++t) {
    keys.clear();
    const auto [pb, pe_] = span(pp, t);
    for (I j = pb; j < pe_; ++j)
      if (const I r = ip.ldi_flat(j); r >= 0) keys.push_back({&U, r, false});  // any negative entry is a sentinel
    const auto [eb, ee] = span(pe, t);
    for (I j = eb; j < ee; ++j)
      if (const I r = ie.ldi_flat(j); r >= 0) keys.push_back({&E, r, true});
    attend(Q, sink, O, return_lse && lse ? &Lse : nullptr, t, keys, softmax_scale, replicated_logit_shift, false);
  }
  return KPARITY_IMPL_OK;
}

int paged_decode(const DLTensor* q, const DLTensor* unified_kv, const DLTensor* kv_indices, const DLTensor* kv_indptr,
                 const DLTensor* attn_sink, double softmax_scale, int return_lse, DLTensor* out, DLTensor* lse,
                 const kparity_impl_context* ctx) {
  const View Q(q), U(unified_kv), idx(kv_indices), ptr(kv_indptr), sink(attn_sink), O(out), Lse(lse);
  if (const char* why = check_sparse(Q, O)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, why);
  std::vector<Key> keys;
  for (I t = 0; t < Q.size(0); ++t) {
    keys.clear();
    const auto [b, e] = span(ptr, t);
    for (I j = b; j < e; ++j) keys.push_back({&U, idx.ldi_flat(j), false});  // no sentinels in decode
    attend(Q, sink, O, return_lse && lse ? &Lse : nullptr, t, keys, softmax_scale, 0.0, true);
  }
  return KPARITY_IMPL_OK;
}

const kparity_impl_info kInfo{KPARITY_IMPL_ABI_VERSION, "example-cpu", kDLCPU};

}  // namespace

// tests/fuzz_external builds planted-bug variants by including this file with the exports off.
#ifndef KPARITY_EXAMPLE_NO_EXPORTS
extern "C" {

KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info(void) { return &kInfo; }

KPARITY_IMPL_EXPORT int kparity_impl_kda_recurrent KPARITY_IMPL_KDA_RECURRENT_PARAMS {
  return recurrent(q, k, v, g, beta, scale, initial_state, use_qk_l2norm_in_kernel, cu_seqlens, a, dt_bias, A_log,
                   lower_bound, beta_is_logits, out, final_state, ctx);
}

KPARITY_IMPL_EXPORT int kparity_impl_kda_packed_decode KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS {
  return packed_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                       use_qk_l2norm_in_kernel, lower_bound, ctx);
}

KPARITY_IMPL_EXPORT int kparity_impl_kda_replayssm_decode KPARITY_IMPL_KDA_REPLAYSSM_DECODE_PARAMS {
  return replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache, out,
                          ssm_state_indices, write_pos, force_flush, use_qk_l2norm_in_kernel, lower_bound,
                          beta_in_fp32, ctx);
}

KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_prefill KPARITY_IMPL_SPARSE_PAGED_PREFILL_PARAMS {
  return paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend, kv_indptr_extend,
                       attn_sink, softmax_scale, return_lse, replicated_logit_shift, out, lse, ctx);
}

KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_decode KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS {
  return paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, return_lse, out, lse, ctx);
}

}  // extern "C"
#endif  // KPARITY_EXAMPLE_NO_EXPORTS
