// The differential rule's a-priori term (properties/differential.hpp, issue 18 item 1b): an element
// passes through it only where the op's error bound (reference/error_bound.hpp) says fp32 cannot do
// better, and the same tensors judged under an op name without bounds fail.
#include <gtest/gtest.h>

#include <cmath>

#include "decode_spec.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/reference/error_bound.hpp"

namespace {

using namespace kpt;

OpFuzzSpec tight_spec() {
  OpFuzzSpec s = decode_spec();
  s.abs_floor = [](const Call&, std::string_view, const Call*) { return 1e-6; };
  return s;
}

// The same call under a name that has no a-priori bound: only 2 * err_f and the floor remain.
Call without_bounds(Call c) {
  c.op = "synthetic";
  return c;
}

// One token over three rows whose products with q cancel (+-2^100 next to small integers, the
// campaign's failing family); the exact logits are -2, 0 and 0, but in fp32 they are whatever the
// summation order leaves.
Call cancelling_call() {
  Call c = decode_call(1, 16, 3, {{0, 1, 2}}, 5, true);
  c.at("attn_sink").view().store_flat(0, -INFINITY);
  c.scalars["softmax_scale"] = 1.0;
  const TensorView q = c.at("q").view(), kv = c.at("unified_kv").view();
  for (std::int64_t d = 0; d < 16; ++d) {
    q.store_flat(d, d == 3 || d == 8 ? 1.0 : static_cast<double>(d % 3) - 1);
    kv.store_flat(d, d == 3 ? 0x1p100 : d == 8 ? -0x1p100 : 1.0);
    kv.store_flat(16 + d, d == 3 ? -0x1p100 : d == 8 ? 0x1p100 : 0.0);
    kv.store_flat(32 + d, 0.0);
  }
  return c;
}

TEST(AprioriRule, AnOrderThatCancelsDifferentlyPassesForTheRightReason) {
  const Call in = cancelling_call();
  const Call o = run_oracle(in);
  // The backend's logits all came out 0 (tensor cores truncate the small products next to the
  // 2^100 ones): the mean of the three rows, rounded to bf16.
  Call b = o;
  for (std::int64_t d = 0; d < 16; ++d) {
    double mean = 0;
    for (std::int64_t r = 0; r < 3; ++r) mean += in.at("unified_kv").view().at({r, d}) / 3;
    b.at("out").view().store_flat(d, round_to_dtype(mean, DType::bf16));
  }
  b.at("lse").view().store_flat(0, std::log(3.0));
  // The faithful reference judged as exact (f = o): neither 2 * err_f nor the floor can help.
  const DifferentialResult r = judge(in, o, o, b, tight_spec());
  EXPECT_TRUE(r.pass) << r.detail;
  for (const auto& e : r.tensors) EXPECT_GT(e.apriori, 1.0) << e.name;
  EXPECT_FALSE(judge(without_bounds(in), o, o, b, tight_spec()).pass);
}

TEST(AprioriRule, WellConditionedCallsKeepATightBound) {
  const Call in = decode_call(2, 8, 5, {{0, 3, 3}, {4, 1}}, 7, true);
  const Call o = run_oracle(in);
  Call b = o;
  b.at("out").view().store_flat(3, o.at("out").view().load_flat(3) + 0.05);  // a 5% error in one element
  const DifferentialResult r = judge(in, o, o, b, tight_spec());
  EXPECT_FALSE(r.pass) << r.detail;
  EXPECT_NE(r.detail.find("a-priori"), std::string::npos) << r.detail;
}

TEST(AprioriRule, AnOverflowTheRecipeSeesComingAcceptsANonFiniteValue) {
  // q of 2^64 and keys of 2^63: the raw fp32 dot overflows (2^128) though the scaled logit (2^118)
  // would not; the oracle is finite, an fp32 backend gets inf - inf = NaN.
  Call in = decode_call(1, 2, 2, {{0, 1}}, 9, true);
  in.scalars["softmax_scale"] = 0x1p-10;
  for (std::int64_t d = 0; d < 2; ++d) {
    in.at("q").view().store_flat(d, 0x1p64);
    in.at("unified_kv").view().store_flat(d, 0x1p63);
    in.at("unified_kv").view().store_flat(2 + d, d ? -0x1p63 : 0x1p63);
  }
  in.options.deep = false;
  const Call o = run_oracle(in);
  ASSERT_TRUE(std::isfinite(o.at("out").view().load_flat(0)));
  Call b = o;
  for (std::int64_t i = 0; i < 2; ++i) b.at("out").view().store_flat(i, NAN);
  b.at("lse").view().store_flat(0, NAN);
  EXPECT_TRUE(judge(in, o, o, b, tight_spec()).pass);
  EXPECT_FALSE(judge(without_bounds(in), o, o, b, tight_spec()).pass);
}

}  // namespace
