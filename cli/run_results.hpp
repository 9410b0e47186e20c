#pragma once
// What every `kparity run` backend does with the tensors it wrote: widen them for --out-dtype,
// compare them with the dump's expected.* tensors, write them to the backend's result file. Each
// backend prints one block: a header line, then its lines indented.
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "commands.hpp"
#include "kparity/core/tensor.hpp"
#include "kparity/ops/dump.hpp"

#include "kparity/judge/call.hpp"
#include "kparity/judge/rule.hpp"

namespace kparity::cli {

struct BackendResults {
  std::map<std::string, TensorView> tensors;  // the written tensors by name, in the dtype they are saved in
  std::map<std::string, Tensor> owned;        // the widened copies among them
};

// --out-dtype as a dtype: nothing (keep the call's dtypes), f32 or f64.
std::optional<DType> out_dtype(const RunOptions& o);

// Adds `v` as written tensor `name`, exactly widened to `wide` when it is a narrower float.
void add_result(BackendResults& r, const std::string& name, const TensorView& v, std::optional<DType> wide);

// One line per expected.* tensor (README, "Comparing against expected tensors"): expected.* that
// are kparity's saved oracle results (judging::expected_origin) are judged with the differential rule,
// the saved values in the oracle's place, unless --atol/--rtol ask for the elementwise tolerance;
// any other expected.* with the elementwise tolerance. `inputs`: the call before any run (the rule
// runs the faithful reference and the a-priori bound on it). Returns kExitOk or kExitMismatch.
int compare_expected(const ops::Dump& dump, const ArgBag& inputs, const BackendResults& r, const RunOptions& o);

// The result file of `backend`: -o (default <dump stem>.result.safetensors); when several backends
// run, each gets its own file, the backend's name before the extension (result.cuda.safetensors).
std::string result_path(const RunOptions& o, std::string_view backend, bool several);

// Writes the results with the run's metadata and prints the "wrote" line. Returns kExitOk or
// kExitBadInput (the file cannot be written).
int write_results(const std::string& path, const BackendResults& r, const ops::Dump& dump, const RunOptions& o,
                  std::string_view backend);

// The dump's call as the rule runs it: `inputs` copied, written tensors from the op table,
// validated as the dump was (strict, reference entry).
judging::Call judge_call_of(const ops::Dump& dump, const ArgBag& inputs);
// The differential rule's lines, one per tensor, under `header`; `diff` names the difference
// judged ("b-o" against the oracle, "b-e" against expected.*).
void print_rule(const char* header, const char* diff, const judging::DifferentialResult& r);

}  // namespace kparity::cli
