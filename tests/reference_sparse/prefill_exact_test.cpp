// Hand-derived values and the exact edge cases of spec C.3 (zeros, lse = sigma / -inf) with the NaN
// rules upstream's kernels were measured to follow (docs/upstream_conventions.md).
#include <cmath>

#include "sparse_case.hpp"

namespace kpt {
namespace {

// q = [1, 0]; prefix row [1, 0] (logit 1), extend row [0, 1] (logit 0 + shift), sink 0 (+ shift).
Case two_key_case(DType dt, double shift, double v = 1.0) {
  Case c;
  c.dt = dt;
  c.T = 1; c.H = 1; c.D = 2;
  c.q = Tensor(dt, {1, 1, 2});
  c.q.view().store(std::array<std::int64_t, 3>{0, 0, 0}, 1.0);
  c.ukv = Tensor(dt, {1, 2});
  c.ukv.view().store(std::array<std::int64_t, 2>{0, 0}, 1.0);
  c.kv = Tensor(dt, {1, 2});
  c.kv.view().store(std::array<std::int64_t, 2>{0, 1}, v);
  c.sink = Tensor(DType::f32, {1});
  c.pre = {{0}};
  c.ext = {{0}};
  c.shift = shift;
  return c;
}

TEST(SparsePrefillExact, HandComputedTwoKeysOracleRoundsOnce) {
  const double e = std::exp(1.0);
  for (DType dt : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    // Shift 0: weights (1, 1/e, sink 1/e), Z = 1 + 2/e.
    Result r = run_prefill(two_key_case(dt, 0.0), Precision::oracle);
    EXPECT_EQ(r.out[0], round_to_dtype(e / (e + 2), dt));
    EXPECT_EQ(r.out[1], round_to_dtype(1 / (e + 2), dt));
    EXPECT_EQ(r.lse[0], round_to_dtype(std::log(e + 2), DType::f32));
    // Shift -ln 2 halves the extend and sink weights: Z = 1 + 1/e.
    r = run_prefill(two_key_case(dt, -std::log(2.0)), Precision::oracle);
    EXPECT_EQ(r.out[0], round_to_dtype(e / (e + 1), dt));
    EXPECT_EQ(r.out[1], round_to_dtype(1 / (2 * (e + 1)), dt));
    EXPECT_NEAR(r.lse[0], std::log(e + 1), 2 * kE32 * std::log(e + 1));  // fp64 shift vs ln 2 rounding
  }
}

TEST(SparsePrefillExact, HandComputedFaithfulRoundsNumeratorWeightOnly) {
  // Faithful: the numerator uses rt(exp(-1)) in the storage dtype, the denominator the fp32 value.
  // The extend row's value v is chosen (from [1, 2) on the storage grid) so that this rounding
  // changes the stored output, which makes the rounding point observable.
  for (DType dt : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const float w = std::exp(-1.0f), Z = 1.0f + w + w;
    const float wr = round_through(w, dt);
    const double e = std::exp(1.0);
    double v = 0;
    for (int k = 0; k < 128 && v == 0; ++k) {
      const double cand = 1.0 + k / 128.0;
      if (round_to_dtype(wr * static_cast<float>(cand) / Z, dt) != round_to_dtype(cand / (e + 2), dt)) v = cand;
    }
    ASSERT_NE(v, 0.0);
    Result r = run_prefill(two_key_case(dt, 0.0, v), Precision::faithful);
    EXPECT_EQ(r.out[0], round_to_dtype(1.0f / Z, dt));
    EXPECT_EQ(r.out[1], round_to_dtype(wr * static_cast<float>(v) / Z, dt));
    EXPECT_EQ(r.lse[0], static_cast<double>(1.0f + std::log(Z)));
    Result o = run_prefill(two_key_case(dt, 0.0, v), Precision::oracle);
    EXPECT_EQ(o.out[1], round_to_dtype(v / (e + 2), dt));
    EXPECT_NE(r.out[1], o.out[1]);
  }
}

// Every token has no selected key: sentinels of several values, empty spans, a decreasing span.
// All rows are NaN, so any read of a row shows up.
TEST(SparsePrefillExact, NoSelectedKeyGivesZerosAndLseSigma) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    const std::int64_t T = 4, H = 3, D = 5;
    Tensor q(DType::bf16, {T, H, D}), ukv(DType::bf16, {6, D}), kv(DType::bf16, {3, D});
    q.fill_normal(11);
    ukv.fill(std::nan(""));
    kv.fill(std::nan(""));
    Tensor sink(DType::f32, {H});
    sink.view().store(std::array<std::int64_t, 1>{0}, 0.75);
    sink.view().store(std::array<std::int64_t, 1>{1}, -kInf);
    sink.view().store(std::array<std::int64_t, 1>{2}, -3.0);
    // prefix: t0 {-1,-1}; t1 empty; t2 decreasing (3 -> 2); t3 {-1, INT32_MIN}. extend: t0 empty,
    // t1 {-7}, t2 empty, t3 decreasing (2 -> 1). indptr[0] != 0 throughout.
    Tensor ip = ints({1, 3, 3, 2, 4}), ix = ints({5, -1, -1, -2147483648LL});
    Tensor ep = ints({1, 1, 2, 2, 1}), ex = ints({0, -7});
    Tensor out(DType::bf16, {T, H, D}), lse(DType::f32, {T, H});
    out.poison();
    lse.poison();
    kparity::sparse::PagedPrefillArgs a;
    a.q = q; a.unified_kv = ukv; a.kv = kv;
    a.kv_indices_prefix = ix; a.kv_indptr_prefix = ip;
    a.kv_indices_extend = ex; a.kv_indptr_extend = ep;
    a.attn_sink = sink; a.softmax_scale = 0.5; a.replicated_logit_shift = 0.5;
    a.return_lse = true; a.out = out; a.lse = lse.view();
    kparity::reference::sparse::paged_prefill(a, p);
    for (std::int64_t i = 0; i < out.numel(); ++i) {
      ASSERT_EQ(out.view().load_flat(i), 0.0) << i;
      ASSERT_FALSE(std::signbit(out.view().load_flat(i))) << i;
    }
    for (std::int64_t t = 0; t < T; ++t) {
      EXPECT_EQ(lse.view().at({t, 0}), 1.25);  // sigma + shift
      EXPECT_EQ(lse.view().at({t, 1}), -kInf);
      EXPECT_EQ(lse.view().at({t, 2}), -2.5);
    }
  }
}

