#pragma once
// One op call as the rule sees it: the op's arguments by upstream name, owned, so a call can be
// cloned, run on any backend (the oracle, the faithful model, a kernel) and judged; the fuzzer
// mutates, saves and replays the same object (kparity/fuzz/call.hpp).
#include <map>
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::judging {

struct Call {
  std::string op;  // "kda/replayssm_decode", ... (the name every layer uses)
  std::map<std::string, Tensor> tensors;
  std::map<std::string, double> scalars;
  std::map<std::string, bool> flags;
  // Tensors the op writes (outputs and in-place state, rings): compared by the differential rule,
  // poisoned before a run when they are pure outputs.
  std::vector<std::string> written;
  std::vector<std::string> pure_outputs;  // subset of `written` whose old contents are never read
  std::string description;                // one line: the drawn shape and knobs, for logs and reports
  // How the references (and the CUDA launchers, with the kernel entry) validate this call. Calls
  // with NaN/Inf where upstream accepts them but kparity's data checks do not (a non-finite value
  // in a selected row) run with `deep` off; the special-values differential properties do that.
  ValidateOptions options = ValidateOptions::strict(Entry::reference);

  // Views into this call's tensors (invalidated when `tensors` is modified).
  ArgBag bag() const;
  // Throw std::out_of_range naming the op and the missing tensor.
  Tensor& at(const std::string& name);
  const Tensor& at(const std::string& name) const;
};

// A Call of `op` holding copies of `bag`'s tensors, its scalars and flags; `written` and
// `pure_outputs` as the op names them for this bag; options are a Call's default (strict, at the
// reference entry: how a dump is validated).
Call call_of_bag(const ops::OpInfo& op, const ArgBag& bag);

// Where a dump's expected.* came from, as far as its metadata says: `oracle` when kparity's fuzzer
// saved them (the fuzz corpus's save_call writes "kparity.expected": "oracle"; dumps it wrote before that key
// existed carry "kparity.property", and save_call has always stored the oracle's results), else
// `unknown` (what the user saved: an upstream kernel's outputs, a hand-edited file).
enum class ExpectedOrigin { oracle, unknown };
ExpectedOrigin expected_origin(const std::map<std::string, std::string>& metadata);

}  // namespace kparity::judging
