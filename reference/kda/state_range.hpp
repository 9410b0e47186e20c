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
// measured again (scan_state) when it has fallen far or was lost; a state holding inf or NaN keeps
// them (no finite arithmetic makes them finite again) and is never promised. Whether a pass is
// promised changes which kernel runs, never a result: under the promise the tested verdict is known.
#include <cstddef>

namespace kparity::reference::kda::detail {

// The non-zero magnitudes of a vector: lo = least non-zero |x| (+inf: every x is zero), hi = max |x|;
// finite: every x is finite (lo and hi mean nothing otherwise).
struct Magnitudes {
  double lo = 0, hi = 0;
  bool finite = true;
};
Magnitudes magnitudes(const double* x, std::size_t n) noexcept;

struct StateRange {
  bool known = false;      // lo and hi bound the state now
  bool nonfinite = false;  // the state holds inf or NaN: for good
  double lo = 0, hi = 0;   // every non-zero |S| >= lo (+inf: the state is zero), every |S| <= hi
};

// Measures the state (n values) into r when its range is not known (and the state finite).
void refresh(StateRange& r, const double* ST, std::size_t n) noexcept;

// The range of fl(S c) (decay) from the state's, and of fl(d k + S') (update) from the decayed
// state's; false where no range follows (a non-finite factor, a possible underflow), and r then holds
// nothing.
bool decayed_range(const StateRange& s, const Magnitudes& c, StateRange& r) noexcept;
bool updated_range(const StateRange& s, const Magnitudes& d, const Magnitudes& k, StateRange& r) noexcept;

// Whether every product a * b, a in the state's range and b with magnitudes m, is in dot2's range.
bool products_in_range(const StateRange& a, const Magnitudes& m) noexcept;
// The same for two vectors' magnitudes (false where either holds a non-finite value).
bool products_in_range(const Magnitudes& a, const Magnitudes& b) noexcept;

// The state's range for the next token: `next` where it was derived and has not fallen far, else
// unknown (refresh measures it then).
void carry(StateRange& state, bool derived, const StateRange& next) noexcept;

}  // namespace kparity::reference::kda::detail
