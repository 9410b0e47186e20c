// sparse/paged_prefill kernel vs the reference (spec sparse_attention.md G.2, testing guide 1.3-1.6).
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <string>

#include "gpu_case.hpp"

namespace kpt {
namespace {

using kparity::kernels::sparse::SparseTuning;

std::string label(const Case& c, std::uint64_t seed) {
  return std::string(dtype_name(c.dt)) + " T=" + std::to_string(c.T) + " H=" + std::to_string(c.H) +
         " D=" + std::to_string(c.D) + " seed=" + std::to_string(seed) +
         " (repro: --gtest_filter=" + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ")";
}

// Numeric check of one case: AP-S1's upstream bar (2e-2 vs the oracle, with the sink) and the
// tighter recipe-1.3 bound made explicit (F = 2): the kernel has faithful mode's rounding points
// (fp32 dots, weights rounded to the storage dtype for P.V only, fp32 sums), only in another order,
// so the per-element error analysis behind faithful_out_bound covers it.
void expect_matches_oracle(const Case& c, const Result& ker, const char* what) {
  SCOPED_TRACE(what);
  const Expect e = closed_form(c);
  const Result ora = run_prefill(c, Precision::oracle);
  EXPECT_TRUE(within(ker.out, ora.out, uniform_bound(ora.out.size(), 2e-2, ora.out, 2e-2))) << "AP-S1 out";
  EXPECT_TRUE(within(ker.out, e.out, faithful_out_bound(e, c.dt))) << "recipe bound out";
  if (!ker.lse.empty()) {
    EXPECT_TRUE(within(ker.lse, e.lse, faithful_lse_bound(e))) << "recipe bound lse";
  }
  EXPECT_GT(norm1(ker.out), 0.0) << "the kernel wrote nothing";
}

// Two kernel runs that are each within the recipe bound of the exact result (faithful_out_bound /
// faithful_lse_bound, F = 2: the tensor cores truncate aligned significands, up to twice the
// rounding error of the faithful order) are within the sum of those bounds of each other: that sum
// is the derived tolerance for kernel-vs-kernel comparisons (AP-S7), in place of the former 1e-2
// absolute and relative on out and lse. Its terms: the weights rounded to the storage dtype (u A,
// A = sum_j p_j |K_j[d]|), logit errors (gamma_D sum|q k| scale, through the softmax) and the fp32
// accumulations. On the HeadTileIndependence calls (bf16, D = 128 / 200 / 512; computed on the
// host): lse 2.3e-4 to 2.2e-3, against 1e-2 + 1e-2 |lse| ~ 5e-2 before (25 to 200x tighter); out
// 5e-3 to 7e-2, median 1.5e-2 to 1.8e-2, looser than the spec's AP-S7 bar of 1e-2, because the
// worst case lets every weight's bf16 rounding flip. So the spec's number stays as an absolute bar
// on both, and binds on out.
void expect_agree(const Result& a, const Result& b, const Expect& e, DType dt, const std::string& what) {
  const auto bo = faithful_out_bound(e, dt), bl = faithful_lse_bound(e);
  std::vector<double> out2(bo.size()), lse2(bl.size());
  for (std::size_t i = 0; i < bo.size(); ++i) out2[i] = 2 * bo[i];
  for (std::size_t i = 0; i < bl.size(); ++i) lse2[i] = 2 * bl[i];
  EXPECT_TRUE(within(a.out, b.out, out2)) << what << ": out outside the sum of the two recipe bounds";
  EXPECT_TRUE(within(a.lse, b.lse, lse2)) << what << ": lse outside the sum of the two recipe bounds";
  EXPECT_TRUE(within(a.out, b.out, uniform_bound(b.out.size(), 1e-2, b.out, 0.0))) << what << ": AP-S7 (out, 1e-2)";
  EXPECT_TRUE(within(a.lse, b.lse, uniform_bound(b.lse.size(), 1e-2, b.lse, 0.0))) << what << ": AP-S7 (lse, 1e-2)";
}

TEST(GpuSparsePrefill, RequiresCudaTensorsSeedFiresWithoutLaunch) {
  // Runs on hosts without a GPU too: the contract refuses host q before anything touches CUDA.
  Case c = random_case(1, {.T = 2, .H = 4, .D = 16});
  Csr pre = make_csr(c.pre), ext = make_csr(c.ext);
  Tensor out(c.dt, {c.T, c.H, c.D});
  kparity::sparse::PagedPrefillArgs a;
  a.q = c.q;
  a.unified_kv = c.ukv;
  a.kv = c.kv;
  a.kv_indices_prefix = pre.indices;
  a.kv_indptr_prefix = pre.indptr;
  a.kv_indices_extend = ext.indices;
  a.kv_indptr_extend = ext.indptr;
  a.attn_sink = c.sink;
  a.softmax_scale = c.scale;
  a.out = out;
  const kparity::Status s = kparity::kernels::sparse::paged_prefill(a, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.first_error()->id, "5d9da259c68eb6c4");
  EXPECT_EQ(s.first_error()->message, "Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors");
}

TEST(GpuSparsePrefill, RandomShapesMatchOracle) {
  KPARITY_REQUIRE_GPU();
  struct Shape { DType dt; std::int64_t T, H, D, pre, ext; };
  // H covers {1, 16, 48, 64, 128} (48 and 1: head-tail masks), D {64, 128, 512} plus odd D (tails
  // and the element-load path); T up to 4096 with short lists so the fp64 oracle stays cheap.
  const Shape shapes[] = {
      {DType::bf16, 3, 64, 512, 100, 20}, {DType::f16, 3, 64, 512, 100, 20}, {DType::bf16, 2, 128, 512, 70, 10},
      {DType::bf16, 5, 48, 128, 40, 16},  {DType::f16, 4, 16, 128, 80, 8},   {DType::bf16, 7, 1, 64, 50, 5},
      {DType::f16, 6, 48, 64, 33, 33},    {DType::bf16, 4, 16, 512, 64, 16}, {DType::bf16, 3, 5, 24, 20, 6},
      {DType::f16, 3, 20, 200, 45, 7},    {DType::bf16, 4096, 1, 64, 12, 4}, {DType::bf16, 512, 16, 64, 20, 4},
  };
  std::uint64_t seed = 1000;
  for (const Shape& s : shapes) {
    ++seed;
    Case c = random_case(seed, {.dt = s.dt, .T = s.T, .H = s.H, .D = s.D, .P = 300, .Ne = 40, .max_pre = s.pre,
                                .max_ext = s.ext, .sentinel_rate = 0.15});
    SCOPED_TRACE(label(c, seed));
    expect_matches_oracle(c, run_prefill_gpu(c), "random");
  }
}

TEST(GpuSparsePrefill, ShiftAndLongListsMatchOracle) {
  KPARITY_REQUIRE_GPU();
  // 640 keys per token like V4's c4 layers, a DCP-style shift, sink ~ N(0.5, 0.4).
  Case c = random_case(77, {.dt = DType::bf16, .T = 2, .H = 64, .D = 512, .P = 4096, .Ne = 256, .max_pre = 512,
                            .max_ext = 128, .sentinel_rate = 0.05, .shift = -std::log(8.0)});
  SCOPED_TRACE(label(c, 77));
  expect_matches_oracle(c, run_prefill_gpu(c), "shift");
}

TEST(GpuSparsePrefill, WgmmaAndMmaSyncKernelsAgree) {
  KPARITY_REQUIRE_GPU();
  // The wgmma kernel (picked automatically for D in (256, 512] with 64-head tiles and 16-byte rows;
  // variant 2 by name) and the mma.sync kernel (variant 1): each within the recipe bound of
  // the oracle, and within the sum of the two bounds of each other (expect_agree). Lists up to 640 keys (ten 64-row tiles) with partial last tiles, sentinels, the
  // shift, fp16, head tails (H = 100, 48) and a D tail (264: zero-filled chunks past D).
  struct Shape { DType dt; std::int64_t T, H, D, pre, ext; double shift; };
  const Shape shapes[] = {{DType::bf16, 3, 64, 512, 512, 128, -std::log(4.0)},
                          {DType::f16, 2, 128, 512, 300, 77, 0.0},
                          {DType::bf16, 4, 100, 512, 130, 3, 0.5},
                          {DType::bf16, 3, 48, 264, 200, 40, 0.0}};
  std::uint64_t seed = 900;
  for (const Shape& s : shapes) {
    ++seed;
    Case c = random_case(seed, {.dt = s.dt, .T = s.T, .H = s.H, .D = s.D, .P = 2048, .Ne = 256, .max_pre = s.pre,
                                .max_ext = s.ext, .sentinel_rate = 0.05, .shift = s.shift});
    SCOPED_TRACE(label(c, seed));
    const Expect e = closed_form(c);
    const Result b = run_prefill_gpu(c, SparseTuning{.variant = 1});
    expect_matches_oracle(c, b, "mma.sync");
    for (int v : {0, 2}) {  // auto, and the wgmma kernel by name
      // KPARITY_AGREE_VARIANTS="2" runs only the variants named (a sanitizer run on one kernel).
      if (const char* only = std::getenv("KPARITY_AGREE_VARIANTS"); only != nullptr && std::strchr(only, '0' + v) == nullptr)
        continue;
      SCOPED_TRACE("variant " + std::to_string(v));
      const Result a = run_prefill_gpu(c, SparseTuning{.variant = v});
      expect_matches_oracle(c, a, "wgmma");
      expect_agree(a, b, e, c.dt, "wgmma vs mma.sync");
    }
  }
}

TEST(GpuSparsePrefill, DuplicatesCountWithMultiplicity) {
  KPARITY_REQUIRE_GPU();
  // A 6-row pool and 60-entry lists: every row repeats about ten times (AP-S5).
  Case c = random_case(5, {.dt = DType::f16, .T = 4, .H = 16, .D = 128, .P = 6, .Ne = 3, .max_pre = 60,
                           .max_ext = 20, .sentinel_rate = 0.1});
  SCOPED_TRACE(label(c, 5));
  expect_matches_oracle(c, run_prefill_gpu(c), "duplicates");
}

TEST(GpuSparsePrefill, DegenerateRowsAreExact) {
  KPARITY_REQUIRE_GPU();
  // AP-S2/AP-S3: empty spans, all-sentinel lists, decreasing pointers (token 3: see below),
  // sinks +inf / -inf / finite.
  Case c = random_case(9, {.dt = DType::bf16, .T = 4, .H = 3, .D = 64, .P = 10, .Ne = 4, .max_pre = 5, .max_ext = 2});
  c.pre = {{}, {-1, -5, -2147483648LL}, {}, {1, 2}};
  c.ext = {{}, {-3}, {-1, -1}, {}};
  c.sink.view().store_flat(0, 0.75);
  c.sink.view().store_flat(1, kInf);
  c.sink.view().store_flat(2, -kInf);
  const Result r = run_prefill_gpu(c);
  for (std::int64_t t = 0; t < 3; ++t)
    for (std::int64_t h = 0; h < 3; ++h) {
      for (std::int64_t d = 0; d < c.D; ++d) ASSERT_EQ(r.out[(t * 3 + h) * c.D + d], 0.0) << t << "," << h;
      const double want = h == 0 ? 0.75 : -kInf;  // lse = sigma, or -inf when Z = 0 or sink = +inf
      EXPECT_EQ(r.lse[t * 3 + h], want) << t << "," << h;
    }
  // Token 3 has keys: +inf sink -> exact zeros and lse -inf; the others within tolerance.
  for (std::int64_t d = 0; d < c.D; ++d) EXPECT_EQ(r.out[(3 * 3 + 1) * c.D + d], 0.0);
  EXPECT_EQ(r.lse[3 * 3 + 1], -kInf);
  expect_matches_oracle(c, r, "degenerate");
}

TEST(GpuSparsePrefill, ExactRecipes) {
  KPARITY_REQUIRE_GPU();
  // Testing guide 1.4: inputs on which every intermediate is exact, so the output is bit-exact.
  Case c = random_case(11, {.dt = DType::bf16, .T = 3, .H = 17, .D = 96, .P = 8, .Ne = 4, .max_pre = 1, .max_ext = 1});
  c.q.fill(0.0);  // all logits 0: weights 1
  c.ukv.fill_int(12, -16, 16);
  c.kv.fill_int(13, -16, 16);
  for (std::int64_t i = 0; i < c.ukv.numel(); ++i) c.ukv.view().store_flat(i, 4.0 * c.ukv.view().load_flat(i));
  c.sink.fill(-kInf);
  // token 0: one key -> that row; token 1: 4 keys (one duplicated) -> their mean;
  // token 2: 3 keys + sink 0 (set on heads >= 8 below) -> sum / 4.
  c.pre = {{5}, {1, 3, 3}, {2, 7}};
  c.ext = {{}, {0}, {1}};
  for (std::int64_t h = 8; h < 17; ++h) c.sink.view().store_flat(h, 0.0);
  const Result r = run_prefill_gpu(c);
  auto u = [&](std::int64_t i, std::int64_t d) { return c.ukv.view().at({i, d}); };
  auto k = [&](std::int64_t i, std::int64_t d) { return c.kv.view().at({i, d}); };
  // Rows are multiples of 4 (ukv) or small integers (kv): sums and their quarters/halves have at
  // most 8 significant bits, so they are exact in fp32 and in bf16.
  for (std::int64_t h = 0; h < 17; ++h)
    for (std::int64_t d = 0; d < c.D; ++d) {
      EXPECT_EQ(r.out[(0 * 17 + h) * c.D + d], h < 8 ? u(5, d) : u(5, d) / 2) << "single key h=" << h;
      if (h < 8) {
        EXPECT_EQ(r.out[(1 * 17 + h) * c.D + d], (u(1, d) + 2 * u(3, d) + k(0, d)) / 4) << "mean h=" << h;
      } else {
        EXPECT_EQ(r.out[(2 * 17 + h) * c.D + d], (u(2, d) + u(7, d) + k(1, d)) / 4) << "sink h=" << h;
      }
    }
}

TEST(GpuSparsePrefill, UnselectedNaNRowsHaveNoEffect) {
  KPARITY_REQUIRE_GPU();
  // AP-S6: rows that are never selected, or named only by negative entries, are never read.
  Case c = random_case(21, {.dt = DType::bf16, .T = 3, .H = 16, .D = 128, .P = 64, .Ne = 16, .max_pre = 30,
                            .max_ext = 6, .sentinel_rate = 0.2});
  for (auto& l : c.pre)
    for (auto& v : l)
      if (v >= 32) v = v % 32;
  const Result clean = run_prefill_gpu(c);
  for (std::int64_t i = 32 * c.D; i < c.ukv.numel(); ++i) c.ukv.view().store_flat(i, std::nan(""));
  const Result dirty = run_prefill_gpu(c);
  EXPECT_TRUE(identical(dirty.out, clean.out));
  EXPECT_TRUE(identical(dirty.lse, clean.lse));
}

// Upstream's convention (docs/upstream_conventions.md, measured on the H200 against sglang's
// paged_prefill.py): a NaN logit, a NaN sink or a +inf logit reaches only the denominator and the
// Z > 0 test fails: the head is exact +0 with lse -inf. kernels/sparse/softmax.cuh finalize().
void expect_zero_head(const Result& r, std::int64_t t, std::int64_t h, std::int64_t H, std::int64_t D) {
  for (std::int64_t d = 0; d < D; ++d) {
    EXPECT_EQ(r.out[(t * H + h) * D + d], 0.0) << "t=" << t << " h=" << h << " d=" << d;
    EXPECT_FALSE(std::signbit(r.out[(t * H + h) * D + d])) << "t=" << t << " h=" << h << " d=" << d;
  }
  EXPECT_EQ(r.lse[t * H + h], -kInf) << "t=" << t << " h=" << h;
}

TEST(GpuSparsePrefill, NaNInSelectedRowGivesTheZeroHead) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(23, {.dt = DType::f16, .T = 2, .H = 4, .D = 64, .P = 8, .Ne = 2, .max_pre = 4, .max_ext = 1});
  c.pre = {{3}, {4}};
  c.ext = {{}, {}};
  c.ukv.view().store(std::array<std::int64_t, 2>{3, 10}, std::nan(""));
  kparity::Status s;
  run_prefill_gpu(c, {}, {}, true, &s);
  EXPECT_FALSE(s.ok());  // deep check O13 refuses it before the launch
  const Result r = run_prefill_gpu(c, {}, {}, true, nullptr, /*deep=*/false);
  for (std::int64_t h = 0; h < 4; ++h) expect_zero_head(r, 0, h, 4, c.D);
  EXPECT_FALSE(std::isnan(r.out[4 * c.D]));
  EXPECT_TRUE(std::isfinite(r.lse[4]));
}

// Against the reference, bit for bit in class: a NaN in q (one head), a NaN sink, a +inf logit (an
// +inf value against q_d = 1) give zero heads; a -inf value against q_d = 1 (logit -inf, weight 0)
// gives NaN only in its column while another key keeps Z > 0. 17 heads: two head tiles.
TEST(GpuSparsePrefill, SpecialValuesFollowUpstreamsFinalisation) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(24, {.dt = DType::bf16, .T = 4, .H = 17, .D = 64, .P = 8, .Ne = 2, .max_pre = 4, .max_ext = 1});
  c.pre = {{0, 1}, {2, 3}, {4, 5}, {6}};
  c.ext = {{}, {}, {}, {}};
  for (std::int64_t h = 0; h < c.H; ++h) c.sink.view().store_flat(h, 0.5);
  c.sink.view().store_flat(16, std::nan(""));                            // head 16, every token
  c.q.view().store(std::array<std::int64_t, 3>{0, 3, 7}, std::nan(""));  // token 0, head 3
  for (std::int64_t h = 0; h < c.H; ++h)
    for (std::int64_t t : {1, 2}) c.q.view().store(std::array<std::int64_t, 3>{t, h, 9}, 1.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{2, 9}, kInf);   // token 1: logit +inf, every head
  c.ukv.view().store(std::array<std::int64_t, 2>{4, 9}, -kInf);  // token 2: logit -inf, column 9 NaN
  const Result r = run_prefill_gpu(c, {}, {}, true, nullptr, /*deep=*/false);
  for (std::int64_t t = 0; t < 4; ++t) expect_zero_head(r, t, 16, c.H, c.D);
  expect_zero_head(r, 0, 3, c.H, c.D);
  for (std::int64_t h = 0; h < c.H; ++h) expect_zero_head(r, 1, h, c.H, c.D);
  for (std::int64_t h = 0; h < 16; ++h) {
    for (std::int64_t d = 0; d < c.D; ++d)
      EXPECT_EQ(std::isnan(r.out[(2 * c.H + h) * c.D + d]), d == 9) << "h=" << h << " d=" << d;
    EXPECT_TRUE(std::isfinite(r.lse[2 * c.H + h])) << h;
    if (h != 3) EXPECT_TRUE(std::isfinite(r.lse[0 * c.H + h])) << h;
    EXPECT_TRUE(std::isfinite(r.lse[3 * c.H + h])) << h;
  }
  // The reference (upstream's rule) agrees on every element's class.
  const Result o = run_prefill(c, Precision::oracle, {}, shallow());
  for (std::size_t i = 0; i < o.out.size(); ++i) {
    EXPECT_EQ(std::isnan(r.out[i]), std::isnan(o.out[i])) << i;
    if (o.lse[i / c.D] == -kInf) EXPECT_EQ(r.out[i], 0.0) << i;  // a zero head: exact +0
  }
  for (std::size_t i = 0; i < o.lse.size(); ++i) EXPECT_EQ(o.lse[i] == -kInf, r.lse[i] == -kInf) << i;
}

