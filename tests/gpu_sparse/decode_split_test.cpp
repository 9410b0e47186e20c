// sparse/paged_decode at serving shapes (issue 31): the split-K path at T = 1..8, H = 64 / 128 with
// forced split counts, both LaunchOptions::decode_variant paths (1: the established launches; 2: PDL
// and the wide combine, combine_kernel.cuh), bit-for-bit equality of the two, run-to-run
// determinism, CUDA-graph capture and replay, and special values or masked keys confined to one split.
#include <cmath>
#include <string>

#include "decode_run.hpp"

namespace kpt {
namespace {

using kparity::kernels::sparse::SparseTuning;

// T = 1..8, H = 64 and 128: forced split counts (one, a few, one tile per split, more splits than
// tiles) and the automatic choice, both variants. Each result meets the oracle bound and the
// faithful bounds of decode_test.cpp, and variant 2 equals variant 1 bit for bit at the same split
// count (the wide combine does the established combine's operations in its order).
TEST(GpuSparseDecodeSplit, ServingShapesBothVariantsEqualAndBounded) {
  KPARITY_REQUIRE_GPU();
  std::uint64_t seed = 3100;
  for (std::int64_t H : {64, 128})
    for (std::int64_t T : {1, 2, 3, 8}) {
      const Case c = serving_case(++seed, T, H, 512);
      const Result ora = run_decode(c, Precision::oracle);
      const Expect e = closed_form(c);
      for (int splits : {0, 1, 3, 8, 16}) {  // 512 keys: 8 tiles of 64 (16 splits: half of them empty)
        SCOPED_TRACE("T=" + std::to_string(T) + " H=" + std::to_string(H) + " kv_splits=" + std::to_string(splits));
        const Result est = run_decode_with(c, {.tu = {.kv_splits = splits}, .variant = 1});
        const Result fast = run_decode_with(c, {.tu = {.kv_splits = splits}, .variant = 2});
        EXPECT_TRUE(within(fast.out, ora.out, uniform_bound(ora.out.size(), 2e-2, ora.out, 2e-2)));
        EXPECT_TRUE(within(fast.out, e.out, faithful_out_bound(e, c.dt)));
        EXPECT_TRUE(within(fast.lse, e.lse, faithful_lse_bound(e)));
        EXPECT_TRUE(bits_equal(fast.out, est.out));
        EXPECT_TRUE(bits_equal(fast.lse, est.lse));
      }
    }
}

// The full V4 list (2048 keys) at T = 1 with the automatic split count; then widths off the fast
// layouts, through the mma.sync kernel: D = 500 (16-byte combine loads), D = 34 (8-byte partial
// pairs, the combine's scalar tail: D % 4 != 0) and D = 33 (odd: scalar partial stores too).
TEST(GpuSparseDecodeSplit, FullListAndOddWidths) {
  KPARITY_REQUIRE_GPU();
  {
    const Case c = serving_case(3200, 1, 64, 2048);
    const Result ora = run_decode(c, Precision::oracle);
    const Result fast = run_decode_with(c, {.variant = 2});
    EXPECT_TRUE(within(fast.out, ora.out, uniform_bound(ora.out.size(), 2e-2, ora.out, 2e-2)));
    EXPECT_TRUE(bits_equal(fast.out, run_decode_with(c, {.variant = 1}).out));
  }
  for (std::int64_t D : {500, 34, 33}) {
    Case c = random_case(3201 + D, {.dt = DType::bf16, .T = 2, .H = 24, .D = D, .P = 600, .Ne = 0, .max_pre = 300,
                                    .max_ext = 0, .sentinel_rate = 0.0});
    for (auto& l : c.pre) l.resize(300, 5);
    SCOPED_TRACE("D=" + std::to_string(D));
    const Expect e = closed_form(c);
    for (int splits : {4, 9}) {
      const Result est = run_decode_with(c, {.tu = {.kv_splits = splits}, .variant = 1});
      const Result fast = run_decode_with(c, {.tu = {.kv_splits = splits}, .variant = 2});
      EXPECT_TRUE(within(fast.out, e.out, faithful_out_bound(e, c.dt)));
      EXPECT_TRUE(bits_equal(fast.out, est.out));
      EXPECT_TRUE(bits_equal(fast.lse, est.lse));
    }
  }
}

// The same call twice gives the same bits (fixed split boundaries and combine order), eagerly and
// as a graph replayed three times; the graph's result equals the eager one.
TEST(GpuSparseDecodeSplit, DeterministicAndGraphReplayable) {
  KPARITY_REQUIRE_GPU();
  const Case c = serving_case(3300, 4, 128, 1024);
  for (int variant : {1, 2}) {
    SCOPED_TRACE("variant=" + std::to_string(variant));
    const Result a = run_decode_with(c, {.variant = variant});
    const Result b = run_decode_with(c, {.variant = variant});
    const Result g = run_decode_with(c, {.variant = variant, .graph = true, .replays = 3});
    EXPECT_TRUE(bits_equal(a.out, b.out));
    EXPECT_TRUE(bits_equal(a.lse, b.lse));
    EXPECT_TRUE(bits_equal(a.out, g.out));
    EXPECT_TRUE(bits_equal(a.lse, g.lse));
    const Result g1 = run_decode_with(c, {.tu = {.kv_splits = 1}, .variant = variant, .graph = true});
    EXPECT_TRUE(bits_equal(g1.out, run_decode_with(c, {.tu = {.kv_splits = 1}, .variant = variant}).out));
  }
}

// Special values and masked (negative) keys inside one split only (4 splits of 64 keys): a NaN row
// in split 2 of token 0 zeroes every head of that token (upstream's finalisation, decode_test.cpp);
// token 1's split 1 is all -1 entries (skipped, so that split has no keys: the closed form skips
// them too); token 2 is untouched by both.
TEST(GpuSparseDecodeSplit, SpecialsAndMaskedKeysInOneSplit) {
  KPARITY_REQUIRE_GPU();
  Case c = random_case(3400, {.dt = DType::bf16, .T = 3, .H = 64, .D = 512, .P = 1024, .Ne = 0, .max_pre = 256,
                              .max_ext = 0, .sentinel_rate = 0.0});
  for (std::int64_t t = 0; t < 3; ++t) {
    c.pre[t].clear();
    for (std::int64_t j = 0; j < 256; ++j) c.pre[t].push_back(t * 300 + j);
  }
  for (std::int64_t j = 64; j < 128; ++j) c.pre[1][j] = -1;                      // token 1: split 1 all masked
  const Expect e = closed_form(c);                                              // before the NaN: token 0 aside
  const std::vector<double> ob = faithful_out_bound(e, c.dt), lb = faithful_lse_bound(e);
  c.ukv.view().store(std::array<std::int64_t, 2>{0 * 300 + 150, 7}, std::nan(""));  // token 0, key 150: split 2
  for (int variant : {1, 2}) {
    SCOPED_TRACE("variant=" + std::to_string(variant));
    const Result r = run_decode_with(c, {.tu = {.kv_splits = 4}, .variant = variant, .deep = false});
    expect_token0_zero_rest_within(r, c, e, ob, lb, {1, 2});
  }
}

}  // namespace
}  // namespace kpt
