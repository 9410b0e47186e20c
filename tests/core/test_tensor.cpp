#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <cstring>
#include <set>
#include <stdexcept>

#include "kparity/core/random.hpp"
#include "kparity/core/tensor.hpp"

namespace kparity {
namespace {

TEST(Device, StrAndParse) {
  EXPECT_EQ(Device::cpu().str(), "cpu");
  EXPECT_EQ(Device::cuda(3).str(), "cuda:3");
  EXPECT_EQ(Device::parse("cpu"), Device::cpu());
  EXPECT_EQ(Device::parse("cuda"), Device::cuda(0));
  EXPECT_EQ(Device::parse("cuda:7"), Device::cuda(7));
  for (const char* bad : {"", "gpu", "cuda:", "cuda:-1", "cuda:x", "cuda:1x", "cuda:+1", "CPU"}) {
    EXPECT_EQ(Device::parse(bad), std::nullopt) << bad;
  }
  EXPECT_FALSE(Device::cuda(0) == Device::cuda(1));
  EXPECT_FALSE(Device::cpu() == Device::cuda(0));
}

TEST(TensorView, ContiguousStridesFollowTorch) {
  TensorView v(nullptr, DType::f32, {2, 3, 4});
  EXPECT_EQ(v.stride_vec(), (Shape{12, 4, 1}));
  EXPECT_EQ(v.numel(), 24);
  EXPECT_TRUE(v.is_contiguous());
  // torch.empty(2, 0, 3).stride() == (3, 3, 1)
  TensorView e(nullptr, DType::f32, {2, 0, 3});
  EXPECT_EQ(e.stride_vec(), (Shape{3, 3, 1}));
  EXPECT_EQ(e.numel(), 0);
  TensorView s(nullptr, DType::f32, {});
  EXPECT_EQ(s.numel(), 1);
  EXPECT_TRUE(s.is_contiguous());
}

TEST(TensorView, ConstructionErrors) {
  EXPECT_THROW(TensorView(nullptr, DType::f32, {1, 1, 1, 1, 1, 1, 1}), std::invalid_argument);
  EXPECT_THROW(TensorView(nullptr, DType::f32, {2, -1}), std::invalid_argument);
  const Shape shape{2, 3}, strides{1};
  EXPECT_THROW(TensorView(nullptr, DType::f32, shape, strides), std::invalid_argument);
}

TEST(TensorView, IsContiguousRule) {
  const Shape shape{2, 1, 3};
  EXPECT_TRUE(TensorView(nullptr, DType::f32, shape, Shape{3, 99, 1}).is_contiguous());  // size-1 dim
  EXPECT_FALSE(TensorView(nullptr, DType::f32, shape, Shape{1, 1, 2}).is_contiguous());
  EXPECT_FALSE(TensorView(nullptr, DType::f32, shape, Shape{4, 4, 1}).is_contiguous());  // padded rows
  EXPECT_TRUE(TensorView(nullptr, DType::f32, Shape{2, 0}, Shape{7, 5}).is_contiguous());  // empty
}

TEST(TensorView, SizeStrideNegativeDims) {
  TensorView v(nullptr, DType::f32, {2, 3, 4});
  EXPECT_EQ(v.size(-1), 4);
  EXPECT_EQ(v.size(-3), 2);
  EXPECT_EQ(v.stride(-2), 4);
  EXPECT_EQ(v.size(0), 2);
  EXPECT_THROW(v.size(3), std::out_of_range);
  EXPECT_THROW(v.size(-4), std::out_of_range);
  EXPECT_THROW(v.stride(5), std::out_of_range);
}

TEST(TensorView, OffsetsAndRange) {
  const Shape shape{2, 3};
  TensorView v(nullptr, DType::f32, shape, Shape{10, -2});
  const Shape idx{1, 2};
  EXPECT_EQ(v.offset_of(idx), 6);
  EXPECT_EQ(v.offset_range(), (std::pair<std::int64_t, std::int64_t>{-4, 10}));
  EXPECT_EQ(TensorView(nullptr, DType::f32, {0, 5}).offset_range(), (std::pair<std::int64_t, std::int64_t>{0, 0}));
}

TEST(TensorView, LoadStoreEveryDtype) {
  Tensor f32(DType::f32, {2}), f16(DType::f16, {2}), bf16(DType::bf16, {2});
  f32.view().store_flat(0, 0.1);
  EXPECT_EQ(f32.view().load_flat(0), static_cast<double>(0.1f));
  f16.view().store_flat(1, 1.0 + 0x1p-11 + 0x1p-40);  // single rounding from fp64
  EXPECT_EQ(f16.view().load_flat(1), 1.0 + 0x1p-10);
  bf16.view().store_flat(0, 3.0);
  EXPECT_EQ(bf16.view().at({0}), 3.0);

  Tensor b(DType::boolean, {3});
  b.view().store_flat(0, 0.5);
  b.view().store_flat(1, 0.0);
  b.view().store_flat(2, -2.0);
  EXPECT_EQ(b.view().at_int({0}), 1);
  EXPECT_EQ(b.view().at_int({1}), 0);
  EXPECT_EQ(static_cast<int>(b.storage()[2]), 1);
  b.storage()[1] = std::byte{0x7f};  // any non-zero byte reads as true
  EXPECT_EQ(b.view().at({1}), 1.0);

  Tensor i64(DType::i64, {1}), i32(DType::i32, {1});
  const std::int64_t big = (std::int64_t{1} << 62) + 1;  // not representable in fp64
  const Shape z{0};
  i64.view().store_int(z, big);
  EXPECT_EQ(i64.view().load_int(z), big);
  i32.view().store_int(z, -7);
  EXPECT_EQ(i32.view().at_int({0}), -7);
  i32.view().store(z, -7.9);  // torch's cast truncates
  EXPECT_EQ(i32.view().at_int({0}), -7);
  i32.view().store_int(z, std::int64_t{1} << 40);
  EXPECT_EQ(i32.view().at_int({0}), INT32_MAX);
  f32.view().store_flat(0, -2.75);
  EXPECT_EQ(f32.view().load_int_flat(0), -2);
}

TEST(TensorView, F64StoresAndLoadsExactly) {
  Tensor t = Tensor::strided(DType::f64, {2, 3}, {1, 2}, 1);  // column-major, one element of padding
  EXPECT_EQ(t.view().element_size(), 8u);
  EXPECT_EQ(t.storage().size(), 7 * 8u);
  const double vals[] = {0.1, 1.0 + 0x1p-52, 0x1p-1074, -0.0, 1e300, -std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 6; ++i) t.view().store_flat(i, vals[i]);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(std::bit_cast<std::uint64_t>(t.view().load_flat(i)), std::bit_cast<std::uint64_t>(vals[i])) << i;
  }
  // Element [1, 0] is flat index 3 and sits at storage element 1 + 1 (column-major).
  double raw;
  std::memcpy(&raw, t.storage().data() + 2 * 8, 8);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(raw), std::bit_cast<std::uint64_t>(-0.0));
  // A NaN keeps its payload and sign through a store and a load.
  const double nan = std::bit_cast<double>(std::uint64_t{0xfff8'0000'dead'beefull});
  t.view().store_flat(0, nan);
  EXPECT_EQ(std::bit_cast<std::uint64_t>(t.view().load_flat(0)), 0xfff8'0000'dead'beefull);
  // Integer access follows torch's cast, as for the other float dtypes.
  t.view().store_flat(1, -2.75);
  EXPECT_EQ(t.view().load_int_flat(1), -2);
  t.view().store_int(Shape{0, 0}, (std::int64_t{1} << 53) + 1);  // rounds to nearest even in fp64
  EXPECT_EQ(t.view().at({0, 0}), 0x1p53);
}

TEST(TensorView, AccessErrors) {
  Tensor t(DType::f32, {2, 2});
  EXPECT_THROW(t.view().at({2, 0}), std::out_of_range);
  EXPECT_THROW(t.view().at({0}), std::out_of_range);
  EXPECT_THROW(t.view().load_flat(4), std::out_of_range);
  const TensorView c = t.view_on(Device::cuda(0));
  EXPECT_THROW(c.at({0, 0}), std::logic_error);
  EXPECT_THROW(c.store_flat(0, 1.0), std::logic_error);
  EXPECT_THROW(c.at_int({0, 0}), std::logic_error);
}

TEST(TensorView, Select) {
  Tensor t(DType::i32, {2, 3});
  for (int i = 0; i < 6; ++i) t.view().store_flat(i, i);
  const TensorView row = t.view().select(0, 1);
  EXPECT_EQ(row.shape(), (Shape{3}));
  EXPECT_EQ(row.at_int({2}), 5);
  const TensorView col = t.view().select(-1, -1);
  EXPECT_EQ(col.shape(), (Shape{2}));
  EXPECT_EQ(col.stride(0), 3);
  EXPECT_EQ(col.at_int({1}), 5);
  EXPECT_THROW(t.view().select(0, 2), std::out_of_range);
  EXPECT_THROW(t.view().select(2, 0), std::out_of_range);
}

TEST(Tensor, StridedValidation) {
  Tensor t = Tensor::strided(DType::f32, {2, 3}, {4, 1}, 2);
  EXPECT_EQ(t.storage().size(), (2 + 4 + 2 + 1) * 4u);
  EXPECT_EQ(t.storage_offset(), 2);
  EXPECT_FALSE(t.view().is_contiguous());
  t.view().store_flat(4, 9.0);  // [1, 1] lives at 2 + 4 + 1
  float got;
  std::memcpy(&got, t.storage().data() + 7 * 4, 4);
  EXPECT_EQ(got, 9.0f);
  EXPECT_NO_THROW(Tensor::strided(DType::f32, {2, 3}, {4, 1}, 0, 7));
  EXPECT_THROW(Tensor::strided(DType::f32, {2, 3}, {4, 1}, 0, 6), std::invalid_argument);
  EXPECT_THROW(Tensor::strided(DType::f32, {2, 3}, {4, 1}, -1), std::invalid_argument);
  EXPECT_THROW(Tensor::strided(DType::f32, {2, 3}, {-4, 1}, 3), std::invalid_argument);
  EXPECT_NO_THROW(Tensor::strided(DType::f32, {2, 3}, {-4, 1}, 4));
  EXPECT_THROW(Tensor::strided(DType::f32, {2, 3}, {1}), std::invalid_argument);
}

TEST(Tensor, PoisonCoversPaddingWithNaNOrPattern) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    Tensor x = Tensor::strided(t, {2, 2}, {3, 1}, 1);
    x.poison();
    for (std::byte b : x.storage()) ASSERT_EQ(b, std::byte{0xff});
    for (std::int64_t i = 0; i < x.numel(); ++i) EXPECT_TRUE(std::isnan(x.view().load_flat(i)));
  }
  Tensor i(DType::i32, {2});
  i.poison();
  EXPECT_EQ(i.view().at_int({1}), 0x7f7f7f7f);
  Tensor l(DType::i64, {1});
  l.poison();
  EXPECT_EQ(l.view().at_int({0}), 0x7f7f7f7f7f7f7f7fll);
}

// Tensor::poisoned writes the bytes Tensor(dtype, shape).poison() leaves, for every dtype.
TEST(Tensor, PoisonedIsAZeroTensorPoisoned) {
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16, DType::i32, DType::i64, DType::boolean}) {
    const Tensor want = Tensor(t, {3, 5}).poison();
    const Tensor got = Tensor::poisoned(t, {3, 5});
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(got.dtype(), t);
    EXPECT_EQ(got.view().strides[0], want.view().strides[0]);
    EXPECT_EQ(got.storage(), want.storage());
  }
  EXPECT_EQ(Tensor::poisoned(DType::f32, {0, 4}).numel(), 0);
}