TEST(GpuSparsePrefill, StridedViewsEqualCompact) {
  KPARITY_REQUIRE_GPU();
  // AP-S8: padded q heads, padded KV rows (16-byte path), a column-strided kv (element path) and a
  // padded out give the same values as compact tensors: same kernel configuration, exact.
  Case c = random_case(31, {.dt = DType::bf16, .T = 5, .H = 20, .D = 128, .P = 50, .Ne = 12, .max_pre = 40,
                            .max_ext = 8});
  const Result base = run_prefill_gpu(c);
  Tensor q = Tensor::strided(c.dt, {c.T, c.H, c.D}, {c.H * 136 + 8, 136, 1}, 8);
  q.copy_from(c.q);
  Tensor ukv = Tensor::strided(c.dt, {50, c.D}, {c.D + 64, 1}, 24);
  ukv.copy_from(c.ukv);
  Tensor kv = Tensor::strided(c.dt, {12, c.D}, {2 * c.D + 2, 2}, 3);
  kv.copy_from(c.kv);
  Tensor out = Tensor::strided(c.dt, {c.T, c.H, c.D}, {c.H * c.D * 2, c.D * 2, 2}, 1);
  out.poison();
  const Result s = run_prefill_gpu(c, {}, {.q = &q, .ukv = &ukv, .kv = &kv, .out = &out});
  EXPECT_TRUE(identical(s.out, base.out));
  EXPECT_TRUE(identical(s.lse, base.lse));
}

