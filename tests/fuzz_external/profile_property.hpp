#pragma once
// The differential property of one op for a stand-in kernel under a precision profile, on the fixed
// campaign seed: what the profile tests (profile_test.cpp, fla_chunk_profile_test.cpp,
// kparity_chunk_profile_test.cpp) judge; and kda/chunk's faithful model under a profile as such a
// stand-in kernel.
#include <span>
#include <string>
#include <utility>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/kda_chunk_gen.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace kparity::fuzz::test {

// `kind`: "differential" or "differential-special-values"; `large`: kernel-sized shapes.
inline PropertyOutcome profiled_differential(const Backend& b, const std::string& op,
                                             reference::PrecisionProfile profile, int cases,
                                             const std::string& kind = "differential", bool large = false) {
  ImplPropertyOptions po;
  po.kinds = {kind};
  po.profile = profile;
  po.large = large;
  const auto props = implementation_properties(b, {spec_for(op)}, po);
  return run_property(props.at(0), 0x6b70617269747931ull, cases, 100, true);
}

// kda/chunk's faithful model under `profile` as a kernel named `name`; `drop_last` plants a bug:
// each sequence's last token neither updates the state nor (through the intra-chunk matrix) its own
// output's delta term (its k and v zeroed), as a chunk kernel whose row mask is one short would do.
inline Backend chunk_model_kernel(std::string name, reference::PrecisionProfile profile, bool drop_last) {
  return Backend{std::move(name), {"kda/chunk"}, [profile, drop_last](Call& c) {
                   const reference::PrecisionProfileScope scope(profile);
                   Call run = c;
                   if (drop_last) {
                     for (const char* t : {"k", "v"}) run.tensors.insert_or_assign(t, run.at(t).clone_contiguous());
                     for (const auto& s : chunk_sequences(c)) {
                       if (s.len == 0) continue;
                       for (const char* t : {"k", "v"}) {
                         const TensorView token = run.at(t).view().select(0, s.row).select(0, s.bos + s.len - 1);
                         for_each_element(token, [&](std::span<const std::int64_t> i, std::int64_t) { token.store(i, 0.0); });
                       }
                     }
                   }
                   ops::run_reference(run.op, run.bag(), reference::Precision::faithful, run.options);
                   for (const auto& t : c.written) c.tensors.insert_or_assign(t, run.at(t));
                 }};
}

}  // namespace kparity::fuzz::test