TEST(SparsePrefillExact, PlusInfSinkGivesZerosAndMinusInfLse) {
  for (DType dt : {DType::bf16, DType::f16})
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      Case c = random_case(21, {.dt = dt, .T = 3, .H = 2, .D = 8, .P = 10, .Ne = 4, .sentinel_rate = 0});
      c.pre = {{1, 2, 3}, {}, {9}};
      c.ext = {{0}, {1, 1}, {}};
      c.sink.view().store(std::array<std::int64_t, 1>{0}, kInf);
      Result r = run_prefill(c, p);
      Expect e = closed_form(c);
      for (std::int64_t t = 0; t < c.T; ++t) {
        for (std::int64_t d = 0; d < c.D; ++d) EXPECT_EQ(r.out[(t * 2 + 0) * c.D + d], 0.0);
        EXPECT_EQ(r.lse[t * 2 + 0], -kInf);
        EXPECT_TRUE(std::isfinite(r.lse[t * 2 + 1]));  // head 1 has a finite sink: a normal row
      }
      const auto bound = p == Precision::oracle ? oracle_out_bound(e, dt) : faithful_out_bound(e, dt);
      EXPECT_TRUE(within(r.out, e.out, bound));
    }
}

// AP-S6: rows no index selects, including rows named only by a negative entry's absolute value,
// may hold NaN without any effect.
TEST(SparsePrefillExact, NaNOnlyInUnselectedRowsHasNoEffect) {
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Case c = random_case(31, {.T = 5, .H = 3, .D = 16, .P = 30, .Ne = 10, .sentinel_rate = 0.3});
    std::vector<bool> used_p(30), used_e(10);
    for (auto& l : c.pre) for (auto i : l) if (i >= 0) used_p[i] = true;
    for (auto& l : c.ext) for (auto i : l) if (i >= 0) used_e[i] = true;
    const Result clean = run_prefill(c, p);
    std::int64_t poisoned = 0;
    for (std::int64_t r = 0; r < 30; ++r)
      if (!used_p[r]) { ++poisoned; for (std::int64_t d = 0; d < 16; ++d) c.ukv.view().store(std::array{r, d}, std::nan("")); }
    for (std::int64_t r = 0; r < 10; ++r)
      if (!used_e[r]) { ++poisoned; for (std::int64_t d = 0; d < 16; ++d) c.kv.view().store(std::array{r, d}, std::nan("")); }
    ASSERT_GT(poisoned, 0);
    EXPECT_TRUE(identical(run_prefill(c, p).out, clean.out));
    EXPECT_TRUE(identical(run_prefill(c, p).lse, clean.lse));
    EXPECT_GT(norm1(clean.out), 0.0);
  }
}

// Upstream's zero head: out all +0 and lse -inf (sglang's `where(l > 0, ..., 0)`).
void expect_zero_head(const Result& r, std::int64_t t, std::int64_t h, std::int64_t H, std::int64_t D) {
  for (std::int64_t d = 0; d < D; ++d) {
    EXPECT_EQ(r.out[(t * H + h) * D + d], 0.0) << "t=" << t << " h=" << h << " d=" << d;
    EXPECT_FALSE(std::signbit(r.out[(t * H + h) * D + d])) << "t=" << t << " h=" << h << " d=" << d;
  }
  EXPECT_EQ(r.lse[t * H + h], -kInf) << "t=" << t << " h=" << h;
}

