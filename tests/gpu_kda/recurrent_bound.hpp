#pragma once
// The tolerance recipe of the recurrent KDA prefill kernel (issue 19 item 4; testing guide 1.3a):
// an a-priori forward error bound, computed per call along the exact (fp64) trajectory, on the
// difference between the exact result and ANY fp32 implementation with the spec's rounding points
// (kda.md A.3-A.7) that sums its dot products in any order, with or without FMA, and evaluates
// exp/log/sigmoid within 2 ulp. The kernel and the faithful reference are two such
// implementations; the bound replaces the former fixed kRecurrentOut (1e-3/1e-2) and
// kRecurrentState (2e-3/1e-2), which had no derivation. Derivation in recurrent_bound.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/reference/kda.hpp"

namespace kparity::gpu_test {

struct RecurrentBound {
  // Exact values (fp64 trajectory of A.7) and the bound on |fp32 result - exact| before the result
  // is rounded to its storage dtype: out [T, HV, V], final state [N, HV, V, K].
  std::vector<double> out, out_bound, state, state_bound;
  // max over state rows of bound / |row|_2: the recipe is first order, valid while this is small.
  double worst_relative_state_bound = 0.0;
};

// Uses the host views of `call` (inputs only; out and final_state are not read).
RecurrentBound recurrent_bound(const kparity::kda::RecurrentArgs& call);

// Every element of `got` (stored in its own dtype) lies in [rt(x - b), rt(x + b)], x the exact value
// and b its bound: rounding to nearest is monotone, so these are exactly the values an fp32 result
// within the bound can store (a legitimate rounding flip is allowed, nothing more). Reports per
// testing guide 1.8; `share`, when given, receives the largest |got - x| / (largest allowed |got - x|).
::testing::AssertionResult within_rounded(const TensorView& got, const std::vector<double>& exact,
                                          const std::vector<double>& bound, const std::string& what,
                                          double* share = nullptr);

}  // namespace kparity::gpu_test
