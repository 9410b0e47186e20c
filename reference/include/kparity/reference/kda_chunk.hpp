#pragma once
// Scalar reference of kda/chunk (fla's chunk_kda): the KDA recurrence, computed by kda/recurrent's
// reference on each batch row of the call. The chunked algorithm is a reordering of the recurrence's
// sums (spec kda.md A, "chunked = sequential"), so the recurrence is its definition.
//
// Precision: `oracle` is kda/recurrent's oracle; `faithful` is kda/recurrent's faithful mode, i.e. the
// rounding points of fla's fused_recurrent_kda, not those of the chunk pipeline (which stores the
// normalised q and k, the intra-chunk matrices and the per-chunk states in the activation dtype).
// One upstream rounding is kept in both: with allow_neg_eigval, beta = 2 * sigmoid(beta) is an
// fp32 tensor upstream (fla/ops/common/gate.py), and so it is here.
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::reference::kda {

using kparity::kda::ChunkArgs;

// Validates with check_chunk (`options` defaults to every kparity check, deep ones included), then
// writes out and, with output_final_state, final_state; initial_state is only read.
void chunk(const ChunkArgs& args, Precision p, const ValidateOptions& options = ValidateOptions::strict(Entry::reference));

}  // namespace kparity::reference::kda