TEST(Tensor, FillsAreDeterministicAndRounded) {
  auto bytes = [](std::uint64_t seed, DType t) { return Tensor(t, {4, 33}).fill_normal(seed).storage(); };
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    EXPECT_EQ(bytes(1, t), bytes(1, t));
    EXPECT_NE(bytes(1, t), bytes(2, t));
  }
  Tensor u(DType::bf16, {1000});
  u.fill_uniform(5, -2.0, 3.0);
  Rng rng(5);
  for (std::int64_t i = 0; i < u.numel(); ++i) {
    const double v = u.view().load_flat(i);
    ASSERT_EQ(v, round_to_dtype(rng.uniform(-2.0, 3.0), DType::bf16));
    ASSERT_TRUE(v >= -2.0 && v <= 3.0);
  }
  Tensor k(DType::i64, {500});
  k.fill_int(9, -3, 3);
  std::set<std::int64_t> seen;
  for (std::int64_t i = 0; i < k.numel(); ++i) seen.insert(k.view().load_int_flat(i));
  EXPECT_EQ(seen, (std::set<std::int64_t>{-3, -2, -1, 0, 1, 2, 3}));
  Tensor c(DType::f16, {3});
  c.fill(0.1);
  EXPECT_EQ(c.view().at({2}), round_to_dtype(0.1, DType::f16));
}

