// `kparity run`: validate a dumped call, run it on each backend asked for (the scalar reference,
// kparity's CUDA kernel), and for each compare what it wrote with expected.* and write it out.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

#include "commands.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/ops/dump.hpp"
#include "kparity/ops/wide_outputs.hpp"
#include "run_cuda.hpp"
#include "run_results.hpp"

namespace kparity::cli {
namespace {

// The reference's own default: upstream checks plus every kparity check, deep ones included.
const ValidateOptions kStrict = ValidateOptions::strict(Entry::reference);

void print_diagnostics(const std::vector<Diagnostic>& ds) {
  for (const auto& d : ds) std::fprintf(stderr, "%s\n", d.render_text().c_str());
}

std::string slug_of(const std::string& id) {
  const CatalogEntry* e = Catalog::embedded().by_id(id);
  return e ? e->slug : id;
}

// The oracle rounds only when it stores, so on exact f32/f64 copies of the written tensors its
// results are rounded to that dtype instead of the call's (ops/wide_outputs.hpp, with the waiver it
// documents). Faithful keeps the call's dtypes, which are upstream rounding points (out.dtype drives
// ReplaySSM's reconstruction); its results are widened afterwards.
ops::WideCall reference_call(const ops::Dump& dump, reference::Precision p, std::optional<DType> wide) {
  ops::WideCall call;
  call.bag = dump.bag;
  if (!wide || p != reference::Precision::oracle) return call;
  try {
    call = ops::widen_written(dump.op->op, dump.bag, *wide, kStrict);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "note: %s; the oracle stores in the dump's dtypes, widened afterwards\n", e.what());
    call = ops::WideCall{};
    call.bag = dump.bag;
  }
  for (const auto& id : call.waived) {
    std::fprintf(stderr, "note: the %s copies of the written tensors break %s (%s), waived for the oracle run: the call "
                 "passes it in its own dtypes\n", dtype_name(*wide).data(), slug_of(id).c_str(), id.c_str());
  }
  return call;
}

int run_reference_block(const ops::Dump& dump, const ArgBag& inputs, const RunOptions& o, reference::Precision p,
                        bool several) {
  std::printf("reference (%s):\n", o.precision.c_str());
  const std::optional<DType> wide = out_dtype(o);
  const ops::WideCall call = reference_call(dump, p, wide);
  try {
    ops::run_reference(dump.op->op, call, p, kStrict);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.full_text().c_str());
    return e.diagnostic().error_class == ErrorClass::InternalError ? kExitInternal : kExitBadInput;
  }
  BackendResults results;
  for (const auto& name : dump.op->written_by(call.bag)) add_result(results, name, call.bag.tensors.at(name), wide);
  const int status = compare_expected(dump, inputs, results, o);
  return std::max(status, write_results(result_path(o, "reference", several), results, dump, o, "reference"));
}

}  // namespace

int run(const RunOptions& o) {
  auto precision = reference::parse_precision(o.precision);
  if (!precision) {
    std::fprintf(stderr, "error: --precision must be oracle or faithful\n");
    return kExitBadInput;
  }
  if (o.backend != "reference" && o.backend != "cuda" && o.backend != "all") {
    std::fprintf(stderr, "error: --backend must be reference, cuda or all\n");
    return kExitBadInput;
  }
  if (!o.out_dtype.empty() && o.out_dtype != "f32" && o.out_dtype != "f64") {
    std::fprintf(stderr, "error: --out-dtype must be f32 or f64\n");
    return kExitBadInput;
  }
  if (o.atol.has_value() != o.rtol.has_value()) {
    std::fprintf(stderr, "error: give both --atol and --rtol, or neither\n");
    return kExitBadInput;
  }
  const bool want_reference = o.backend != "cuda", want_cuda = o.backend != "reference";
  const CudaAvailability cuda = want_cuda ? cuda_availability() : CudaAvailability{};
  if (o.backend == "cuda" && !cuda.available) {
    std::fprintf(stderr, "error: --backend cuda cannot run here: %s\n", cuda.why.c_str());
    return kExitBadInput;
  }

  ops::Dump dump;
  try {
    dump = ops::load_dump(o.dump);
  } catch (const std::exception& e) {  // SafetensorsError, DumpError, filesystem errors
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
  for (const auto& w : dump.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const std::string op(dump.op->op);
  const OpContract* contract = find_op_contract(op);
  if (!contract) {
    std::fprintf(stderr, "kparity: internal error: no contract registered for %s\n", op.c_str());
    return kExitInternal;
  }
  try {
    print_diagnostics(contract->check(dump.bag, kStrict));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.full_text().c_str());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // a required argument is missing from the dump
    std::fprintf(stderr, "error: %s: %s\n", op.c_str(), e.what());
    return kExitBadInput;
  }
  const bool run_kernel = cuda.available && cuda_implements(op);
  if (o.backend == "cuda" && !run_kernel) {
    std::fprintf(stderr, "error: --backend cuda: kparity has no CUDA kernel for %s\n", op.c_str());
    return kExitBadInput;
  }

  // The reference updates state and rings in place, so the kernel, and the rule that judges a run
  // against saved oracle results (compare_expected), start from a copy taken first.
  std::map<std::string, Tensor> before;
  ArgBag inputs = dump.bag;
  if ((run_kernel && want_reference) || !dump.expected.empty()) {
    for (auto& [name, v] : inputs.tensors) {
      Tensor& copy = before.insert_or_assign(name, Tensor(v.dtype, v.shape())).first->second;
      v = copy.copy_from(v).view();
    }
  }

  const bool several = o.backend == "all";
  int status = kExitOk;
  if (want_reference) status = run_reference_block(dump, inputs, o, *precision, several);
  if (want_cuda) {
    if (!cuda.available) std::printf("cuda: skipped, %s\n", cuda.why.c_str());
    else if (!run_kernel) std::printf("cuda: skipped, kparity has no CUDA kernel for %s\n", op.c_str());
    else status = std::max(status, run_cuda(dump, inputs, o, several));
  }
  return status;
}

}  // namespace kparity::cli
