// build_example: fixtures plus overrides become host tensors in an ArgBag.
#include <cmath>

#include <gtest/gtest.h>

#include "kparity/diagnostics/examples.hpp"

namespace kparity::test {
namespace {

using nlohmann::json;

const json& fixtures() {
  static const json f = json::parse(R"({
    "toy": {
      "op": "kda/replayssm_decode",
      "tensors": {
        "x": {"shape": [2, 3], "dtype": "bf16", "device": "cuda:0"},
        "idx": {"shape": [2], "dtype": "i32", "device": "cuda:0", "values": [1, 3]},
        "opt": {"shape": [2], "dtype": "i32", "device": "cpu", "values": [0, 0]},
        "padded": {"shape": [2, 2], "dtype": "f32", "strides": [4, 1]}
      },
      "scalars": {"scale": 0.25, "lower_bound": -5.0},
      "flags": {"use_qk_l2norm_in_kernel": true}
    }
  })");
  return f;
}

BuiltExample build(const json& set, const json& options = nullptr) {
  json ex = {{"fixture", "toy"}, {"set", set}};
  if (!options.is_null()) ex["options"] = options;
  return build_example(ex, fixtures());
}

TEST(BuildExample, FixtureAsIs) {
  auto ex = build(json::object());
  EXPECT_EQ(ex.op, "kda/replayssm_decode");
  ASSERT_EQ(ex.bag.tensors.size(), 4u);
  const TensorView& x = ex.bag.tensors.at("x");
  EXPECT_EQ(x.dtype, DType::bf16);
  EXPECT_EQ(x.shape(), (Shape{2, 3}));
  EXPECT_TRUE(x.device.is_cuda());
  EXPECT_TRUE(x.is_contiguous());
  EXPECT_TRUE(ex.bag.tensors.at("opt").device.is_cpu());
  EXPECT_EQ(ex.bag.tensors.at("idx").with_device(Device::cpu()).load_int_flat(1), 3);
  const TensorView& p = ex.bag.tensors.at("padded");
  EXPECT_EQ(p.stride_vec(), (Shape{4, 1}));
  EXPECT_FALSE(p.is_contiguous());
  EXPECT_EQ(ex.bag.scalar("scale"), 0.25);
  EXPECT_TRUE(ex.bag.flag("use_qk_l2norm_in_kernel"));
  EXPECT_FALSE(ex.options.extra);
  EXPECT_EQ(ex.options.entry, Entry::cuda_kernel);
}

TEST(BuildExample, RandomFillIsDeterministicFiniteAndSmall) {
  auto a = build(json::object()), b = build(json::object());
  const TensorView xa = a.bag.tensors.at("x").with_device(Device::cpu()), xb = b.bag.tensors.at("x").with_device(Device::cpu());
  bool nonzero = false;
  for (std::int64_t i = 0; i < xa.numel(); ++i) {
    EXPECT_EQ(xa.load_flat(i), xb.load_flat(i));
    EXPECT_TRUE(std::isfinite(xa.load_flat(i)));
    EXPECT_LT(std::abs(xa.load_flat(i)), 4.0);
    nonzero = nonzero || xa.load_flat(i) != 0.0;
  }
  EXPECT_TRUE(nonzero);
}

TEST(BuildExample, TensorOverrides) {
  auto ex = build({{"x.dtype", "f32"}, {"x.shape", {3}}, {"x.device", "cpu"}, {"idx.values", {5, 7}}, {"opt", nullptr},
                   {"padded.fill", "nan"}});
  const TensorView& x = ex.bag.tensors.at("x");
  EXPECT_EQ(x.dtype, DType::f32);
  EXPECT_EQ(x.shape(), Shape{3});
  EXPECT_TRUE(x.device.is_cpu());
  EXPECT_EQ(ex.bag.tensors.at("idx").with_device(Device::cpu()).load_int_flat(0), 5);
  EXPECT_EQ(ex.bag.tensor("opt"), nullptr) << "null removes";
  const TensorView p = ex.bag.tensors.at("padded");
  for (std::int64_t i = 0; i < p.numel(); ++i) EXPECT_TRUE(std::isnan(p.load_flat(i)));
}

TEST(BuildExample, ValuesWithNonFiniteStrings) {
  auto ex = build({{"x.dtype", "f32"}, {"x.shape", {4}}, {"x.values", {1.5, "nan", "inf", "-inf"}}});
  const TensorView x = ex.bag.tensors.at("x").with_device(Device::cpu());
  EXPECT_EQ(x.load_flat(0), 1.5);
  EXPECT_TRUE(std::isnan(x.load_flat(1)));
  EXPECT_EQ(x.load_flat(2), INFINITY);
  EXPECT_EQ(x.load_flat(3), -INFINITY);
}

TEST(BuildExample, ShapeOverrideCyclesFixtureValuesAndDropsStrides) {
  auto ex = build({{"idx.shape", {3}}, {"padded.shape", {3, 2}}});
  const TensorView idx = ex.bag.tensors.at("idx").with_device(Device::cpu());
  ASSERT_EQ(idx.numel(), 3);
  EXPECT_EQ(idx.load_int_flat(2), 1);
  EXPECT_TRUE(ex.bag.tensors.at("padded").is_contiguous());
}

TEST(BuildExample, StridesAndOffsetAllocateEnoughStorage) {
  auto ex = build({{"x.shape", {2, 3, 4}}, {"x.strides", {1, 2, 6}}, {"x.offset", 5}, {"x.fill", 2}});
  const TensorView x = ex.bag.tensors.at("x").with_device(Device::cpu());
  EXPECT_EQ(x.stride_vec(), (Shape{1, 2, 6}));
  EXPECT_FALSE(x.is_contiguous());
  for (std::int64_t i = 0; i < x.numel(); ++i) EXPECT_EQ(x.load_flat(i), 2.0);
  auto ex2 = build({{"x.offset", 3}});
  EXPECT_TRUE(ex2.bag.tensors.at("x").is_contiguous());
}

TEST(BuildExample, ScalarsFlagsAndOptions) {
  auto ex = build({{"scalars.scale", 2.0}, {"scalars.lower_bound", nullptr}, {"flags.use_qk_l2norm_in_kernel", false},
                   {"flags.return_lse", true}},
                  {{"extra", true}, {"deep", true}, {"entry", "reference"}});
  EXPECT_EQ(ex.bag.scalar("scale"), 2.0);
  EXPECT_FALSE(ex.bag.scalar("lower_bound").has_value());
  EXPECT_FALSE(ex.bag.flag("use_qk_l2norm_in_kernel", true));
  EXPECT_TRUE(ex.bag.flag("return_lse"));
  EXPECT_TRUE(ex.options.extra);
  EXPECT_TRUE(ex.options.deep);
  EXPECT_EQ(ex.options.entry, Entry::reference);
}

TEST(BuildExample, ScalarsTakeNonFiniteStrings) {
  auto ex = build({{"scalars.scale", "inf"}, {"scalars.lower_bound", "nan"}});
  EXPECT_EQ(ex.bag.scalar("scale"), INFINITY);
  EXPECT_TRUE(std::isnan(*ex.bag.scalar("lower_bound")));
}

TEST(BuildExample, AliasSharesTheOtherTensorsMemory) {
  auto ex = build({{"padded.alias", "x"}, {"padded.shape", {3}}, {"padded.dtype", "bf16"}});
  const TensorView& p = ex.bag.tensors.at("padded");
  const TensorView& x = ex.bag.tensors.at("x");
  EXPECT_EQ(p.data, x.data);
  EXPECT_EQ(p.shape(), Shape{3});
  EXPECT_TRUE(p.is_contiguous()) << "a shape override drops the fixture's strides";
  EXPECT_TRUE(p.device.is_cpu()) << "the alias keeps its own device label";
  EXPECT_THROW(build({{"padded.alias", "x"}, {"padded.shape", {4, 4}}}), CatalogError) << "reaches past x";
  EXPECT_THROW(build({{"padded.alias", "nope"}}), CatalogError);
}

TEST(BuildExample, AddsAWholeTensor) {
  auto ex = build({{"extra_t", {{"shape", {2}}, {"dtype", "i64"}, {"device", "cuda:1"}, {"values", {4, 5}}}}});
  const TensorView& t = ex.bag.tensors.at("extra_t");
  EXPECT_EQ(t.dtype, DType::i64);
  EXPECT_EQ(t.device, Device::cuda(1));
}

TEST(BuildExample, ErrorsAreCatalogErrors) {
  EXPECT_THROW(build_example({{"fixture", "nope"}}, fixtures()), CatalogError);
  EXPECT_THROW(build_example({{"set", json::object()}}, fixtures()), CatalogError);
  EXPECT_THROW(build_example({{"fixture", "toy"}, {"base", "toy"}}, fixtures()), CatalogError);
  for (const json& set : {json{{"nope.dtype", "f32"}}, json{{"x.colour", "red"}}, json{{"x.dtype", "f8"}},
                          json{{"x.device", "tpu"}}, json{{"x.shape", {-1}}}, json{{"x.values", {1, 2}}},
                          json{{"idx.values", {"nan", 1}}}, json{{"scalars.scale", "big"}}, json{{"flags.f", 1}},
                          json{{"x", 3}}, json{{"nope", nullptr}}, json{{"x.strides", {1}}}, json{{"x.strides", {-3, 1}}}})
    EXPECT_THROW(build(set), CatalogError) << set.dump();
  EXPECT_THROW(build(json::object(), {{"fast", true}}), CatalogError);
  EXPECT_THROW(build(json::object(), {{"entry", "gpu"}}), CatalogError);
}

}  // namespace
}  // namespace kparity::test
