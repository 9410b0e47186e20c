// Tensor::recycled_poisoned and Tensor::recycled_copy (issue 25): the tensors poisoned() and the copy
// constructor make, whose large buffers go back to a per-thread store when released and are reused
// by the next recycled tensor of the thread, with no trace of what they held before.
#include <gtest/gtest.h>

#include <cstddef>
#include <thread>

#include "kparity/core/tensor.hpp"

namespace kparity {
namespace {

constexpr std::int64_t kLarge = std::int64_t{1} << 21;  // f32 elements: 8 MiB, above the 4 MiB threshold

TEST(RecycledTensor, SameTensorsAsPoisonedAndCopy) {
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i32, DType::boolean}) {
    SCOPED_TRACE(std::string(dtype_name(t)));
    for (const Shape& shape : {Shape{3, 5}, Shape{0, 4}, Shape{kLarge}}) {
      const Tensor want = Tensor::poisoned(t, shape), got = Tensor::recycled_poisoned(t, shape);
      EXPECT_EQ(got.shape(), want.shape());
      EXPECT_EQ(got.dtype(), t);
      EXPECT_EQ(got.storage(), want.storage());
      EXPECT_EQ(got.view().data, static_cast<const void*>(got.storage().data()));
    }
  }
  // A strided view with a storage offset: the copy keeps the layout and every byte, padding included.
  Tensor s = Tensor::strided(DType::f32, {2, 3}, {8, 2}, 5, kLarge);
  s.fill_normal(7);
  const Tensor c = Tensor::recycled_copy(s);
  EXPECT_EQ(c.storage(), s.storage());
  EXPECT_EQ(c.storage_offset(), 5);
  EXPECT_EQ(c.view().strides, s.view().strides);
  EXPECT_EQ(c.view().data, static_cast<const void*>(c.storage().data() + 5 * 4));
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(c.view().at({i, j}), s.view().at({i, j}));
}

TEST(RecycledTensor, ReleasedBufferIsReusedWithoutItsOldContents) {
  // 24 MiB, then requests of 20 MiB: larger than any buffer another test of this process released,
  // so the store has exactly one buffer that fits.
  const void* first = nullptr;
  {
    Tensor a = Tensor::recycled_poisoned(DType::f32, {3 * kLarge});
    a.fill(1.5);
    first = a.storage().data();
  }
  // A smaller request is served by the released buffer, poisoned throughout.
  Tensor b = Tensor::recycled_poisoned(DType::f16, {5 * kLarge});
  EXPECT_EQ(static_cast<const void*>(b.storage().data()), first);
  EXPECT_EQ(b.storage(), Tensor::poisoned(DType::f16, {5 * kLarge}).storage());
  // Moved, the tensor still returns its buffer when released; a copy from it is an exact copy.
  Tensor moved = std::move(b);
  const void* second = moved.storage().data();
  EXPECT_EQ(second, first);
  Tensor src(DType::i32, {5 * kLarge / 2});
  src.fill_int(3, -100, 100);
  moved = Tensor();  // released by the move assignment
  const Tensor c = Tensor::recycled_copy(src);
  EXPECT_EQ(static_cast<const void*>(c.storage().data()), second);
  EXPECT_EQ(c.storage(), src.storage());
}

TEST(RecycledTensor, ReleasedOnAnotherThreadOrAfterItsStoreIsGone) {
  // Made on one thread, released on another (that thread's store keeps it, and is destroyed with the
  // thread), and made and kept past a thread's end: every buffer is freed exactly once (ASan/valgrind
  // builds see it; here it must not crash).
  Tensor a = Tensor::recycled_poisoned(DType::f32, {kLarge});
  std::thread([&] { a = Tensor(); }).join();
  Tensor kept;
  std::thread([&] { kept = Tensor::recycled_poisoned(DType::f32, {kLarge}); }).join();
  EXPECT_EQ(kept.numel(), kLarge);
  EXPECT_EQ(kept.storage(), Tensor::poisoned(DType::f32, {kLarge}).storage());
}

}  // namespace
}  // namespace kparity
