#pragma once
// A-priori forward error bounds (issue 18 item 1b): for every element of every tensor an op writes,
// a bound on |backend - exact| that holds for any backend computing the op in fp32 with the
// upstream rounding points, in any summation order. The shared differential rule (fuzz) accepts a
// backend value within it, next to its 2 * err_faithful and floor terms; the derivations, one per
// op, are next to the code (reference/sparse/error_bound.cpp, reference/kda/error_bound.cpp) and
// follow testing.md 1.3a: the classic bound gamma_n(u) * sum |x_i y_i| for every accumulation
// (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., 3.1), carried through the
// nonlinear steps from the exact (oracle) values.
//
// The bound is for the backend's fp32 value before it is stored into the output's dtype: the rule
// adds that store's rounding (and the oracle's own fp32 store) itself.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/diagnostics/checker.hpp"

namespace kparity::reference {

// What the bounds assume of the backend's arithmetic.
struct Fp32Model {
  // Elementwise fp32 operations (add, multiply, divide, sqrt), round to nearest: 2^-24.
  double u = 0x1p-24;
  // Accumulations (dot products, P.V, sums of weights): 2^-23, since tensor cores align and
  // truncate the products of one MMA instead of rounding them (Fasi, Higham, Mikaitis and Pranesh,
  // "Numerical behavior of NVIDIA tensor cores", PeerJ Comput. Sci. 7:e330, 2021); it covers
  // round-to-nearest summation in any order, FMA contraction included.
  double u_acc = 0x1p-23;
  // expf, exp2f, logf: at most 2 ulp (CUDA C++ Programming Guide, single-precision mathematical
  // functions; glibc's are within 1 ulp), i.e. a relative error of 2 * 2^-23.
  double transcendental = 0x1p-22;
};

// Per written tensor (by its upstream name): one bound per element, row-major over its shape.
// +inf where an fp32 intermediate of the backend may overflow or leave fp32's range (then any value
// is acceptable, a non-finite one included, whatever the exact value); 0 where the element is exact
// by construction (zeros of a token with no key, padding rows) or where the exact value is not
// finite (the rule compares classes there).
using ErrorBounds = std::map<std::string, std::vector<double>>;

// Dispatch by op name over the ArgBag of a call (the names of kparity::ops' op table); throws
// std::invalid_argument for an op without bounds and what the argument conversion throws.
ErrorBounds error_bound(std::string_view op, const ArgBag& bag, const Fp32Model& m = {});

// Ops whose oracle run and bound share their work (the sparse ops, issue 32 (3)): oracle_and_bound
// runs the oracle on `bag` as the op table's reference at Precision::oracle under `options` does
// (the same outputs and exceptions) and returns error_bound's bounds of the same call.
bool has_oracle_and_bound(std::string_view op) noexcept;
ErrorBounds oracle_and_bound(std::string_view op, const ArgBag& bag, const ValidateOptions& options,
                             const Fp32Model& m = {});

// gamma_n(u) = n u / (1 - n u), +inf once n u >= 1.
double gamma_n(double n, double u) noexcept;
// Half an ulp at 1 (2^-24, 2^-11, 2^-8 for f32, f16, bf16; 0 for integers): the relative error of a
// store into `t`, for a normal result.
double unit_roundoff(DType t) noexcept;
// Half the smallest subnormal of `t` (0 for integers): the absolute error of a store near zero.
double underflow_unit(DType t) noexcept;
// The magnitude from which a store into `t` rounds to infinity (its largest finite value plus half
// an ulp: 65520 for f16); +inf for integers.
double store_overflow(DType t) noexcept;

}  // namespace kparity::reference