TEST(Tensor, FillLeavesPaddingAlone) {
  Tensor x = Tensor::strided(DType::f32, {2, 2}, {3, 1}, 1);
  x.poison().fill(1.0);
  float pad;
  std::memcpy(&pad, x.storage().data(), 4);
  EXPECT_TRUE(std::isnan(pad));
  std::memcpy(&pad, x.storage().data() + 3 * 4, 4);
  EXPECT_TRUE(std::isnan(pad));
}

TEST(Tensor, CopyConvertAndClone) {
  Tensor src = Tensor::strided(DType::f32, {2, 3}, {1, 2});  // column-major
  src.fill_uniform(3, -1.0, 1.0);
  Tensor dst(DType::bf16, {2, 3});
  dst.copy_from(src);
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(dst.view().load_flat(i), round_to_dtype(src.view().load_flat(i), DType::bf16));
  }
  Tensor c = src.clone_contiguous();
  EXPECT_TRUE(c.view().is_contiguous());
  for (std::int64_t i = 0; i < 6; ++i) EXPECT_EQ(c.view().load_flat(i), src.view().load_flat(i));
  Tensor wrong(DType::f32, {3, 2});
  EXPECT_THROW(wrong.copy_from(src), std::invalid_argument);
  EXPECT_THROW(copy_convert(src.view_on(Device::cuda(0)), dst), std::logic_error);

  // To f64 and back: the f32 values widen exactly and narrow back to the same bits.
  Tensor wide(DType::f64, {2, 3});
  wide.copy_from(src);
  Tensor back(DType::f32, {2, 3});
  back.copy_from(wide);
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_EQ(wide.view().load_flat(i), src.view().load_flat(i));
    EXPECT_EQ(back.view().load_flat(i), src.view().load_flat(i));
  }
  // From f64 to bf16 in one rounding (no detour through fp32's rounding).
  Tensor w1(DType::f64, {1}), n1(DType::bf16, {1});
  w1.view().store_flat(0, 1.0 + 0x1p-8 + 0x1p-40);
  n1.copy_from(w1);
  EXPECT_EQ(n1.view().load_flat(0), 1.0 + 0x1p-7);

  Tensor big(DType::i64, {1});
  big.view().store_int(Shape{0}, (std::int64_t{1} << 60) + 3);
  Tensor big2(DType::i64, {1});
  big2.copy_from(big);
  EXPECT_EQ(big2.view().at_int({0}), (std::int64_t{1} << 60) + 3);
}

