#pragma once
// Private to reference/kda: kda/chunk's faithful model under the kparity-chunk precision profile
// (precision_profile.hpp), i.e. kparity's own chunked CUDA kernel (docs/kda_chunk_kernel.md) in
// fp32 scalar code with that kernel's rounding points.
#include <cstdint>

#include "kparity/diagnostics/contracts/kda_recurrent.hpp"

namespace kparity::reference::kda::detail {

// One batch row of a kda/chunk call, given as chunk.cpp maps it onto kda/recurrent's arguments
// (state [N, HV, V, K] views, beta already doubled where allow_neg_eigval asks for it), run the way
// kparity's chunked kernel computes it: 16-token chunks from each sequence's start, whatever the
// op's chunk_size (fla's argument, not the kernel's). Writes r.out and, when given, r.final_state.
void chunk_kparity_faithful(const kparity::kda::RecurrentArgs& r);

// cvt.rna.tf32.f32: x rounded to nearest, ties away from zero, to TF32's 10 mantissa bits (the
// result still an fp32 value); NaN and inf unchanged, a carry past the largest finite value gives
// inf. Exposed for its test.
float round_to_tf32(float x) noexcept;

}  // namespace kparity::reference::kda::detail