// A NaN inside a selected row makes every logit of the tokens selecting it NaN; upstream's running
// max drops it and the NaN denominator fails Z > 0 (measured on the H200, sglang paged_prefill
// @856c2e57): every head of that token is exact zeros with lse -inf, every other token is untouched.
TEST(SparsePrefillExact, NaNInSelectedRowGivesTheZeroHead) {
  Case c = random_case(41, {.T = 3, .H = 2, .D = 8, .P = 6, .Ne = 3, .sentinel_rate = 0});
  c.pre = {{0, 1}, {2}, {3}};
  c.ext = {{}, {0}, {1}};
  const Result clean = run_prefill(c, Precision::oracle);
  c.kv.view().store(std::array<std::int64_t, 2>{0, 5}, std::nan(""));  // selected by token 1 only
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    EXPECT_ANY_THROW(run_prefill(c, p));  // deep check O13
    Result r = run_prefill(c, p, {}, shallow());
    for (std::int64_t h = 0; h < 2; ++h) {
      expect_zero_head(r, 1, h, 2, 8);
      EXPECT_TRUE(std::isfinite(r.lse[0 * 2 + h]) && std::isfinite(r.lse[2 * 2 + h]));
    }
    if (p == Precision::oracle)
      for (std::int64_t t : {0, 2})
        for (std::int64_t i = t * 16; i < t * 16 + 16; ++i) EXPECT_EQ(r.out[i], clean.out[i]) << i;
  }
}

// A NaN in q[t, h, :] makes that head's logits NaN: the zero head there, the other heads untouched.
// A token without keys has no logit to poison: its NaN q changes nothing (zeros, lse = sigma).
TEST(SparsePrefillExact, NaNInQGivesTheZeroHeadOfThatHeadOnly) {
  Case c = random_case(42, {.T = 2, .H = 2, .D = 8, .P = 6, .Ne = 3, .sentinel_rate = 0});
  c.pre = {{0, 1}, {}};
  c.ext = {{2}, {}};
  const Result clean = run_prefill(c, Precision::oracle);
  c.q.view().store(std::array<std::int64_t, 3>{0, 1, 4}, std::nan(""));
  c.q.view().store(std::array<std::int64_t, 3>{1, 0, 0}, std::nan(""));
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Result r = run_prefill(c, p, {}, shallow());
    expect_zero_head(r, 0, 1, 2, 8);
    EXPECT_TRUE(std::isfinite(r.lse[0]));
    for (std::int64_t d = 0; d < 8; ++d) EXPECT_TRUE(std::isfinite(r.out[d])) << d;
    for (std::int64_t i = 16; i < 32; ++i) EXPECT_EQ(r.out[i], 0.0) << i;  // token 1: no key
    EXPECT_EQ(r.lse[2], clean.lse[2]);
  }
}

TEST(SparsePrefillExact, NaNSinkGivesTheZeroHead) {
  Case c = random_case(43, {.T = 2, .H = 2, .D = 4, .P = 5, .Ne = 2});
  c.sink.view().store(std::array<std::int64_t, 1>{1}, std::nan(""));
  EXPECT_ANY_THROW(run_prefill(c, Precision::oracle));  // deep check O12
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Result r = run_prefill(c, p, {}, shallow());
    for (std::int64_t t = 0; t < 2; ++t) {
      expect_zero_head(r, t, 1, 2, 4);
      EXPECT_FALSE(std::isnan(r.lse[t * 2 + 0]));
    }
  }
}

// A selected row holding -inf against q_d = 1 has logit -inf and weight exactly 0: with another key
// (Z > 0) only that column is 0 * -inf = NaN; as the only key under a -inf sink (Z = 0) the head is
// zeros, lse -inf, as sglang's prefill writes (its decode writes NaN in that column: an upstream
// inconsistency kparity does not follow, docs/upstream_conventions.md).
TEST(SparsePrefillExact, MinusInfLogitKeyIsNaNOnlyInItsColumnOrZerosWithoutZ) {
  for (const bool alone : {false, true}) {
    SCOPED_TRACE(alone ? "the only key, sink -inf" : "with another key");
    Case c = random_case(44, {.T = 1, .H = 1, .D = 4, .P = 3, .Ne = 1, .sentinel_rate = 0});
    for (std::int64_t d = 0; d < 4; ++d) c.q.view().store(std::array<std::int64_t, 3>{0, 0, d}, 1.0);
    c.ukv.view().store(std::array<std::int64_t, 2>{1, 2}, -kInf);
    c.pre = alone ? std::vector<List>{{1}} : std::vector<List>{{0, 1}};
    c.ext = {{}};
    if (alone) c.sink.view().store(std::array<std::int64_t, 1>{0}, -kInf);
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      Result r = run_prefill(c, p, {}, shallow());
      if (alone) {
        expect_zero_head(r, 0, 0, 1, 4);
        continue;
      }
      for (std::int64_t d = 0; d < 4; ++d) EXPECT_EQ(std::isnan(r.out[d]), d == 2) << d;
      EXPECT_TRUE(std::isfinite(r.lse[0]));
    }
  }
}

TEST(SparsePrefillExact, ZeroTokensIsANoOp) {
  Case c = random_case(51, {.T = 0, .H = 4, .D = 8});
  Result r = run_prefill(c, Precision::oracle);
  EXPECT_TRUE(r.out.empty());
  EXPECT_TRUE(r.lse.empty());
}

}  // namespace
}  // namespace kpt
