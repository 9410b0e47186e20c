#pragma once
// The dump convention: one op call as a safetensors file (README, "Dump convention"), read by
// `kparity run` and the fuzz corpus, written by the fuzz corpus and the Python package.
//   * tensors named exactly as the op's arguments (kparity ArgBag names = upstream names; the op
//     table's aliases are accepted too);
//   * `expected.<name>` tensors: reference values for written tensors, compared after a run;
//   * __metadata__: "op" (a row of op_table()); every scalar and flag by its upstream name, as a
//     decimal string ("inf", "-inf", "nan" allowed) or "true"/"false"; "None" (or "none") means the
//     argument is absent. "format" (written by some torch helpers) and keys starting with "kparity."
//     (informational: the fuzzer writes its property, seed and case description there) are ignored.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/safetensors.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::ops {

// A dump that does not follow the convention; the message says what to change.
class DumpError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct Dump {
  const OpInfo* op = nullptr;
  SafetensorsFile file;                     // owns the argument tensors (mutated in place by a run)
  std::map<std::string, Tensor> allocated;  // outputs the dump did not carry
  ArgBag bag;
  std::map<std::string, const Tensor*> expected;  // by written tensor's name
  std::vector<std::string> warnings;
};

// Reads and interprets a dump; throws SafetensorsError or DumpError. Missing outputs upstream
// allocates are allocated (Dump::allocated).
Dump load_dump(const std::filesystem::path& path);

// Writes one call of `op` as a dump: the bag's tensors by name, each of `expected` as
// expected.<name> (a tensor the op writes), every scalar (shortest round-trip decimal) and flag
// into __metadata__, and each `info` entry as "kparity.<key>". Throws DumpError for an unknown op
// or an expected tensor the op does not write, std::runtime_error when the file cannot be written.
void save_dump(const std::filesystem::path& path, std::string_view op, const ArgBag& bag,
               const std::map<std::string, TensorView>& expected = {},
               const std::map<std::string, std::string>& info = {});

}  // namespace kparity::ops