TEST(GpuSparsePrefill, HeadTileIndependence) {
  KPARITY_REQUIRE_GPU();
  // AP-S7: the 16-head and 64-head tiles sum S's D-slices in different groupings only: each within
  // the recipe bound of the exact result, hence within the sum of the bounds of each other.
  for (std::int64_t D : {128, 200, 512}) {
    Case c = random_case(41 + D, {.dt = DType::bf16, .T = 3, .H = 48, .D = D, .P = 200, .Ne = 20, .max_pre = 90,
                                  .max_ext = 10});
    SCOPED_TRACE(label(c, 41 + D));
    const Result a = run_prefill_gpu(c, SparseTuning{.head_tile = 16});
    const Result b = run_prefill_gpu(c, SparseTuning{.head_tile = 64});
    expect_matches_oracle(c, a, "16-head tile");
    expect_matches_oracle(c, b, "64-head tile");
    expect_agree(a, b, closed_form(c), c.dt, "16- vs 64-head tiles");
  }
}

// AP-S4's recipe for the merged result against the unsharded one. Shard r's kernel run is within
// (Bo_r, Bl_r) of its exact (out_r, lse_r) (the recipe bounds of its closed form). The fp64 merge
// lse = M + ln sum_r exp(lse_r - M) is a weighted mean of the shard lse errors, so it moves by at most
// max_r Bl_r; each weight w_r = exp(lse_r - lse) by at most w_r (Bl_r + max_r Bl_r) (first order,
// x 1.01 for e^x - 1 - x at x <= 1e-2); out = sum_r w_r out_r by at most
// sum_r w_r (Bo_r + (Bl_r + max Bl) |out_r|). The unsharded kernel run adds its own bounds; the fp64
// merge itself rounds at 1e-16 relative. On the calls below (bf16, D = 512; computed on the host):
// lse 1.8e-3 to 2.1e-3 against 3e-3 + 3e-3 |lse| ~ 1.3e-2 before (the relative part had no
// derivation); out 5e-4 to 0.15, median 2e-2 to 2.3e-2, against a median 3.8e-2 before. AP-S4's
// numbers (out 3e-2, lse 3e-3) stay as the absolute bars the spec states.
struct Merged {
  std::vector<double> out, lse, out_bound, lse_bound;
};

