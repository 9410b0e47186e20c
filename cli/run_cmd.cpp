// `kparity run`: validate a dumped call, run the reference, write outputs, compare expected.*.
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "kparity/core/format.hpp"
#include "kparity/diagnostics/errors.hpp"
#include "kparity/ops/compare.hpp"
#include "kparity/ops/dump.hpp"

#ifndef KPARITY_VERSION
#define KPARITY_VERSION "unknown"
#endif

namespace kparity::cli {
namespace {

namespace fs = std::filesystem;
using ops::Comparison;
using ops::Dump;
using ops::Tolerance;

void print_diagnostics(const std::vector<Diagnostic>& ds) {
  for (const auto& d : ds) std::fprintf(stderr, "%s\n", d.render_text().c_str());
}

std::string default_output(const std::string& dump) {
  fs::path p(dump);
  return (p.parent_path() / (p.stem().string() + ".result.safetensors")).string();
}

Tensor widened(const TensorView& v) {
  Tensor t(DType::f32, v.shape());
  t.copy_from(v);
  return t;
}

bool narrow_float(const TensorView& v) { return v.dtype == DType::bf16 || v.dtype == DType::f16; }

}  // namespace

int run(const RunOptions& o) {
  auto precision = reference::parse_precision(o.precision);
  if (!precision) {
    std::fprintf(stderr, "error: --precision must be oracle or faithful\n");
    return kExitBadInput;
  }
  if (o.backend != "reference") {
    std::fprintf(stderr, "error: --backend %s is not available; this build has: reference\n", o.backend.c_str());
    return kExitBadInput;
  }
  if (o.out_dtype == "f64") {
    // kparity's tensors have no f64 dtype; f32 already carries 16 more mantissa bits than bf16.
    std::fprintf(stderr, "error: --out-dtype f64 is not supported (kparity tensors stop at f32); use --out-dtype f32\n");
    return kExitBadInput;
  }
  if (o.atol.has_value() != o.rtol.has_value()) {
    std::fprintf(stderr, "error: give both --atol and --rtol, or neither\n");
    return kExitBadInput;
  }
  const bool widen = o.out_dtype == "f32";

  Dump dump;
  try {
    dump = ops::load_dump(o.dump);
  } catch (const std::exception& e) {  // SafetensorsError, DumpError, filesystem errors
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
  for (const auto& w : dump.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const ops::OpInfo& info = *dump.op;
  const OpContract* contract = find_op_contract(info.op);
  if (!contract) {
    std::fprintf(stderr, "kparity: internal error: no contract registered for %s\n", std::string(info.op).c_str());
    return kExitInternal;
  }

  // The reference's own default: upstream checks plus every kparity check, deep ones included.
  const ValidateOptions options = ValidateOptions::strict(Entry::reference);
  try {
    print_diagnostics(contract->check(dump.bag, options));
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.full_text().c_str());
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // a required argument is missing from the dump
    std::fprintf(stderr, "error: %s: %s\n", std::string(info.op).c_str(), e.what());
    return kExitBadInput;
  }

  // Oracle rounds only when storing, so running it on fp32 copies of the written tensors gives
  // results not limited by bf16/f16. Faithful keeps the dump's dtypes: they are upstream rounding
  // points (out.dtype drives ReplaySSM's reconstruction), and its results are widened afterwards.
  ArgBag run_bag = dump.bag;
  std::map<std::string, Tensor> wide;
  if (widen && *precision == reference::Precision::oracle) {
    for (auto name : info.written_names()) {
      auto it = run_bag.tensors.find(std::string(name));
      if (it == run_bag.tensors.end() || !narrow_float(it->second)) continue;
      it->second = wide.insert_or_assign(it->first, widened(it->second)).first->second.view();
    }
    std::vector<Diagnostic> ds = contract->validate(run_bag, options);
    bool rejected = std::any_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
    if (rejected) {
      std::fprintf(stderr, "note: the fp32 copies of the outputs break a contract (%s); running in the dump's dtypes\n",
                   ds.front().id.c_str());
      run_bag = dump.bag;
      wide.clear();
    }
  }

  try {
    info.run(run_bag, *precision, options);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.full_text().c_str());
    return e.diagnostic().error_class == ErrorClass::InternalError ? kExitInternal : kExitBadInput;
  }

  std::map<std::string, TensorView> results;
  std::map<std::string, Tensor> converted;
  for (auto name : info.written_names()) {
    auto it = run_bag.tensors.find(std::string(name));
    if (it == run_bag.tensors.end()) continue;  // an absent optional output (lse without return_lse)
    TensorView v = it->second;
    if (widen && narrow_float(v)) v = converted.insert_or_assign(it->first, widened(v)).first->second.view();
    results[it->first] = v;
  }

  int status = kExitOk;
  if (!dump.expected.empty()) {
    std::printf("comparison against expected.* (|got - expected| <= atol + rtol*|expected|):\n");
    for (const auto& [name, exp] : dump.expected) {
      auto r = results.find(name);
      if (r == results.end()) {
        std::printf("  %-14s FAIL  the run wrote no `%s`\n", name.c_str(), name.c_str());
        status = kExitMismatch;
        continue;
      }
      const DType stored = dump.bag.tensors.at(name).dtype;
      Tolerance tol = o.atol ? Tolerance{*o.atol, *o.rtol}
                             : ops::documented_tolerance(info.op, name, stored, exp->dtype());
      Comparison c = ops::compare(r->second, exp->view(), tol);
      if (!c.problem.empty()) {
        std::printf("  %-14s FAIL  %s\n", name.c_str(), c.problem.c_str());
      } else {
        std::printf("  %-14s max_abs %.3e  max_rel %.3e  atol %.1e rtol %.1e  mismatched %lld/%lld  %s\n", name.c_str(),
                    c.max_abs, c.max_rel, tol.atol, tol.rtol, static_cast<long long>(c.mismatched),
                    static_cast<long long>(c.count), c.pass() ? "PASS" : "FAIL");
      }
      if (!c.pass()) status = kExitMismatch;
    }
  }

  const std::string out_path = o.output.empty() ? default_output(o.dump) : o.output;
  try {
    write_safetensors(out_path, results,
                      {{"op", std::string(info.op)},
                       {"precision", o.precision},
                       {"backend", o.backend},
                       {"source", fs::path(o.dump).filename().string()},
                       {"kparity_version", KPARITY_VERSION}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", out_path.c_str(), e.what());
    return kExitBadInput;
  }
  std::printf("wrote %s:", out_path.c_str());
  for (const auto& [name, v] : results)
    std::printf(" %s %s %s;", name.c_str(), py_tuple(v.shape()).c_str(), py_dtype(v.dtype).c_str());
  std::printf("\n");
  return status;
}

}  // namespace kparity::cli
