#pragma once
// The dump convention of `kparity run` (README, "Replaying a call"):
//   * tensors named exactly as the op's arguments (kparity ArgBag names = upstream names);
//   * `expected.<name>` tensors: reference values for outputs, compared after the run;
//   * __metadata__: "op" (kda/recurrent, kda/packed_decode, kda/replayssm_decode,
//     sparse/paged_prefill, sparse/paged_decode); every scalar and flag by its upstream name, as a
//     decimal string ("inf", "-inf", "nan" allowed) or "true"/"false"; "None" (or "none") means the
//     argument is absent. "format" (written by some torch helpers) and keys starting with "kparity."
//     (informational: the fuzzer writes its property, seed and case description there) are ignored.
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/safetensors.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::cli {

// A dump that does not follow the convention; the message says what to change.
class DumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OpRunner {
  std::string_view op;
  std::vector<std::string_view> arguments;  // every tensor argument, for the unknown-name warning
  std::vector<std::string_view> written;    // outputs and in-place-updated tensors, in file order
  std::vector<std::string_view> pure_outputs;  // the subset of `written` whose old contents are never read
  // Adds outputs upstream allocates itself (and a dump therefore may lack), when shapes allow.
  void (*allocate)(ArgBag& bag, std::map<std::string, Tensor>& owned);
  void (*run)(const ArgBag& bag, reference::Precision p, const ValidateOptions& o);
};

const OpRunner* find_runner(std::string_view op);
std::string known_ops();

struct Dump {
  const OpRunner* runner = nullptr;
  SafetensorsFile file;                     // owns the argument tensors (mutated in place by the run)
  std::map<std::string, Tensor> allocated;  // outputs the dump did not carry
  ArgBag bag;
  std::map<std::string, const Tensor*> expected;  // by output name
  std::vector<std::string> warnings;
};

// Reads and interprets a dump; throws SafetensorsError or DumpError.
Dump load_dump(const std::string& path);

}  // namespace kparity::cli
