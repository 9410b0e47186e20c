// The small-T sparse/paged_decode kernel (SparseTuning::variant 3, decode_small_kernel.cuh; issue 31):
// T = 1..8, H = 64 / 128 and off-tile head counts, both head groups (16, 32), both KV gathers
// (16-byte cp.async, one bulk copy per row), forced and automatic split counts, against the oracle
// and the faithful bounds of decode_test.cpp (the a-priori recipe of reference/sparse/error_bound.cpp
// covers this accumulation order: 64-key tiles, D-slice logits summed in slice order). The two gathers
// move the same bytes into the same places, so their results are equal bit for bit; run-to-run and
// graph-replay results too (fixed split boundaries and combine order). Special values, masked keys
// and whole masked splits confined to one split follow upstream's finalisation.
#include <cmath>
#include <string>

#include "decode_run.hpp"

namespace kpt {
namespace {

SparseTuning small(int hg, int splits, int gather) {
  return SparseTuning{.head_tile = hg, .kv_splits = splits, .variant = 3, .decode_gather = gather};
}

std::string label(int hg, int splits, int gather) {
  return "hg=" + std::to_string(hg) + " kv_splits=" + std::to_string(splits) + " gather=" + std::to_string(gather);
}


// Serving shapes: 512 keys (8 tiles of 64) per token, one token 37 shorter; split counts automatic,
// single pass (the kernel finalises), 3 (uneven shares), 8 (one tile each) and 16 (half empty).
TEST(GpuSparseDecodeSmall, ServingShapesBoundedAndGathersBitEqual) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 3500;
  for (std::int64_t H : {64, 128})
    for (std::int64_t T : {1, 3, 8}) {
      const Case c = serving_case(++seed, T, H, 512);
      const Result ora = run_decode(c, Precision::oracle);
      const Expect e = closed_form(c);
      for (int hg : {16, 32})
        for (int splits : {0, 1, 3, 8, 16}) {
          SCOPED_TRACE("T=" + std::to_string(T) + " H=" + std::to_string(H) + " " + label(hg, splits, 1));
          const Result cp = run_decode_with(c, {.tu = small(hg, splits, 1)});
          const Result bulk = run_decode_with(c, {.tu = small(hg, splits, 2)});
          expect_small_bounded(cp, ora, e, c.dt);
          EXPECT_TRUE(bits_equal(bulk.out, cp.out));
          EXPECT_TRUE(bits_equal(bulk.lse, cp.lse));
        }
    }
}

// V4's full list (2048 keys) with everything automatic (head group, splits) under both gathers, and
// the automatic gather at T = 1 (the reference's cost bounds the shapes: T * H * 2048 * 512 products).
TEST(GpuSparseDecodeSmall, FullListAutomatic) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 3600;
  using Shape = std::pair<std::int64_t, std::int64_t>;  // (T, H)
  for (const Shape& th : std::initializer_list<Shape>{{1, 64}, {1, 128}, {4, 64}}) {
    const std::int64_t T = th.first, H = th.second;
    const Case c = serving_case(++seed, T, H, 2048);
    const Result ora = run_decode(c, Precision::oracle);
    const Expect e = closed_form(c);
    SCOPED_TRACE("T=" + std::to_string(T) + " H=" + std::to_string(H));
    const Result cp = run_decode_with(c, {.tu = small(0, 0, 1)});
    const Result bulk = run_decode_with(c, {.tu = small(0, 0, 2)});
    expect_small_bounded(cp, ora, e, c.dt);
    EXPECT_TRUE(bits_equal(bulk.out, cp.out));
    if (T == 1) EXPECT_TRUE(bits_equal(run_decode_with(c, {.tu = small(0, 0, 0)}).out, cp.out));
  }
}

// Off the serving shape: head counts that leave a partial head group (20, 40, 200), D = 264 and 320
// (the kernel pads D to 512: zero columns, and a bulk copy of 2D bytes per row), f16, empty and
// uneven lists (decode_test.cpp's decode lists), with and without splits.
TEST(GpuSparseDecodeSmall, PartialGroupsNarrowRowsF16AndEmptyLists) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 3700;
  for (const OffShape& s : kOffShapes) {
    const Case c = decode_case(++seed, s.dt, s.T, s.H, s.D, s.keys);
    SCOPED_TRACE(off_shape_label(s));
    const Result ora = run_decode(c, Precision::oracle);
    const Expect e = closed_form(c);
    for (int hg : {16, 32})
      for (int splits : {1, 0, 5})
        for (int gather : {1, 2}) {
          SCOPED_TRACE(label(hg, splits, gather));
          expect_small_bounded(run_decode_with(c, {.tu = small(hg, splits, gather)}), ora, e, c.dt);
        }
  }
}

// Without a workspace the kernel runs one pass per (token, head group) and finalises itself.
TEST(GpuSparseDecodeSmall, WithoutWorkspaceRunsSinglePass) {
  KPARITY_REQUIRE_GPU();
  const Case c = serving_case(3800, 2, 64, 700);
  for (int gather : {1, 2}) {
    const Result a = run_decode_with(c, {.tu = small(16, 0, gather), .workspace = false});
    const Result b = run_decode_with(c, {.tu = small(16, 1, gather)});
    EXPECT_TRUE(bits_equal(a.out, b.out));
    EXPECT_TRUE(bits_equal(a.lse, b.lse));
  }
}

