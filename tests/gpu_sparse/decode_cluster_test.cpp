// The small-T sparse/paged_decode kernel with its splits merged inside a thread-block cluster
// (SparseTuning::decode_combine 2, decode_small_kernel.cuh dev::cluster_merge; issue 31): no
// workspace, no combine launch. Held to the oracle and the faithful bounds of decode_test.cpp like
// the combine-kernel path (the merge has the same arithmetic but for the order of the row sum's S
// terms, which the a-priori bound counts the same way), against the combine-kernel path itself
// (relative 1e-5 per element, the two differing only in that sum's order), both gathers bit-equal,
// run-to-run and graph replay bit-equal, special values and whole masked splits, and what it refuses.
#include <algorithm>
#include <cmath>
#include <string>

#include "decode_run.hpp"

namespace kpt {
namespace {

SparseTuning clustered(int hg, int splits, int gather) {
  return SparseTuning{.head_tile = hg, .kv_splits = splits, .variant = 3, .decode_gather = gather, .decode_combine = 2};
}
SparseTuning combined(int hg, int splits, int gather) {
  return SparseTuning{.head_tile = hg, .kv_splits = splits, .variant = 3, .decode_gather = gather, .decode_combine = 1};
}

std::string label(int hg, int splits, int gather) {
  return "hg=" + std::to_string(hg) + " kv_splits=" + std::to_string(splits) + " gather=" + std::to_string(gather);
}


// The two merges of the same partials: the weights and channel sums are the same operations in the
// same order; only l's S terms are added in another order (<= S ulp of l apart, S <= 16), which moves
// an output by at most that relative amount before its rounding into bf16 / f16 (2^-8 / 2^-11
// spacing): the stored values are equal or one storage ulp apart, so 1e-2 relative (a bf16 ulp is
// 2^-8 = 3.9e-3 relative at most) with an absolute floor at 1e-6 of the row's largest magnitude.
void expect_same_merge(const Result& a, const Result& b) {
  ASSERT_EQ(a.out.size(), b.out.size());
  double big = 0.0;
  for (double v : b.out) big = std::isfinite(v) ? std::max(big, std::fabs(v)) : big;
  for (std::size_t i = 0; i < a.out.size(); ++i) {
    if (std::isnan(b.out[i])) {
      EXPECT_TRUE(std::isnan(a.out[i])) << i;
      continue;
    }
    EXPECT_LE(std::fabs(a.out[i] - b.out[i]), 1e-2 * std::fabs(b.out[i]) + 1e-6 * big) << i;
  }
  for (std::size_t i = 0; i < a.lse.size(); ++i) {
    if (!std::isfinite(b.lse[i])) {
      EXPECT_EQ(std::isnan(a.lse[i]), std::isnan(b.lse[i])) << i;
      if (!std::isnan(b.lse[i])) EXPECT_EQ(a.lse[i], b.lse[i]) << i;
      continue;
    }
    EXPECT_LE(std::fabs(a.lse[i] - b.lse[i]), 1e-5 * std::max(1.0, std::fabs(b.lse[i]))) << i;
  }
}

// Serving shapes (512 keys a token, one token 37 shorter) and V4's full list (2048 keys): cluster
// sizes 2, 3 (uneven shares), 8 (portable), 16 (non-portable; half the splits find no keys at 512)
// and automatic, both head groups, both gathers.
TEST(GpuSparseDecodeCluster, BoundedEqualToTheCombineKernelAndGathersBitEqual) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 5100;
  using Shape = std::pair<std::int64_t, std::int64_t>;  // (T, keys)
  for (std::int64_t H : {64, 128})
    for (const Shape& tk : std::initializer_list<Shape>{{1, 512}, {3, 512}, {1, 2048}}) {
      const Case c = serving_case(++seed, tk.first, H, tk.second);
      const Result ora = run_decode(c, Precision::oracle);
      const Expect e = closed_form(c);
      for (int hg : {16, 32})
        for (int splits : {0, 2, 3, 8, 16}) {
          SCOPED_TRACE("T=" + std::to_string(tk.first) + " keys=" + std::to_string(tk.second) + " H=" +
                       std::to_string(H) + " " + label(hg, splits, 1));
          const Result cl = run_decode_with(c, {.tu = clustered(hg, splits, 1)});
          const Result bulk = run_decode_with(c, {.tu = clustered(hg, splits, 2)});
          expect_small_bounded(cl, ora, e, c.dt);
          EXPECT_TRUE(bits_equal(bulk.out, cl.out));
          EXPECT_TRUE(bits_equal(bulk.lse, cl.lse));
          if (splits != 0) expect_same_merge(cl, run_decode_with(c, {.tu = combined(hg, splits, 1)}));
        }
    }
}

// Partial head groups (H = 20, 40, 200), D = 264 / 320, f16, uneven and empty lists.
TEST(GpuSparseDecodeCluster, PartialGroupsNarrowRowsF16AndEmptyLists) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 5200;
  for (const OffShape& s : kOffShapes) {
    const Case c = decode_case(++seed, s.dt, s.T, s.H, s.D, s.keys);
    SCOPED_TRACE(off_shape_label(s));
    const Result ora = run_decode(c, Precision::oracle);
    const Expect e = closed_form(c);
    for (int hg : {16, 32})
      for (int splits : {0, 5, 16}) {
        SCOPED_TRACE(label(hg, splits, 2));
        expect_small_bounded(run_decode_with(c, {.tu = clustered(hg, splits, 2)}), ora, e, c.dt);
      }
  }
}

