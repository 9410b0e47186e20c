// find_non_finite (non_finite_scan.hpp).
#include "kparity/core/non_finite_scan.hpp"

#include <array>
#include <cstring>

namespace kparity {
namespace {

// The first i < n with (bits(x_i) & mask) == mask, or n. Blocks of 64 are tested with one
// branch-free OR of flags (a loop the compiler vectorises); only a block holding a hit is searched.
template <class U>
std::int64_t first_in_run(const U* p, std::int64_t stride, std::int64_t n, U mask) {
  constexpr std::int64_t kBlock = 64;
  std::int64_t i = 0;
  if (stride == 1) {
    for (; i + kBlock <= n; i += kBlock) {
      unsigned any = 0;
      for (std::int64_t k = 0; k < kBlock; ++k) any |= static_cast<unsigned>((p[i + k] & mask) == mask);
      if (any) break;
    }
  }
  for (; i < n; ++i)
    if ((p[i * stride] & mask) == mask) return i;
  return n;
}

template <class U>
std::optional<std::vector<std::int64_t>> scan(const TensorView& v, U mask) {
  const U* base = static_cast<const U*>(v.data);
  const int r = v.rank;
  if (r == 0) {
    if ((base[0] & mask) == mask) return std::vector<std::int64_t>{};
    return std::nullopt;
  }
  const std::int64_t n = v.sizes[r - 1], step = v.strides[r - 1];
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t off = 0;
  for (;;) {
    const std::int64_t at = first_in_run(base + off, step, n, mask);
    if (at < n) {
      std::vector<std::int64_t> hit(idx.begin(), idx.begin() + r);
      hit[static_cast<std::size_t>(r - 1)] = at;
      return hit;
    }
    int d = r - 2;
    for (; d >= 0; --d) {  // the next run, in row-major order
      off += v.strides[d];
      if (++idx[d] < v.sizes[d]) break;
      off -= idx[d] * v.strides[d];
      idx[d] = 0;
    }
    if (d < 0) return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<std::int64_t>> find_non_finite(const TensorView& v) {
  if (v.data == nullptr || v.numel() == 0) return std::nullopt;
  switch (v.dtype) {
    case DType::f64: return scan<std::uint64_t>(v, 0x7ff0000000000000ull);
    case DType::f32: return scan<std::uint32_t>(v, 0x7f800000u);
    case DType::f16: return scan<std::uint16_t>(v, 0x7c00u);
    case DType::bf16: return scan<std::uint16_t>(v, 0x7f80u);
    default: return std::nullopt;  // integers and bool: every value finite
  }
}

}  // namespace kparity