// The same call twice gives the same bits, eagerly and as a graph replayed three times (the PDL
// launches and the wide combine captured); the graph's result equals the eager one.
TEST(GpuSparseDecodeSmall, DeterministicAndGraphReplayable) {
  KPARITY_REQUIRE_GPU();
  for (std::int64_t T : {1, 4}) {
    const Case c = serving_case(3900 + T, T, 128, 2048);
    for (int gather : {1, 2}) {
      SCOPED_TRACE("T=" + std::to_string(T) + " gather=" + std::to_string(gather));
      const Result a = run_decode_with(c, {.tu = small(0, 0, gather)});
      const Result b = run_decode_with(c, {.tu = small(0, 0, gather)});
      const Result g = run_decode_with(c, {.tu = small(0, 0, gather), .graph = true, .replays = 3});
      EXPECT_TRUE(bits_equal(a.out, b.out));
      EXPECT_TRUE(bits_equal(a.lse, b.lse));
      EXPECT_TRUE(bits_equal(a.out, g.out));
      EXPECT_TRUE(bits_equal(a.lse, g.lse));
      const Result g1 = run_decode_with(c, {.tu = small(0, 1, gather), .graph = true});
      EXPECT_TRUE(bits_equal(g1.out, run_decode_with(c, {.tu = small(0, 1, gather)}).out));
    }
  }
}

// Special values and masked keys inside one split only (4 splits of one 64-key tile): a NaN row in
// split 2 of token 0 zeroes every head of that token; token 1's split 1 is all -1 entries (a split
// with no keys: m = -FLT_MAX, l = 0, zero partials); token 2's split 3 has every other entry -1;
// token 3 is untouched.
TEST(GpuSparseDecodeSmall, SpecialsAndMaskedKeysInOneSplit) {
  KPARITY_REQUIRE_GPU();
  for (std::int64_t H : {64, 128}) {
    Case c = random_case(4000 + H, {.dt = DType::bf16, .T = 4, .H = H, .D = 512, .P = 1400, .Ne = 0,
                                    .max_pre = 256, .max_ext = 0, .sentinel_rate = 0.0});
    for (std::int64_t t = 0; t < 4; ++t) {
      c.pre[t].clear();
      for (std::int64_t j = 0; j < 256; ++j) c.pre[t].push_back(t * 300 + j);
    }
    for (std::int64_t j = 64; j < 128; ++j) c.pre[1][j] = -1;       // token 1: split 1 all masked
    for (std::int64_t j = 192; j < 256; j += 2) c.pre[2][j] = -1;   // token 2: half of split 3
    const Expect e = closed_form(c);                                // before the NaN: token 0 aside
    const std::vector<double> ob = faithful_out_bound(e, c.dt), lb = faithful_lse_bound(e);
    c.ukv.view().store(std::array<std::int64_t, 2>{0 * 300 + 150, 7}, std::nan(""));  // token 0, key 150: split 2
    for (int hg : {16, 32})
      for (int gather : {1, 2}) {
        SCOPED_TRACE("H=" + std::to_string(H) + " " + label(hg, 4, gather));
        const Result r = run_decode_with(c, {.tu = small(hg, 4, gather), .deep = false});
        expect_token0_zero_rest_within(r, c, e, ob, lb, {1, 2, 3});
      }
  }
}

// decode_test.cpp's special-value case through the small kernel: NaN sink, NaN q, a NaN row, a +inf
// logit (zero heads, lse -inf) and a -inf logit (NaN in its column only), single pass and split.
TEST(GpuSparseDecodeSmall, SpecialValuesFollowUpstreamsFinalisation) {
  KPARITY_REQUIRE_GPU();
  const Case c = special_values_case();
  const Result o = run_decode(c, Precision::oracle, shallow());
  for (int splits : {1, 5})
    for (int hg : {16, 32})
      for (int gather : {1, 2}) {
        SCOPED_TRACE(label(hg, splits, gather));
        expect_special_classes(run_decode_with(c, {.tu = small(hg, splits, gather), .deep = false}), o, c.D);
      }
}

// What variant 3 refuses, as the op's kernel-unsupported error naming the value: KV rows that are
// not 16-byte loadable (D = 500), a head group other than 16 / 32, an unknown gather or variant.
TEST(GpuSparseDecodeSmall, RefusesWhatItCannotServe) {
  KPARITY_REQUIRE_GPU();
  Case narrow = random_case(4100, {.dt = DType::bf16, .T = 1, .H = 16, .D = 500, .P = 64, .Ne = 0, .max_pre = 20,
                                   .max_ext = 0, .sentinel_rate = 0.0});
  expect_refused(narrow, small(0, 0, 0), "variant");
  const Case c = serving_case(4101, 1, 16, 64);
  expect_refused(c, small(64, 0, 0), "head_tile");
  expect_refused(c, small(16, 0, 3), "decode_gather");
  expect_refused(c, SparseTuning{.variant = 4}, "variant");
}

}  // namespace
}  // namespace kpt
