#pragma once
// Shared helpers of the KDA reference tests: seeds, fills, comparisons, byte snapshots, builders.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/reference/kda.hpp"

namespace kdatest {

using namespace kparity;
namespace ref = kparity::reference::kda;
using kparity::reference::Precision;
using kparity::kda::BetaRounding;

// KPARITY_TEST_SEED overrides the base seed; every tensor gets hash(base, tag, i).
inline std::uint64_t base_seed() {
  static const std::uint64_t s = [] {
    const char* e = std::getenv("KPARITY_TEST_SEED");
    return e ? std::strtoull(e, nullptr, 0) : 0x6b64615f726566ull;
  }();
  return s;
}
inline std::uint64_t seed(std::string_view tag, std::uint64_t i = 0) {
  std::uint64_t h = 1469598103934665603ull ^ base_seed();
  for (char ch : tag) h = (h ^ static_cast<unsigned char>(ch)) * 1099511628211ull;
  return (h ^ (i * 0x9e3779b97f4a7c15ull)) * 1099511628211ull;
}
inline std::string seed_note() { return "base seed " + std::to_string(base_seed()) + " (KPARITY_TEST_SEED)"; }

inline Tensor randn(DType t, Shape s, std::string_view tag, std::uint64_t i, double sd) {
  Tensor x(t, std::move(s));
  x.fill_normal(seed(tag, i), 0.0, sd);
  return x;
}
inline Tensor ints(DType t, Shape s, std::string_view tag, std::uint64_t i, std::int64_t lo, std::int64_t hi) {
  Tensor x(t, std::move(s));
  x.fill_int(seed(tag, i), lo, hi);
  return x;
}

// Visits every element of v with its multi-index.
inline void each(const TensorView& v, const std::function<void(std::span<const std::int64_t>)>& f) {
  for_each_element(v, [&](std::span<const std::int64_t> idx, std::int64_t) { f(idx); });
}
inline std::string idx_str(std::span<const std::int64_t> idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}
inline double max_abs(const TensorView& v) {
  double m = 0;
  each(v, [&](auto idx) { m = std::max(m, std::fabs(v.load(idx))); });
  return m;
}
inline bool all_finite(const TensorView& v) {
  bool ok = true;
  each(v, [&](auto idx) { ok = ok && std::isfinite(v.load(idx)); });
  return ok;
}

// |actual - expected| <= atol + rtol |expected| elementwise (testing.md 1.1); NaN never passes.
inline ::testing::AssertionResult close(const TensorView& actual, const TensorView& expected, double atol,
                                        double rtol) {
  if (actual.shape() != expected.shape()) return ::testing::AssertionFailure() << "shape mismatch";
  std::int64_t bad = 0, n = 0;
  double worst = -1, worst_a = 0, worst_e = 0;
  std::string worst_at;
  each(expected, [&](auto idx) {
    ++n;
    const double a = actual.load(idx), e = expected.load(idx), diff = std::fabs(a - e);
    const double allowed = atol + rtol * std::fabs(e);
    if (!(diff <= allowed)) {
      ++bad;
      const double excess = std::isnan(diff) ? INFINITY : diff - allowed;
      if (excess > worst) worst = excess, worst_a = a, worst_e = e, worst_at = idx_str(idx);
    }
  });
  if (bad == 0) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "Mismatched elements: " << bad << " / " << n << "; worst at " << worst_at
                                       << ": actual " << worst_a << " expected " << worst_e << " (atol " << atol
                                       << ", rtol " << rtol << "); " << seed_note();
}
// Exact value equality (testing.md 1.4: +0 == -0; NaN never equal).
inline ::testing::AssertionResult same_values(const TensorView& actual, const TensorView& expected) {
  return close(actual, expected, 0.0, 0.0);
}

// Bytes of `after`'s storage that belong to no element for which touched(idx) holds, including
// the padding between strided elements, must equal `before` (testing.md 1.6 item 4).
inline ::testing::AssertionResult bytes_unchanged_except(const std::vector<std::byte>& before, const Tensor& after,
                                                         const std::function<bool(std::span<const std::int64_t>)>& touched) {
  const auto& now = after.storage();
  if (now.size() != before.size()) return ::testing::AssertionFailure() << "storage size changed";
  std::vector<char> mask(now.size(), 0);
  const std::size_t es = dtype_size(after.dtype());
  const std::int64_t base = after.storage_offset();
  for_each_element(after.view(), [&](std::span<const std::int64_t> idx, std::int64_t off) {
    if (touched(idx))
      for (std::size_t k = 0; k < es; ++k) mask[static_cast<std::size_t>(base + off) * es + k] = 1;
  });
  for (std::size_t i = 0; i < now.size(); ++i)
    if (!mask[i] && now[i] != before[i]) return ::testing::AssertionFailure() << "byte " << i << " changed";
  return ::testing::AssertionSuccess();
}

// A slot-major pool [slots, d1, d2, d3] whose slot stride is the packed size + 257 and whose
// storage starts at an offset (spec D.1 strided case), or a compact one.
inline Tensor pool(DType t, std::int64_t slots, std::int64_t d1, std::int64_t d2, std::int64_t d3, bool strided) {
  if (!strided) return Tensor(t, {slots, d1, d2, d3});
  const std::int64_t inner = d1 * d2 * d3;
  return Tensor::strided(t, {slots, d1, d2, d3}, {inner + 257, d2 * d3, d3, 1}, 19);
}

// Decode-problem sizes and the per-call inputs both decode ops share (B.0).
struct Shape5 {
  std::int64_t B = 3, H = 2, HV = 4, K = 16, V = 16;
};

struct DecodeStep {
  Tensor mixed, a, b;
};

// Random step inputs: gaussian activations, gate logits scaled by 0.5 as upstream does (D.1).
inline DecodeStep random_step(const Shape5& s, DType act, std::string_view tag, std::uint64_t i) {
  return {randn(act, {s.B, 2 * s.H * s.K + s.HV * s.V}, std::string(tag) + ".qkv", i, 1.0),
          randn(act, {s.B, s.HV * s.K}, std::string(tag) + ".a", i, 0.5),
          randn(act, {s.B, s.HV}, std::string(tag) + ".b", i, 1.0)};
}

// Exact-arithmetic inputs (testing.md 1.4, adapted): q small integers, k with one or two entries
// of +-1 per head (so I - k k^T has eigenvalues in {0, +-1} and integer states stay small),
// v small integers, b = 40 (sigmoid is exactly 1 in fp32 and fp64), gate made 0 by lower_bound 0.
inline DecodeStep exact_step(const Shape5& s, DType act, std::string_view tag, std::uint64_t i) {
  DecodeStep st{Tensor(act, {s.B, 2 * s.H * s.K + s.HV * s.V}), randn(act, {s.B, s.HV * s.K}, tag, i, 1.0),
                Tensor(act, {s.B, s.HV})};
  st.b.fill(40.0);
  Rng r(seed(std::string(tag) + ".exact", i));
  const TensorView m = st.mixed;
  for (std::int64_t b = 0; b < s.B; ++b) {
    for (std::int64_t c = 0; c < s.H * s.K; ++c) m.store(std::vector<std::int64_t>{b, c}, static_cast<double>(r.integer(-3, 3)));
    for (std::int64_t h = 0; h < s.H; ++h) {
      const std::int64_t nnz = r.integer(1, 2);
      for (std::int64_t e = 0; e < nnz; ++e) {
        const std::int64_t c = r.integer(0, s.K - 1);
        m.store(std::vector<std::int64_t>{b, s.H * s.K + h * s.K + c}, r.integer(0, 1) ? 1.0 : -1.0);
      }
    }
    for (std::int64_t c = 0; c < s.HV * s.V; ++c)
      m.store(std::vector<std::int64_t>{b, 2 * s.H * s.K + c}, static_cast<double>(r.integer(-4, 4)));
  }
  return st;
}

inline Tensor index_tensor(const std::vector<std::int64_t>& v, DType t = DType::i32) {
  Tensor x(t, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) x.view().store_int(std::vector<std::int64_t>{static_cast<std::int64_t>(i)}, v[i]);
  return x;
}

// One packed-decode call's tensors (kda.md B.1, upstream's D.1 setup); tests set idx.
struct Packed {
  Shape5 s;
  DecodeStep in;
  Tensor A_log, dt_bias, state, out, idx;
  std::optional<double> lb;
  bool l2 = true;
  double scale = 0.25;
  Packed(Shape5 s_, const std::string& tag, DType act, DType st, std::int64_t slots, bool strided, bool exact = false)
      : s(s_) {
    in = exact ? exact_step(s, act, tag, 0) : random_step(s, act, tag, 0);
    A_log = randn(DType::f32, {s.HV}, tag + "A", 0, 0.3);
    dt_bias = randn(DType::f32, {s.HV * s.K}, tag + "dt", 0, 0.1);
    state = pool(st, slots, s.HV, s.V, s.K, strided);
    state.poison();
    state.copy_from(exact ? ints(st, {slots, s.HV, s.V, s.K}, tag + "S", 0, -4, 4)
                          : randn(st, {slots, s.HV, s.V, s.K}, tag + "S", 0, 0.01));  // D.1: randn*0.01
    out = Tensor(act, {s.B, 1, s.HV, s.V});
    out.poison();
    if (exact) lb = 0.0, l2 = false;
  }
  kparity::kda::PackedDecodeArgs args() { return args(state, out); }
  // The same call writing into other state and out tensors (an oracle's fp32 copies, say).
  kparity::kda::PackedDecodeArgs args(Tensor& st, Tensor& o) {
    return {in.mixed, in.a, in.b, A_log, dt_bias, scale, st, o, idx, l2, lb};
  }
};

// Tolerance of a faithful-vs-oracle comparison (recipe, testing.md 1.1/1.3 spirit): a length-n fp32
// dot product errs by at most gamma_n = n u / (1 - n u) times the sum of |terms| (Higham 3.5);
// each of `steps` recurrent steps chains three such dots of length K (predict, readout) or V
// plus a few ulp of exp/log/sqrt, so rel <= 4 * steps * (K + V) * u32 of the magnitudes involved,
// which we bound by max|ref|. Two nearby values stored in a 16-bit dtype may land one ulp apart:
// at most 2^-7 relative for bf16 (8 significand bits), 2^-10 for f16 (11 bits).
struct Tol {
  double atol, rtol;
};
inline Tol faithful_tol(int steps, std::int64_t K, std::int64_t V, double ref_max, DType stored) {
  const double u32 = std::ldexp(1.0, -24);
  const double rel = 4.0 * steps * static_cast<double>(K + V) * u32;
  const double store = stored == DType::bf16 ? std::ldexp(1.0, -7) : stored == DType::f16 ? std::ldexp(1.0, -10) : 0.0;
  return {rel * ref_max, rel + store};
}

}  // namespace kdatest
