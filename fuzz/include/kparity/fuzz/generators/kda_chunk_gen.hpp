#pragma once
// Valid kda/chunk calls (fla's chunk_kda) for the fuzzer, and the rewrites its properties need.
//
// A draw starts from a kda/recurrent draw (generators/kda_gen.hpp: values, heads, gates, sequence
// lengths, special values) and recasts it in chunk_kda's convention: [B, T, ...] tensors, varlen
// (B = 1 with cu_seqlens) or equal-length rows (each sequence cut to the shortest non-empty one),
// fp32 states K-first or V-first (state_v_first, or the deprecated transpose_state_layout), the
// in-kernel gate with A_log and dt_bias each possibly left out (bounded gate), beta logits with or
// without allow_neg_eigval, and the options that change nothing (chunk_size, safe_gate where its
// range holds, disable_recompute, return_intermediate_states, cu_seqlens_cpu).
#include <cstdint>
#include <string>
#include <vector>

#include "kparity/fuzz/call.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/judge/floors.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::fuzz {

// Inside a RapidCheck property. Notes the edge buckets of the draw.
Call draw_kda_chunk(const GenConfig& cfg);
// Every bucket draw_kda_chunk can note under `cfg`.
std::vector<std::string> kda_chunk_buckets(const GenConfig& cfg);

// One sequence of a kda/chunk call: batch row `row`, tokens [bos, bos + len) of it.
struct ChunkSequence {
  std::int64_t row = 0, bos = 0, len = 0;
};
std::vector<ChunkSequence> chunk_sequences(const Call& c);
// Whether the call's states are V-first ([N, HV, V, K]): transpose_state_layout when given, else
// state_v_first.
bool chunk_state_v_first(const Call& c);

// Tokens [from, to) (relative to the sequence's start) of sequence `n`.
struct ChunkPiece {
  std::int64_t n = 0, from = 0, to = 0;
};
// A kda/chunk call over the given pieces, one sequence each and in that order, in compact layouts:
// varlen when `c` is (or when the lengths differ), else equal-length rows; each piece starts from
// initial_state[n] when `c` has one; outputs fresh and poisoned.
Call select_chunk_tokens(const Call& c, const std::vector<ChunkPiece>& pieces, bool varlen);

// The kda/recurrent call that computes `c` (kparity/reference/kda_chunk.hpp): tokens flattened,
// V-first states, zeros for an absent A_log or dt_bias, and with allow_neg_eigval the fp32 beta
// 2 * sigmoid(b) computed in `p`'s arithmetic, as kda/chunk's reference does.
Call chunk_as_recurrent(const Call& c, reference::Precision p);
// Values of a recurrent call's out/final_state laid out as `chunk`'s (for comparisons).
Tensor recurrent_result_as_chunk(const Call& recurrent, const Call& chunk, const std::string& name);

// The differential floor of kda/recurrent on the equivalent call (kparity/judge/floors.hpp).
using judging::kda_chunk_abs_floor;

OpFuzzSpec kda_chunk_spec();

}  // namespace kparity::fuzz
