#pragma once
// The documented absolute floors of the differential rule (rule.hpp), one recipe per op family,
// each next to its numbers (src/floors_kda.cpp, src/floors_sparse.cpp). `oracle`: the oracle's
// result of the same call (run_oracle) when the caller has one, as the rule does; floors that scale
// with the oracle's magnitudes read them there instead of running the oracle again (nullptr: they
// run it).
#include <string_view>

#include "kparity/judge/call.hpp"

namespace kparity::judging {

// The op's floor for written tensor `name` of `call`, looked up by call.op; 0 for an op without one.
double abs_floor(const Call& call, std::string_view name, const Call* oracle = nullptr);

// kda/recurrent, kda/packed_decode, kda/replayssm_decode.
double kda_abs_floor(const Call& call, std::string_view name, const Call* oracle = nullptr);
// kda/chunk: the floor of the kda/recurrent call that computes it (same recurrence, same recipe).
double kda_chunk_abs_floor(const Call& call, std::string_view name, const Call* oracle = nullptr);
// sparse/paged_prefill, sparse/paged_decode (`out` and `lse`; std::invalid_argument for another name).
double sparse_abs_floor(const Call& call, std::string_view name, const Call* oracle = nullptr);

}  // namespace kparity::judging
