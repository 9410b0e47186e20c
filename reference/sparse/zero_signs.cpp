// ZeroSigns (zero_signs.hpp): two loops over the channels, on the values' bits, which the compiler
// vectorises (target_clones as in head_lanes.cpp).
#include "zero_signs.hpp"

#include <bit>

#include "lane_clones.hpp"

namespace kparity::reference::sparse::detail {
namespace {

constexpr std::uint64_t kSign = std::uint64_t{1} << 63;

// sign_and[d] = AND over keys of v_jd's bits (bit 63: every value negative-signed); mag_or[d] = OR
// over keys of the bits without the sign (0: every value a zero).
KPARITY_CLONES void scan_channels(std::int64_t D, std::int64_t n, const double* __restrict rows,
                                  std::uint64_t* __restrict sign_and, std::uint64_t* __restrict mag_or) {
  for (std::int64_t d = 0; d < D; ++d) sign_and[d] = ~std::uint64_t{0}, mag_or[d] = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const double* __restrict v = rows + j * D;
    for (std::int64_t d = 0; d < D; ++d) {
      const std::uint64_t u = std::bit_cast<std::uint64_t>(v[d]);
      sign_and[d] &= u;
      mag_or[d] |= u << 1;
    }
  }
}

KPARITY_CLONES void blend_zeros(std::int64_t D, const std::uint64_t* __restrict zero, const std::uint64_t* __restrict open,
                                std::uint64_t open_zero, double* __restrict num) {
  for (std::int64_t d = 0; d < D; ++d) {
    const std::uint64_t u = std::bit_cast<std::uint64_t>(num[d]);
    const std::uint64_t take = -static_cast<std::uint64_t>((u << 1) == 0);
    const std::uint64_t z = (zero[d] & ~open[d]) | (open_zero & open[d]);
    num[d] = std::bit_cast<double>((z & take) | (u & ~take));
  }
}

}  // namespace

KPARITY_CLONES bool any_zero(const double* __restrict x, std::int64_t n) {
  std::uint64_t zero = 0;
  for (std::int64_t d = 0; d < n; ++d) zero |= static_cast<std::uint64_t>((std::bit_cast<std::uint64_t>(x[d]) << 1) == 0);
  return zero != 0;
}

void ZeroSigns::compute(const TokenKeys& keys) {
  if (ready) return;
  const std::int64_t D = keys.D;
  zero.resize(static_cast<std::size_t>(D)), open.resize(static_cast<std::size_t>(D));
  // zero holds sign_and, open holds mag_or, until they are turned into the answer below.
  scan_channels(D, keys.size(), keys.rows.data(), zero.data(), open.data());
  std::uint64_t any = 0;
  for (std::int64_t d = 0; d < D; ++d) {
    const bool all_neg = (zero[d] & kSign) != 0, all_zero = open[d] == 0;
    zero[d] = all_neg && all_zero ? kSign : 0;              // -0 or +0
    open[d] = all_neg && !all_zero ? ~std::uint64_t{0} : 0;  // the weights decide
    any |= open[d];
  }
  any_open = any != 0;
  ready = true;
}

void ZeroSigns::blend(double* num, bool open_negative) const {
  blend_zeros(static_cast<std::int64_t>(zero.size()), zero.data(), open.data(), open_negative ? kSign : 0, num);
}

}  // namespace kparity::reference::sparse::detail