TEST(Tensor, CopiesOwnTheirStorage) {
  Tensor a = Tensor::strided(DType::f32, {2}, {2}, 1);
  a.fill(1.0);
  Tensor b = a;
  b.fill(2.0);
  EXPECT_EQ(a.view().at({1}), 1.0);
  EXPECT_EQ(b.view().at({1}), 2.0);
  EXPECT_EQ(b.view().data, b.storage().data() + 4);
  Tensor c = std::move(b);
  EXPECT_EQ(c.view().at({0}), 2.0);
  EXPECT_EQ(c.view().data, c.storage().data() + 4);
  a = c;
  EXPECT_EQ(a.view().at({0}), 2.0);
  EXPECT_NE(a.view().data, c.view().data);
}

TEST(Rng, MatchesIndependentXoshiroStream) {
  // Values from a separate Python implementation of splitmix64 seeding + xoshiro256**.
  Rng a(0), b(42);
  EXPECT_EQ(a.next_u64(), 0x99ec5f36cb75f2b4ull);
  EXPECT_EQ(a.next_u64(), 0xbf6e1f784956452aull);
  EXPECT_EQ(a.next_u64(), 0x1a5f849d4933e6e0ull);
  EXPECT_EQ(b.next_u64(), 0x15780b2e0c2ec716ull);
  EXPECT_EQ(b.next_u64(), 0x6104d9866d113a7eull);
  EXPECT_EQ(b.next_u64(), 0xae17533239e499a1ull);
}

TEST(Rng, RangesAndIntegers) {
  Rng r(7);
  for (int i = 0; i < 10000; ++i) {
    const double u = r.uniform();
    ASSERT_TRUE(u >= 0.0 && u < 1.0);
    const double w = r.uniform(1.0, 1.0 + 0x1p-50);
    ASSERT_TRUE(w >= 1.0 && w < 1.0 + 0x1p-50);
    ASSERT_TRUE(std::isfinite(r.normal()));
  }
  int counts[3] = {};
  for (int i = 0; i < 30000; ++i) {
    const std::int64_t v = r.integer(-1, 1);
    ASSERT_TRUE(v >= -1 && v <= 1);
    ++counts[v + 1];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);
  EXPECT_EQ(r.integer(5, 5), 5);
  r.integer(INT64_MIN, INT64_MAX);  // full range must not loop forever
  const std::int64_t near_max = r.integer(INT64_MAX - 1, INT64_MAX);
  EXPECT_GE(near_max, INT64_MAX - 1);
}

}  // namespace
}  // namespace kparity
