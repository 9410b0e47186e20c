// find_non_finite (core/non_finite_scan.hpp) finds the element an element-by-element scan through
// TensorView::load finds first (row-major index order), on every dtype, contiguous and strided views
// (padding holding non-finite bytes that must not be read as elements), and none where there is none.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <random>
#include <vector>

#include "kparity/core/non_finite_scan.hpp"
#include "kparity/core/tensor.hpp"

namespace kparity {
namespace {

std::optional<std::vector<std::int64_t>> slow_scan(const TensorView& v) {
  std::optional<std::vector<std::int64_t>> hit;
  const Shape shape = v.shape();
  for_each_index(shape, [&](std::span<const std::int64_t> idx) {
    if (!hit && !std::isfinite(v.load(idx))) hit.emplace(idx.begin(), idx.end());
  });
  return hit;
}

TEST(NonFiniteScan, FindsTheFirstNonFiniteElementInIndexOrder) {
  std::mt19937_64 g(25);
  const double specials[] = {NAN, INFINITY, -INFINITY};
  for (DType t : {DType::f64, DType::f32, DType::f16, DType::bf16}) {
    for (int layout = 0; layout < 3; ++layout) {
      for (int round = 0; round < 60; ++round) {
        const std::int64_t a = 1 + static_cast<std::int64_t>(g() % 4), b = 1 + static_cast<std::int64_t>(g() % 5),
                           c = 1 + static_cast<std::int64_t>(g() % 150);
        Tensor x = layout == 0   ? Tensor(t, {a, b, c})
                   : layout == 1 ? Tensor::strided(t, {a, b, c}, {b * (c + 3), c + 3, 1}, 2)  // padded rows
                                 : Tensor::strided(t, {a, b, c}, {1, a, a * b});            // innermost strided
        x.poison();  // padding stays NaN: never an element
        x.fill_normal(static_cast<std::uint64_t>(round));
        const int plants = static_cast<int>(g() % 3);
        for (int k = 0; k < plants; ++k) {
          const std::int64_t i = static_cast<std::int64_t>(g() % static_cast<std::uint64_t>(a * b * c));
          x.view().store_flat(i, specials[g() % 3]);
        }
        const auto want = slow_scan(x.view()), got = find_non_finite(x.view());
        ASSERT_EQ(got.has_value(), want.has_value()) << static_cast<int>(t) << " layout " << layout << " round " << round;
        if (want) EXPECT_EQ(*got, *want);
      }
    }
  }
}

TEST(NonFiniteScan, IntegerEmptyAndScalarViews) {
  Tensor i(DType::i32, {3, 4});
  i.poison();
  EXPECT_FALSE(find_non_finite(i.view()).has_value());
  EXPECT_FALSE(find_non_finite(Tensor(DType::f32, {0, 7}).view()).has_value());
  Tensor s(DType::f32, {});
  EXPECT_FALSE(find_non_finite(s.view()).has_value());
  s.poison();
  ASSERT_TRUE(find_non_finite(s.view()).has_value());
  EXPECT_TRUE(find_non_finite(s.view())->empty());
}

}  // namespace
}  // namespace kparity
