#pragma once
// The corpus: calls saved as `kparity run` dumps (ops/dump.hpp's convention: tensors by upstream
// name, __metadata__ "op" plus every scalar and flag, `expected.<name>` oracle outputs), and their
// replay as regression cases.
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/call.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::fuzz {

// Where a dump's expected.* came from (kparity/judge/call.hpp).
using judging::expected_origin;
using judging::ExpectedOrigin;

// Writes `call` to `path`. With `expected`, also its written tensors as expected.<name>.
// `info` goes to __metadata__ under "kparity.<key>" (ignored by `kparity run`).
void write_call(const Call& call, const std::string& path, const Call* expected = nullptr,
                const std::map<std::string, std::string>& info = {});
// Saves `call` under `dir` (created if needed) as <stem>.safetensors with the oracle's results as
// expected.* (left out when the oracle rejects the call) and "kparity.expected": "oracle"; returns
// the path written.
std::string save_call(const Call& call, const std::string& dir, const std::string& stem,
                      const std::map<std::string, std::string>& info = {});

using judging::call_of_bag;  // kparity/judge/call.hpp

// Reads a dump (ops::load_dump, as `kparity run` does) into a Call; `written` and `pure_outputs` come
// from the op. expected.* tensors, if any, go to `expected`, and where they came from to `origin`.
// Throws on a malformed dump.
Call load_call(const std::string& path, std::map<std::string, Tensor>* expected = nullptr,
               ExpectedOrigin* origin = nullptr);

// The .safetensors dumps under a directory (recursively, sorted; *.result.safetensors excluded),
// or the file itself.
std::vector<std::string> corpus_files(const std::string& dir_or_file);

struct ReplayOutcome {
  std::string file;
  std::string op;
  bool passed = true;
  std::vector<std::string> problems;  // one line each
  std::vector<std::string> checks;    // what was checked ("validates", "deterministic", ...)
};
// One dump: it validates cleanly (strict contract, reference entry), the oracle and the faithful
// reference each give the same bits twice, the saved expected.* meet the differential rule against
// today's oracle as a backend's results would (a failure says what was compared and, from the
// dump's ExpectedOrigin, what it means), and every backend implementing the op passes the rule.
ReplayOutcome replay_file(const std::string& path, const std::vector<Backend>& backends);
// Every dump of corpus_files(dir_or_file): one line each, then a count. Exit status: 0 when all
// passed (and there was at least one), 1 otherwise.
int replay_corpus(const std::string& dir_or_file, const std::vector<Backend>& backends, std::ostream& out);

}  // namespace kparity::fuzz
