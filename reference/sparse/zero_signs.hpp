#pragma once
// Private to reference/sparse: the sign of an exact zero P.V sum, every channel of a token at once
// (issue 25). exact_sum.hpp's rule: a sum that is exactly zero is -0 iff every term is a -0
// product (a zero factor, and factors of opposite signs). When every weight is +0 or positive (the
// oracle's weights are exp's results), a term w_j v_jd is a -0 product iff v_jd has its sign bit set
// and w_j or v_jd is zero. So the channel's values alone decide most channels, for every head of the
// token: a value with its sign bit clear gives +0, every value -0 gives -0; only a channel whose
// values all have their sign bit set, some non-zero, depends on the head's weights ("open"): it is
// +0 when no weight is zero (a non-zero value meets a non-zero weight), -0 when every weight is zero,
// and otherwise needs the walk over the keys.
#include <cstdint>
#include <vector>

#include "sink_attention.hpp"

namespace kparity::reference::sparse::detail {

// Whether some x[d] is +-0: the test on the bits (x << 1 == 0), in AVX-512/AVX2 clones (compiled for
// baseline x86-64 only, without a 64-bit vector compare, the loop stayed scalar: a per-head pass over
// the channels of every P.V, issue 25).
bool any_zero(const double* x, std::int64_t n);

struct ZeroSigns {
  std::vector<std::uint64_t> zero;  // per channel: the bits of +0.0 or -0.0 (decided channels)
  std::vector<std::uint64_t> open;  // per channel: all ones where the weights decide, else 0
  bool any_open = false;
  bool ready = false;  // compute() has run for the current token; clear it for the next token
  // From the token's values (no-op when ready); needs at least one key.
  void compute(const TokenKeys& keys);
  // num[d] := the decided sign's zero for every channel with num[d] == +-0: zero[d] where not open,
  // where open -0 if `open_negative` else +0 (the caller walks the open channels it cannot decide so).
  void blend(double* num, bool open_negative) const;
};

}  // namespace kparity::reference::sparse::detail