// No workspace is asked for, and none is needed: the same bits with and without one offered.
TEST(GpuSparseDecodeCluster, NeedsNoWorkspace) {
  KPARITY_REQUIRE_GPU();
  const Case c = serving_case(5300, 1, 64, 2048);
  DecodeDev dev(c);
  EXPECT_EQ(kparity::kernels::sparse::paged_decode_workspace_bytes(dev.a, clustered(16, 16, 1)), 0u);
  const Result a = run_decode_with(c, {.tu = clustered(16, 16, 1), .workspace = false});
  const Result b = run_decode_with(c, {.tu = clustered(16, 16, 1)});
  EXPECT_TRUE(bits_equal(a.out, b.out));
  EXPECT_TRUE(bits_equal(a.lse, b.lse));
}

// Run to run and captured in a graph replayed three times: the same bits (fixed split boundaries,
// fixed merge order).
TEST(GpuSparseDecodeCluster, DeterministicAndGraphReplayable) {
  KPARITY_REQUIRE_GPU();
  for (std::int64_t T : {1, 4}) {
    const Case c = serving_case(5400 + T, T, 128, 2048);
    for (int splits : {0, 8, 16}) {
      SCOPED_TRACE("T=" + std::to_string(T) + " kv_splits=" + std::to_string(splits));
      const Result a = run_decode_with(c, {.tu = clustered(0, splits, 2)});
      const Result b = run_decode_with(c, {.tu = clustered(0, splits, 2)});
      const Result g = run_decode_with(c, {.tu = clustered(0, splits, 2), .graph = true, .replays = 3});
      EXPECT_TRUE(bits_equal(a.out, b.out));
      EXPECT_TRUE(bits_equal(a.lse, b.lse));
      EXPECT_TRUE(bits_equal(a.out, g.out));
      EXPECT_TRUE(bits_equal(a.lse, g.lse));
    }
  }
}

// A NaN row in split 2 of token 0 (every head of token 0 zero), token 1's split 1 all -1 entries
// (a member with m = -FLT_MAX, l = 0), token 2's split 3 half masked; upstream's special values.
TEST(GpuSparseDecodeCluster, SpecialsAndMaskedSplits) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(5500, {.dt = DType::bf16, .T = 4, .H = 64, .D = 512, .P = 1400, .Ne = 0, .max_pre = 256,
                              .max_ext = 0, .sentinel_rate = 0.0});
  for (std::int64_t t = 0; t < 4; ++t) {
    c.pre[t].clear();
    for (std::int64_t j = 0; j < 256; ++j) c.pre[t].push_back(t * 300 + j);
  }
  for (std::int64_t j = 64; j < 128; ++j) c.pre[1][j] = -1;
  for (std::int64_t j = 192; j < 256; j += 2) c.pre[2][j] = -1;
  const Expect e = closed_form(c);
  const std::vector<double> ob = faithful_out_bound(e, c.dt), lb = faithful_lse_bound(e);
  c.ukv.view().store(std::array<std::int64_t, 2>{0 * 300 + 150, 7}, std::nan(""));
  for (int hg : {16, 32}) {
    SCOPED_TRACE("hg=" + std::to_string(hg));
    expect_token0_zero_rest_within(run_decode_with(c, {.tu = clustered(hg, 4, 1), .deep = false}), c, e, ob, lb,
                                   {1, 2, 3});
  }
  const Case s = special_values_case();
  const Result o = run_decode(s, Precision::oracle, shallow());
  for (int splits : {2, 5})
    for (int hg : {16, 32}) {
      SCOPED_TRACE(label(hg, splits, 2));
      expect_special_classes(run_decode_with(s, {.tu = clustered(hg, splits, 2), .deep = false}), o, s.D);
    }
}

// What the in-cluster merge refuses, before any launch: more splits than a cluster holds, an unknown
// decode_combine, and the merge asked of the 64-head kernels.
TEST(GpuSparseDecodeCluster, RefusesWhatItCannotServe) {
  KPARITY_REQUIRE_GPU();
  const Case c = serving_case(5600, 1, 64, 2048);
  expect_refused(c, clustered(16, 17, 1), "kv_splits");
  expect_refused(c, SparseTuning{.variant = 3, .decode_combine = 3}, "decode_combine");
  expect_refused(c, SparseTuning{.variant = 1, .decode_combine = 2}, "decode_combine");
}

}  // namespace
}  // namespace kpt
