#pragma once
// Test scaffolding for the sparse references: cases built from per-token index lists, a test-side
// fp64 closed form of spec C.1 (independent of the reference's code), and the tolerance recipes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/reference/sparse.hpp"

namespace kpt {

using namespace kparity;
using kparity::reference::Precision;
using List = std::vector<std::int64_t>;

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kE32 = 0x1p-24;  // fp32 unit roundoff

// Unit roundoff and the smallest subnormal spacing (an absolute floor) of a storage dtype.
inline double unit_roundoff(DType t) { return t == DType::bf16 ? 0x1p-8 : t == DType::f16 ? 0x1p-11 : kE32; }
inline double sub_spacing(DType t) { return t == DType::bf16 ? 0x1p-133 : t == DType::f16 ? 0x1p-24 : 0x1p-149; }

inline Tensor ints(const List& v, DType dt = DType::i32) {
  Tensor t(dt, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) t.view().store_int(std::array{static_cast<std::int64_t>(i)}, v[i]);
  return t;
}

// CSR with absolute pointers: a leading pad of valid-looking entries (row 0) that no span covers, so
// a reference that assumed indptr[0] == 0 would pick them up.
struct Csr {
  Tensor indices, indptr;
};
inline Csr make_csr(const std::vector<List>& lists, std::int64_t pad = 2) {
  List idx(pad, 0), ptr{pad};
  for (const auto& l : lists) {
    idx.insert(idx.end(), l.begin(), l.end());
    ptr.push_back(static_cast<std::int64_t>(idx.size()));
  }
  return {ints(idx), ints(ptr)};
}

struct Case {
  DType dt = DType::bf16;
  std::int64_t T = 0, H = 0, D = 0;
  Tensor q, ukv, kv, sink;        // sink is f32
  std::vector<List> pre, ext;     // per-token lists; negatives are sentinels
  double scale = 1.0, shift = 0.0;
};

struct Result {
  std::vector<double> out, lse;
};

// Strict options without the data checks: the deep contract rejects NaN inputs (O12, O13), so the
// NaN-propagation rules of C.3 are only reachable with deep checks off.
inline ValidateOptions shallow() { return {Entry::reference, true, false, true}; }

inline std::vector<double> read_all(const TensorView& v) {
  std::vector<double> r(static_cast<std::size_t>(v.numel()));
  for (std::int64_t i = 0; i < v.numel(); ++i) r[i] = v.load_flat(i);
  return r;
}

// Runs prefill with poisoned outputs. Optional views replace the case's tensors (strided layouts).
struct Layout {
  std::optional<TensorView> q, ukv, kv, out, lse;
};
inline Result run_prefill(const Case& c, Precision p, const Layout& l = {},
                          const ValidateOptions& o = ValidateOptions::strict(Entry::reference)) {
  Csr pre = make_csr(c.pre), ext = make_csr(c.ext);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out.poison();
  lse.poison();
  kparity::sparse::PagedPrefillArgs a;
  a.q = l.q.value_or(c.q.view());
  a.unified_kv = l.ukv.value_or(c.ukv.view());
  a.kv = l.kv.value_or(c.kv.view());
  a.kv_indices_prefix = pre.indices;
  a.kv_indptr_prefix = pre.indptr;
  a.kv_indices_extend = ext.indices;
  a.kv_indptr_extend = ext.indptr;
  a.attn_sink = c.sink;
  a.softmax_scale = c.scale;
  a.replicated_logit_shift = c.shift;
  a.return_lse = true;
  a.out = l.out.value_or(out.view());
  a.lse = l.lse.value_or(lse.view());
  kparity::reference::sparse::paged_prefill(a, p, o);
  return {read_all(a.out), read_all(*a.lse)};
}

// Decode over the case's prefix lists (which must hold valid rows only).
inline Result run_decode(const Case& c, Precision p,
                         const ValidateOptions& o = ValidateOptions::strict(Entry::reference)) {
  Csr pre = make_csr(c.pre);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out.poison();
  lse.poison();
  kparity::sparse::PagedDecodeArgs a;
  a.q = c.q;
  a.unified_kv = c.ukv;
  a.kv_indices = pre.indices;
  a.kv_indptr = pre.indptr;
  a.attn_sink = c.sink;
  a.softmax_scale = c.scale;
  a.return_lse = true;
  a.out = out;
  a.lse = lse.view();
  kparity::reference::sparse::paged_decode(a, p, o);
  return {read_all(out), read_all(lse)};
}

// Test-side fp64 closed form of C.1 (softmax over [logits, sink], sink column dropped), plus the
// per-element quantities the tolerance recipes need.
struct Expect {
  std::vector<double> out, lse;
  std::vector<double> A;       // sum_j p_j |K_j[d]|: the magnitude the weighted sum is built from
  std::vector<double> dlogit;  // per (t, h): bound on an fp32 logit error (absolute)
  std::vector<double> nkeys;   // per (t, h): number of selected keys
};

inline Expect closed_form(const Case& c) {
  Expect e;
  const auto T = c.T, H = c.H, D = c.D;
  e.out.assign(T * H * D, 0.0);
  e.A.assign(T * H * D, 0.0);
  e.lse.assign(T * H, -kInf);
  e.dlogit.assign(T * H, 0.0);
  e.nkeys.assign(T * H, 0.0);
  for (std::int64_t t = 0; t < T; ++t) {
    std::vector<std::pair<const Tensor*, std::int64_t>> keys;
    std::vector<double> shift;
    for (auto i : c.pre[t]) if (i >= 0) { keys.push_back({&c.ukv, i}); shift.push_back(0.0); }
    for (auto i : c.ext[t]) if (i >= 0) { keys.push_back({&c.kv, i}); shift.push_back(c.shift); }
    const std::size_t n = keys.size();
    for (std::int64_t h = 0; h < H; ++h) {
      const std::int64_t th = t * H + h;
      e.nkeys[th] = static_cast<double>(n);
      const double sig = static_cast<double>(static_cast<float>(c.sink.view().at({h}))) + c.shift;
      std::vector<double> s(n);
      double m = sig, absdot = 0, smax = std::isfinite(sig) ? std::fabs(sig) : 0.0;
      for (std::size_t j = 0; j < n; ++j) {
        double dot = 0, ad = 0;
        for (std::int64_t d = 0; d < D; ++d) {
          const double pr = c.q.view().at({t, h, d}) * keys[j].first->view().at({keys[j].second, d});
          dot += pr;
          ad += std::fabs(pr);
        }
        s[j] = c.scale * dot + shift[j];
        m = std::max(m, s[j]);
        absdot = std::max(absdot, ad * c.scale);
        smax = std::max(smax, std::fabs(s[j]));
      }
      // fp32 dot of exact products (gamma_D), scale/shift/sink roundings and exp's few-ulp error.
      e.dlogit[th] = (D + 2) * kE32 * absdot + 4 * kE32 * (smax + std::fabs(c.shift)) + 8 * kE32;
      if (sig == kInf || (n == 0 && sig == -kInf)) continue;  // zeros, lse -inf (C.3)
      double Z = std::exp(sig - m);
      for (double v : s) Z += std::exp(v - m);
      for (std::size_t j = 0; j < n; ++j) {
        const double pj = std::exp(s[j] - m) / Z;
        for (std::int64_t d = 0; d < D; ++d) {
          const double k = keys[j].first->view().at({keys[j].second, d});
          e.out[th * D + d] += pj * k;
          e.A[th * D + d] += pj * std::fabs(k);
        }
      }
      e.lse[th] = m + std::log(Z);
    }
  }
  return e;
}

// Recipe "oracle vs exact": the oracle rounds once, so it sits within half an ulp (u |x|) of the
// exact value, plus fp64 noise (1e-12 of the magnitudes) and the subnormal spacing.
inline std::vector<double> oracle_out_bound(const Expect& e, DType dt) {
  std::vector<double> b(e.out.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = unit_roundoff(dt) * std::fabs(e.out[i]) + 1e-12 * (e.A[i] + std::fabs(e.out[i])) + sub_spacing(dt);
  return b;
}
inline std::vector<double> oracle_lse_bound(const Expect& e) {
  std::vector<double> b(e.lse.size());
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = kE32 * std::fabs(e.lse[i]) + 1e-12 * (1 + std::fabs(e.lse[i]));
  return b;
}

// Recipe 1.3 made explicit for faithful mode (F = 2): numerator weights rounded to storage (u A),
// logit errors moving every weight (2 dlogit (A + |o|)), fp32 accumulation over n + 2 terms
// ((n + 2) e (A + |o|)); then both sides' final roundings (2u |o|) and the subnormal floor.
inline std::vector<double> faithful_out_bound(const Expect& e, DType dt, double F = 2.0) {
  const double u = unit_roundoff(dt);
  std::vector<double> b(e.out.size());
  const std::size_t D = e.out.size() / e.lse.size();
  for (std::size_t i = 0; i < b.size(); ++i) {
    const std::size_t th = i / D;
    const double mag = e.A[i] + std::fabs(e.out[i]);
    b[i] = F * (u * e.A[i] + 2 * e.dlogit[th] * mag + (e.nkeys[th] + 2) * kE32 * mag) +
           2 * u * std::fabs(e.out[i]) + sub_spacing(dt);
  }
  return b;
}
// lse = M + ln Z: logit errors, Z's accumulation and the fp32 store; weight rounding does not enter.
inline std::vector<double> faithful_lse_bound(const Expect& e, double F = 2.0) {
  std::vector<double> b(e.lse.size());
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = F * (e.dlogit[i] + (e.nkeys[i] + 3) * kE32 + 2 * kE32 * std::fabs(e.lse[i])) + 1e-12;
  return b;
}

// Elementwise |actual - expected| <= bound; infinities must match exactly; NaN never passes.
inline ::testing::AssertionResult within(const std::vector<double>& actual, const std::vector<double>& expected,
                                         const std::vector<double>& bound) {
  if (actual.size() != expected.size()) return ::testing::AssertionFailure() << "size mismatch";
  std::size_t bad = 0, worst = 0;
  double worst_ratio = 0;
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const double a = actual[i], x = expected[i];
    double ratio;
    if (std::isinf(x) || std::isinf(a)) ratio = (a == x) ? 0 : kInf;
    else ratio = std::isnan(a) || std::isnan(x) ? kInf : std::fabs(a - x) / bound[i];
    if (!(ratio <= 1)) ++bad;
    if (!(ratio <= worst_ratio)) { worst_ratio = ratio; worst = i; }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "Mismatched elements: " << bad << " / " << actual.size() << "; worst at "
                                       << worst << ": actual " << actual[worst] << ", expected " << expected[worst]
                                       << ", allowed " << bound[worst] << " (" << worst_ratio * 100 << "% of allowed)";
}
inline std::vector<double> uniform_bound(std::size_t n, double atol, const std::vector<double>& ref, double rtol) {
  std::vector<double> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = atol + rtol * std::fabs(ref[i]);
  return b;
}

// Value identity (+0 == -0, NaN == NaN): for layouts and physically equivalent inputs.
inline ::testing::AssertionResult identical(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << "size mismatch";
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i]))))
      return ::testing::AssertionFailure() << "element " << i << ": " << a[i] << " vs " << b[i];
  return ::testing::AssertionSuccess();
}