Merged merge_with_bound(const std::vector<Result>& parts, const std::vector<Expect>& exact_parts, const Expect& full,
                        DType dt) {
  const std::size_t TH = full.lse.size(), D = full.out.size() / TH;
  Merged m{std::vector<double>(TH * D, 0.0), std::vector<double>(TH), std::vector<double>(TH * D, 0.0),
           std::vector<double>(TH, 0.0)};
  std::vector<std::vector<double>> bo, bl;
  for (const auto& e : exact_parts) {
    bo.push_back(faithful_out_bound(e, dt));
    bl.push_back(faithful_lse_bound(e));
  }
  const auto bo_full = faithful_out_bound(full, dt);
  const auto bl_full = faithful_lse_bound(full);
  for (std::size_t th = 0; th < TH; ++th) {
    double M = -kInf, W = 0, maxbl = 0;
    for (std::size_t r = 0; r < parts.size(); ++r) {
      M = std::max(M, parts[r].lse[th]);
      maxbl = std::max(maxbl, bl[r][th]);
    }
    for (const auto& p : parts) W += std::exp(p.lse[th] - M);
    m.lse[th] = M + std::log(W);
    m.lse_bound[th] = maxbl + bl_full[th];
    for (std::size_t r = 0; r < parts.size(); ++r) {
      const double w = std::exp(parts[r].lse[th] - M) / W;
      const double w_exact = std::exp(exact_parts[r].lse[th] - full.lse[th]);
      for (std::size_t d = 0; d < D; ++d) {
        const std::size_t i = th * D + d;
        m.out[i] += w * parts[r].out[i];
        m.out_bound[i] += w_exact * (bo[r][i] + 1.01 * (bl[r][th] + maxbl) * std::fabs(exact_parts[r].out[i]));
      }
    }
    for (std::size_t d = 0; d < D; ++d) m.out_bound[th * D + d] += bo_full[th * D + d];
  }
  return m;
}

