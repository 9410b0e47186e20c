#pragma once
// Private to reference/kda: kda/chunk's faithful model under the fla-chunk precision profile
// (precision_profile.hpp), i.e. fla's chunked form of chunk_kda in fp32 with its rounding points.
#include <cstdint>

#include "kparity/diagnostics/contracts/kda_recurrent.hpp"

namespace kparity::reference::kda::detail {

// One batch row of a kda/chunk call, given as chunk.cpp maps it onto kda/recurrent's arguments
// (state [N, HV, V, K] views, beta already doubled where allow_neg_eigval asks for it), run the way
// fla's chunk_kda computes it: chunks of `chunk_size` tokens per sequence, 16-token sub-chunks.
// Writes r.out and, when given, r.final_state. safe_gate picks fla's other diagonal-block kernel.
void chunk_fla_faithful(const kparity::kda::RecurrentArgs& r, std::int64_t chunk_size, bool safe_gate);

}  // namespace kparity::reference::kda::detail
