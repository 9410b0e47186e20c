// ops::widen_written / run_reference on a WideCall: exact copies of the written tensors in f32 or
// f64, the catalog entries only the copies break waived, the oracle's values stored once in the wide
// dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "kparity/ops/op_table.hpp"
#include "kparity/ops/wide_outputs.hpp"

namespace {

using namespace kparity;

const ValidateOptions kStrict = ValidateOptions::strict(Entry::reference);

Tensor ints(DType t, Shape shape, std::vector<std::int64_t> v) {
  Tensor x(t, std::move(shape));
  for (std::size_t i = 0; i < v.size(); ++i) x.view().store_flat(static_cast<std::int64_t>(i), static_cast<double>(v[i]));
  return x;
}

// The catalog fixture kda.replayssm.minimal: B = 2, HV = 2, K = V = 16, L = 4, three slots; bf16 out
// and rings, f32 state and g_cache.
struct ReplayCall {
  std::map<std::string, Tensor> owned;
  ArgBag bag;
  ReplayCall() {
    auto normal = [&](const char* n, DType t, Shape s, std::uint64_t seed, double sd) {
      owned[n] = Tensor(t, std::move(s));
      owned[n].fill_normal(seed, 0.0, sd);
    };
    normal("mixed_qkv", DType::bf16, {2, 64}, 1, 0.5);
    normal("a", DType::bf16, {2, 2, 16}, 2, 0.5);
    normal("b", DType::bf16, {2, 2}, 3, 0.5);
    normal("A_log", DType::f32, {2}, 4, 0.3);
    normal("dt_bias", DType::f32, {2, 16}, 5, 0.1);
    normal("initial_state", DType::f32, {3, 2, 16, 16}, 6, 0.05);
    normal("d_cache", DType::bf16, {3, 2, 4, 16}, 7, 0.05);
    normal("k_cache", DType::bf16, {3, 1, 4, 16}, 8, 0.3);
    owned["g_cache"] = Tensor(DType::f32, {3, 2, 4, 16});
    owned["g_cache"].fill_uniform(9, -0.1, 0.0);
    owned["out"] = Tensor(DType::bf16, {2, 1, 2, 16});
    owned["ssm_state_indices"] = ints(DType::i32, {2}, {2, 0});
    owned["write_pos"] = ints(DType::i32, {2}, {1, 3});
    for (auto& [n, t] : owned) bag.tensors[n] = t.view();
    bag.scalars["scale"] = 0.25;
    bag.flags["use_qk_l2norm_in_kernel"] = true;
  }
};

TEST(WideOutputs, F64CopiesEveryWrittenFloatAndWaivesOnlyDtypeEntries) {
  ReplayCall c;
  ASSERT_TRUE(find_op_contract("kda/replayssm_decode")->validate(c.bag, kStrict).empty());
  const ops::WideCall w = ops::widen_written("kda/replayssm_decode", c.bag, DType::f64, kStrict);
  for (const char* n : {"out", "initial_state", "d_cache", "k_cache", "g_cache"}) {
    ASSERT_TRUE(w.copies.count(n)) << n;
    EXPECT_EQ(w.bag.tensors.at(n).dtype, DType::f64) << n;
    EXPECT_EQ(w.bag.tensors.at(n).data, w.copies.at(n).view().data) << n;
    for (std::int64_t i = 0; i < c.owned.at(n).numel(); ++i)
      ASSERT_EQ(w.bag.tensors.at(n).load_flat(i), c.owned.at(n).view().load_flat(i)) << n << " " << i;
  }
  EXPECT_EQ(w.copies.size(), 5u);
  EXPECT_EQ(w.bag.tensors.at("mixed_qkv").data, c.bag.tensors.at("mixed_qkv").data) << "inputs are not copied";
  // upstream's g_cache check and kparity's float-dtype check, nothing else.
  EXPECT_EQ(w.waived, (std::vector<std::string>{"066bd06e9ab538bd", "55865a1608476e8b"}));
}

TEST(WideOutputs, F32CopiesOnlyNarrowerTensors) {
  ReplayCall c;
  const ops::WideCall w = ops::widen_written("kda/replayssm_decode", c.bag, DType::f32, kStrict);
  EXPECT_EQ(w.copies.size(), 3u);  // out, d_cache, k_cache; the state and g_cache already are f32
  for (const char* n : {"out", "d_cache", "k_cache"}) EXPECT_EQ(w.bag.tensors.at(n).dtype, DType::f32) << n;
  EXPECT_EQ(w.bag.tensors.at("initial_state").data, c.bag.tensors.at("initial_state").data);
  EXPECT_TRUE(w.waived.empty()) << "f32 rings and out are what upstream allows";
  EXPECT_THROW(ops::widen_written("kda/replayssm_decode", c.bag, DType::bf16, kStrict), std::invalid_argument);
  EXPECT_THROW(ops::widen_written("kda/replayssm_decode", c.bag, DType::i64, kStrict), std::invalid_argument);
}

TEST(WideOutputs, OracleStoresOnceInTheWideDtype) {
  ReplayCall narrow, f32c, f64c;
  ops::run_reference("kda/replayssm_decode", narrow.bag, reference::Precision::oracle, kStrict);
  const ops::WideCall w32 = ops::widen_written("kda/replayssm_decode", f32c.bag, DType::f32, kStrict);
  const ops::WideCall w64 = ops::widen_written("kda/replayssm_decode", f64c.bag, DType::f64, kStrict);
  ops::run_reference("kda/replayssm_decode", w32, reference::Precision::oracle, kStrict);
  ops::run_reference("kda/replayssm_decode", w64, reference::Precision::oracle, kStrict);
  // Without the waiver the f64 copies are refused, as the call's contract says.
  EXPECT_THROW(ops::run_reference("kda/replayssm_decode", w64.bag, reference::Precision::oracle, kStrict), Error);
  std::int64_t beyond_f32 = 0;
  for (const char* n : {"out", "initial_state", "d_cache", "k_cache", "g_cache"}) {
    const TensorView o = narrow.bag.tensors.at(n), a = w32.bag.tensors.at(n), b = w64.bag.tensors.at(n);
    for (std::int64_t i = 0; i < o.numel(); ++i) {
      const double v = b.load_flat(i);
      ASSERT_EQ(round_to_dtype(v, DType::f32), a.load_flat(i)) << n << " " << i;
      ASSERT_EQ(round_to_dtype(v, o.dtype), o.load_flat(i)) << n << " " << i;
      beyond_f32 += round_to_dtype(v, DType::f32) != v;
    }
  }
  EXPECT_GT(beyond_f32, 64) << "the f64 results hold more than f32 does";
}

TEST(WideOutputs, NothingToWiden) {
  ReplayCall c;
  for (auto& [n, t] : c.owned)
    if (is_floating(t.dtype())) {
      Tensor w(DType::f64, t.shape());
      w.copy_from(t.view());
      t = std::move(w);
      c.bag.tensors[n] = t.view();
    }
  // An all-f64 call (invalid, but widen_written only looks at dtypes narrower than the target).
  const ops::WideCall w = ops::widen_written("kda/replayssm_decode", c.bag, DType::f64, kStrict);
  EXPECT_TRUE(w.copies.empty());
  EXPECT_TRUE(w.waived.empty());
}

}  // namespace