TEST(GpuSparsePrefill, DcpMergeReproducesFullCall) {
  KPARITY_REQUIRE_GPU();
  // AP-S4: shard prefix entries over r ranks with shift -ln r, LSE-merge in fp64.
  for (std::int64_t ranks : {2, 8}) {
    Case full = random_case(50 + ranks, {.dt = DType::bf16, .T = 2, .H = 16, .D = 512, .P = 256, .Ne = 16,
                                         .max_pre = 40, .max_ext = 6, .sentinel_rate = 0.1});
    full.pre[0].resize(23, 5);
    full.pre[1].resize(17, 9);
    full.ext[0].resize(5, 1);
    full.ext[1].resize(3, 2);
    const Result ref = run_prefill_gpu(full);
    std::vector<Result> parts;
    std::vector<Expect> exact_parts;
    for (std::int64_t r = 0; r < ranks; ++r) {
      Case c = full;
      c.shift = -std::log(static_cast<double>(ranks));
      for (auto& l : c.pre)
        for (auto& v : l)
          if (v >= 0 && v % ranks != r) v = -1;
      parts.push_back(run_prefill_gpu(c));
      exact_parts.push_back(closed_form(c));
    }
    const Merged m = merge_with_bound(parts, exact_parts, closed_form(full), full.dt);
    EXPECT_TRUE(within(m.out, ref.out, m.out_bound)) << "ranks " << ranks << ": out outside the AP-S4 recipe";
    EXPECT_TRUE(within(m.lse, ref.lse, m.lse_bound)) << "ranks " << ranks << ": lse outside the AP-S4 recipe";
    EXPECT_TRUE(within(m.out, ref.out, uniform_bound(m.out.size(), 3e-2, ref.out, 0.0))) << "ranks " << ranks << ": AP-S4 out";
    EXPECT_TRUE(within(m.lse, ref.lse, uniform_bound(m.lse.size(), 3e-3, ref.lse, 0.0))) << "ranks " << ranks << ": AP-S4 lse";
  }
}

TEST(GpuSparsePrefill, ZeroTokensAndNoLse) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(61, {.dt = DType::bf16, .T = 0, .H = 8, .D = 64});
  kparity::Status s;
  run_prefill_gpu(c, {}, {}, true, &s);
  EXPECT_TRUE(s.ok());  // AP-S10: empty grid, no launch error
  Case d = random_case(62, {.dt = DType::f16, .T = 3, .H = 8, .D = 64, .max_pre = 10});
  const Result a = run_prefill_gpu(d, {}, {}, false);
  const Result b = run_prefill_gpu(d);
  EXPECT_TRUE(identical(a.out, b.out));
}

TEST(GpuSparsePrefill, DeepCheckReportsOutOfRangeIndex) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(71, {.dt = DType::bf16, .T = 2, .H = 4, .D = 64, .P = 10, .max_pre = 3});
  c.pre[1] = {1, 10};  // row 10 of a 10-row pool: O8, caught on the host mirror before any launch
  kparity::Status s;
  run_prefill_gpu(c, {}, {}, true, &s);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.first_error()->message.find("out of range"), std::string::npos) << s.first_error()->message;
}

}  // namespace
}  // namespace kpt
