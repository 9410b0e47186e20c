#pragma once
// Decode runs shared by the split-K and small-T decode tests: one call through the caller's tuning
// and LaunchOptions::decode_variant, eagerly or captured in a CUDA graph and replayed, with the
// workspace and outputs poisoned; V4's serving shape; bitwise comparison.
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>

#include "gpu_case.hpp"

namespace kpt {

using kparity::kernels::sparse::SparseTuning;

inline bool bits_equal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;  // NaN == NaN here, -0 != +0
  return true;
}

// One decode through the caller's options, eagerly or as a captured CUDA graph replayed `replays`
// times (the output poisoned before the replays, so they must write it); workspace poisoned.
struct DecodeRun {
  SparseTuning tu;
  int variant = 1;
  bool graph = false;
  int replays = 2;
  bool deep = true;
  bool workspace = true;  // false: no workspace (the single-pass fallback)
};
inline Result run_decode_with(const Case& c, const DecodeRun& r) {
  DecodeDev dev(c);
  const kparity::sparse::PagedDecodeArgs& a = dev.a;
  kparity::kernels::sparse::DecodeWorkspace ws;
  ws.bytes = r.workspace ? kparity::kernels::sparse::paged_decode_workspace_bytes(a, r.tu) : 0;
  void* wmem = nullptr;
  if (ws.bytes) {
    EXPECT_EQ(cudaMalloc(&wmem, ws.bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(wmem, 0xff, ws.bytes), cudaSuccess);  // every partial the combine reads is written
    ws.data = wmem;
  }
  kparity::kernels::LaunchOptions o = test_launch(r.deep);
  o.decode_variant = r.variant;
  if (!r.graph) {
    const kparity::Status s = kparity::kernels::sparse::paged_decode(a, nullptr, o, ws, r.tu);
    EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  } else {
    o.validate = ValidateOptions::upstream();  // capturable: no deep pass (host copies), no sync
    o.sync_after_launch = false;
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    cudaGraph_t g = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const kparity::Status s = kparity::kernels::sparse::paged_decode(a, stream, o, ws, r.tu);
    EXPECT_EQ(cudaStreamEndCapture(stream, &g), cudaSuccess);
    EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
    cudaGraphExec_t x = nullptr;
    EXPECT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    dev.dout.poison();  // nothing ran at capture: the replays must write every element
    dev.dlse.poison();
    for (int i = 0; i < r.replays; ++i) EXPECT_EQ(cudaGraphLaunch(x, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(stream);
  }
  if (wmem) cudaFree(wmem);
  return dev.download();
}

// V4's decode shape: D = 512, `keys` rows of a large pool per token, one token's list shorter.
inline Case serving_case(std::uint64_t seed, std::int64_t T, std::int64_t H, std::int64_t keys) {
  Case c = random_case(seed, {.dt = DType::bf16, .T = T, .H = H, .D = 512, .P = 8192, .Ne = 0, .max_pre = keys,
                              .max_ext = 0, .sentinel_rate = 0.0});
  Rng rng(seed);
  for (std::int64_t t = 0; t < T; ++t) {
    c.pre[t].resize(t == T - 1 && T > 1 ? keys - 37 : keys);
    for (auto& v : c.pre[t]) v = rng.integer(0, 8191);
  }
  return c;
}

// Decode lists hold valid rows only (F.0 item 2): no sentinels.
inline Case decode_case(std::uint64_t seed, DType dt, std::int64_t T, std::int64_t H, std::int64_t D, std::int64_t keys) {
  Case c = random_case(seed, {.dt = dt, .T = T, .H = H, .D = D, .P = 4096, .Ne = 0, .max_pre = keys, .max_ext = 0,
                              .sentinel_rate = 0.0});
  for (std::int64_t t = 0; t < T; ++t) c.pre[t].resize(keys - (t % 3) * 7, 11);  // uneven lengths
  if (T > 2) c.pre[1].clear();                                                   // an empty span
  return c;
}

// decode_test.cpp's special-value case: T = 4, H = 20, D = 512, 16 disjoint rows per token (a poisoned
// row reaches one token only); sink 0.25, NaN at head 19 (every token); NaN in q at token 0 head 5;
// a NaN row of token 1 (all its heads); a +inf logit in token 2 (q_33 = 1 against +inf) and a -inf
// logit in token 3 (its column 33 NaN, the rest finite).
inline Case special_values_case() {
  Case c = random_case(402, {.dt = DType::bf16, .T = 4, .H = 20, .D = 512, .P = 64, .Ne = 0, .max_pre = 40,
                             .max_ext = 0, .sentinel_rate = 0.0});
  for (std::int64_t t = 0; t < 4; ++t) {
    c.pre[t].clear();
    for (std::int64_t j = 0; j < 16; ++j) c.pre[t].push_back(t * 16 + j);
  }
  for (std::int64_t h = 0; h < c.H; ++h) c.sink.view().store_flat(h, 0.25);
  c.sink.view().store_flat(19, std::nan(""));
  c.q.view().store(std::array<std::int64_t, 3>{0, 5, 17}, std::nan(""));
  c.ukv.view().store(std::array<std::int64_t, 2>{1 * 16 + 3, 40}, std::nan(""));
  for (std::int64_t h = 0; h < c.H; ++h)
    for (std::int64_t t : {2, 3}) c.q.view().store(std::array<std::int64_t, 3>{t, h, 33}, 1.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{2 * 16 + 7, 33}, kInf);
  c.ukv.view().store(std::array<std::int64_t, 2>{3 * 16 + 9, 33}, -kInf);
  return c;
}

// A kernel's result against the reference's class by class: NaN exactly where the reference has NaN,
// exact +0 on the reference's zero heads (lse -inf), lse -inf on the same heads.
inline void expect_special_classes(const Result& r, const Result& o, std::int64_t D) {
  for (std::size_t i = 0; i < o.out.size(); ++i) {
    EXPECT_EQ(std::isnan(r.out[i]), std::isnan(o.out[i])) << i;
    if (o.lse[i / D] == -kInf) {
      EXPECT_EQ(r.out[i], 0.0) << i;
      EXPECT_FALSE(std::signbit(r.out[i])) << i;
    }
  }
  for (std::size_t i = 0; i < o.lse.size(); ++i) EXPECT_EQ(r.lse[i] == -kInf, o.lse[i] == -kInf) << i;
}

// Token 0 (a NaN row among its keys) all exact +0 with lse -inf; the tokens `rest` within the bounds
// ob / lb of the closed form e (computed before the NaN was stored).
inline void expect_token0_zero_rest_within(const Result& r, const Case& c, const Expect& e, const std::vector<double>& ob,
                                           const std::vector<double>& lb, std::initializer_list<std::int64_t> rest) {
  for (std::int64_t h = 0; h < c.H; ++h) {
    EXPECT_EQ(r.lse[h], -kInf) << h;
    for (std::int64_t d = 0; d < c.D; ++d) {
      EXPECT_EQ(r.out[h * c.D + d], 0.0);
      EXPECT_FALSE(std::signbit(r.out[h * c.D + d]));
    }
  }
  const auto token = [](const std::vector<double>& v, std::int64_t t, std::int64_t per) {
    return std::vector<double>(v.begin() + t * per, v.begin() + (t + 1) * per);
  };
  const std::int64_t row = c.H * c.D;
  for (std::int64_t t : rest) {
    SCOPED_TRACE("token " + std::to_string(t));
    EXPECT_TRUE(within(token(r.out, t, row), token(e.out, t, row), token(ob, t, row)));
    EXPECT_TRUE(within(token(r.lse, t, c.H), token(e.lse, t, c.H), token(lb, t, c.H)));
  }
}

// A small-T decode result against the oracle (uniform 2e-2, the split tests' bound) and the faithful
// bounds (decode_small_test.cpp, decode_cluster_test.cpp).
inline void expect_small_bounded(const Result& r, const Result& ora, const Expect& e, DType dt) {
  EXPECT_TRUE(within(r.out, ora.out, uniform_bound(ora.out.size(), 2e-2, ora.out, 2e-2)));
  EXPECT_TRUE(within(r.out, e.out, faithful_out_bound(e, dt)));
  EXPECT_TRUE(within(r.lse, e.lse, faithful_lse_bound(e)));
}

// Off the serving shape: head counts that leave a partial head group (20, 40, 200), D = 264 and 320
// (the small kernel pads D to 512), f16, empty and uneven lists.
struct OffShape {
  DType dt;
  std::int64_t T, H, D, keys;
};
inline constexpr OffShape kOffShapes[] = {{DType::bf16, 3, 20, 512, 300}, {DType::f16, 4, 40, 264, 200},
                                          {DType::bf16, 2, 200, 320, 130}, {DType::f16, 1, 64, 512, 1000}};
inline std::string off_shape_label(const OffShape& s) {
  return std::string(dtype_name(s.dt)) + " T=" + std::to_string(s.T) + " H=" + std::to_string(s.H) +
         " D=" + std::to_string(s.D);
}

// A tuning paged_decode refuses before any launch: NotImplementedError naming `name`, and the
// poisoned outputs untouched.
inline void expect_refused(const Case& c, const SparseTuning& tu, const std::string& name) {
  DecodeDev dev(c);
  const kparity::Status s = kparity::kernels::sparse::paged_decode(dev.a, nullptr, test_launch(false), {}, tu);
  ASSERT_FALSE(s.ok()) << name;
  EXPECT_EQ(s.first_error()->error_class, kparity::ErrorClass::NotImplementedError) << name;
  EXPECT_EQ(s.first_error()->argument, name);
  const Result r = dev.download();
  for (double v : r.lse) EXPECT_TRUE(std::isnan(v));
}

}  // namespace kpt
