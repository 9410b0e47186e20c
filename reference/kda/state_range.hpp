#pragma once
// Private to reference/kda: bounds on the magnitudes of a value head's oracle state, carried from
// token to token, so that the recurrence's two lane passes (kda_detail.hpp recurrent_step) may give
// exact_lanes.hpp's in-range promise and skip the per-element range test (issue 32 (3): the test was
// about a fifth of the operations of the passes that are a third of a kernel-sized kda/recurrent case).
//
// The promise is what dot2's range verdict tests: each product a * b of a pass is an exact zero with a
// zero factor, or of magnitude in [2^-960, 2^1000]. It follows from a range [lo, hi] of the non-zero
// |a| and one of the non-zero |b|: lo * lo_b >= 2^-960 and hi * hi_b <= 2^1000 (with margins for the
// rounding of these two products, and rounding being monotone). The ranges of a pass's a are derived
// from the state's before the token (tracked below) and the token's vectors:
//   decay  a = fl(S c):         non-zero |a| >= lo_S lo_c (no underflow when that is >= 2^-1000),
//                               |a| <= hi_S hi_c;
//   update a = fl(d k + S'):    the exact d k + S' is a multiple of 2^L, L the least of lsb(d) + lsb(k)
//                               and lsb(S') over the non-zero factors, and lsb(x) >= ilogb(x) - 52;
//                               so a non-zero a is >= 2^L (exactly representable: no underflow),
//                               and |a| <= hi_d hi_k + hi_S'.
// Each token's lower bound falls by about 52 binades (the update's lsb argument), so the range is
// measured again (refresh) when it has fallen far or was lost. Whether a pass is promised changes
// which kernel runs, never a result: under the promise the tested verdict is known.
//
// Non-finite values. The ranges are of the finite values only, and the passes' promise is the weak
// one of exact_lanes.hpp (every product of two finite factors in range): a non-finite factor makes
// its product inf or NaN, which leaves the lane's p non-finite for good and fails the lane under
// either kernel. Each step keeps "every finite value within the range": S c, fma(d, k, S') with a
// non-finite operand is not finite (inf * 0 and inf - inf are NaN), and with finite operands it is
// bounded as above (an overflow is excluded by the upper bound's test). So a special-value input
// (a NaN in one row of the state, an infinite v) no longer sends the whole sequence to the tracked
// kernels.
#include <cstddef>

namespace kparity::reference::kda::detail {

// The non-zero magnitudes of a vector's finite values: lo = least non-zero |x| (+inf: none), hi =
// max |x| (0: none); finite: every x is finite.
struct Magnitudes {
  double lo = 0, hi = 0;
  bool finite = true;
};
Magnitudes magnitudes(const double* x, std::size_t n) noexcept;

struct StateRange {
  bool known = false;     // lo and hi bound the state's finite values now
  double lo = 0, hi = 0;  // every finite non-zero |S| >= lo (+inf: none), every finite |S| <= hi
};

// Measures the state (n values) into r when its range is not known.
void refresh(StateRange& r, const double* ST, std::size_t n) noexcept;

// The range of the finite values of fl(S c) (decay) from the state's, and of fl(d k + S') (update)
// from the decayed state's; false where no range follows (a possible underflow or overflow), and r
// then holds nothing.
bool decayed_range(const StateRange& s, const Magnitudes& c, StateRange& r) noexcept;
bool updated_range(const StateRange& s, const Magnitudes& d, const Magnitudes& k, StateRange& r) noexcept;

// Whether every product a * b of finite factors, a in the state's range and b with magnitudes m, is
// in dot2's range (exact_lanes.hpp's weak promise of dot2_scaled / dot2_updated).
bool products_in_range(const StateRange& a, const Magnitudes& m) noexcept;
// Whether every product of two vectors' values is in dot2's range (false where either holds a
// non-finite value: dot2_certify's promise covers every product).
bool products_in_range(const Magnitudes& a, const Magnitudes& b) noexcept;

// The state's range for the next token: `next` where it was derived and has not fallen far, else
// unknown (refresh measures it then).
void carry(StateRange& state, bool derived, const StateRange& next) noexcept;

}  // namespace kparity::reference::kda::detail