inline double norm1(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::fabs(x);
  return s;
}

// Random case: normal q/kv rounded to dt, sink ~ N(0.5, 0.4) in fp32, lists with sentinels
// (several negative values) and natural duplicates.
struct RandomSpec {
  DType dt = DType::bf16;
  std::int64_t T = 4, H = 5, D = 24, P = 40, Ne = 12;
  std::int64_t max_pre = 20, max_ext = 6;
  double sentinel_rate = 0.15, shift = 0.0;
};
inline Case random_case(std::uint64_t seed, const RandomSpec& s) {
  Case c;
  c.dt = s.dt;
  c.T = s.T; c.H = s.H; c.D = s.D;
  c.q = Tensor(s.dt, {s.T, s.H, s.D});
  c.q.fill_normal(seed * 7 + 1);
  c.ukv = Tensor(s.dt, {s.P, s.D});
  c.ukv.fill_normal(seed * 7 + 2);
  c.kv = Tensor(s.dt, {s.Ne, s.D});
  c.kv.fill_normal(seed * 7 + 3);
  c.sink = Tensor(DType::f32, {s.H + 2});  // longer than H: only the first H are read
  c.sink.fill_normal(seed * 7 + 4, 0.5, 0.4);
  c.scale = 1.0 / std::sqrt(static_cast<double>(s.D));
  c.shift = s.shift;
  Rng rng(seed * 7 + 5);
  const List sentinels{-1, -2, -7, -2147483648LL};
  auto draw = [&](std::int64_t maxlen, std::int64_t rows) {
    List l(rng.integer(0, maxlen));
    for (auto& v : l)
      v = (rng.uniform() < s.sentinel_rate) ? sentinels[rng.integer(0, 3)] : rng.integer(0, rows - 1);
    return l;
  };
  for (std::int64_t t = 0; t < s.T; ++t) {
    c.pre.push_back(draw(s.max_pre, s.P));
    c.ext.push_back(s.Ne > 0 ? draw(s.max_ext, s.Ne) : List{});
  }
  return c;
}

}  // namespace kpt
