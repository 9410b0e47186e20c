#pragma once
// The generator side of an op, one OpFuzzSpec per op; op_specs() lists them all.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {

// Everything the fuzzer knows about one op: how to draw valid calls of it, which edge buckets exist,
// and the absolute error floor of the shared differential rule (see differential.hpp).
struct OpFuzzSpec {
  std::string op;
  std::function<Call(const GenConfig&)> draw;  // inside a RapidCheck property (draws with *gen)
  std::vector<std::string> buckets;            // every bucket `draw` can note, for coverage
  // The documented absolute floor for output `name` of `call` (the recipe is next to each number).
  // `oracle`: the oracle's result of the same call (run_oracle) when the caller has one, as the
  // differential rule does; floors that scale with the oracle's magnitudes read them there instead
  // of running the oracle again (nullptr: they run it).
  std::function<double(const Call& call, std::string_view name, const Call* oracle)> abs_floor;
};

// kda_specs() (generators/kda_gen.hpp), kda_chunk_spec() (generators/kda_chunk_gen.hpp), then
// sparse_specs() (generators/sparse_gen.hpp), built once.
const std::vector<OpFuzzSpec>& op_specs();
const OpFuzzSpec& spec_for(std::string_view op);  // throws std::invalid_argument for an unknown op

}  // namespace kparity::fuzz
