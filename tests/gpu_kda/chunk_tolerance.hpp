#pragma once
// The chunked kernel's tolerance recipe (testing guide 1.1 and 1.3), next to its numbers.
//
// Baseline: the kernel's own scalar model (chunk_model.hpp, ChunkModel::kernel: fp32, the kernel's
// rounding points, tf32 tensor-core operands, sums in index order). The kernel differs from it only
// by the order of the sums inside an mma step and of the split-K partials, and by CUDA's expf (<= 2
// ulp) against the host's exp. Such an fp32 difference can flip the tf32 rounding of an operand
// downstream: one flip changes a product by at most u = 2^-11 of it. A chunk has four dependent
// tensor-core stages (A -> w, u -> v_new -> o, S), and an error in S is carried into the next chunks
// with contraction (decay <= 1, l2-normalised keys, beta <= 2); 8 u relative to the tensor's largest
// magnitude covers four stages with two flips each. 16-bit outputs also get one storage ulp (a value
// on a rounding boundary may go either way).
//
// Oracle rule (guide 1.3): max |kernel - oracle| <= F * max |model - oracle| + 2 noise(oracle), F = 2:
// the kernel is no less accurate than its own model, whatever the model's error is.
#include <algorithm>
#include <cmath>

#include "compare.hpp"

namespace kparity::gpu_test::chunk_tol {

inline constexpr double kTf32Unit = 1.0 / 2048;  // 2^-11: tf32 keeps 10 explicit mantissa bits
inline constexpr double kFlips = 8;
inline constexpr double kOracleFactor = 2;

inline double max_abs(const TensorView& t) {
  double m = 0;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (std::isfinite(t.load_flat(i))) m = std::max(m, std::abs(t.load_flat(i)));
  return m;
}
inline Tol vs_model(const TensorView& model) {
  return Tol{kFlips * kTf32Unit * max_abs(model), kFlips * kTf32Unit, 1};
}

}  // namespace kparity::gpu_test::chunk_tol
