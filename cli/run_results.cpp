#include "run_results.hpp"

#include <cstdio>
#include <filesystem>

#include "kparity/core/format.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/ops/compare.hpp"

#ifndef KPARITY_VERSION
#define KPARITY_VERSION "unknown"
#endif

namespace kparity::cli {

namespace fs = std::filesystem;

std::optional<DType> out_dtype(const RunOptions& o) {
  if (o.out_dtype.empty()) return std::nullopt;
  return parse_dtype(o.out_dtype);
}

void add_result(BackendResults& r, const std::string& name, const TensorView& v, std::optional<DType> wide) {
  if (wide && is_floating(v.dtype) && dtype_size(v.dtype) < dtype_size(*wide)) {
    Tensor t(*wide, v.shape());
    t.copy_from(v);
    r.tensors[name] = r.owned.insert_or_assign(name, std::move(t)).first->second.view();
  } else {
    r.tensors[name] = v;
  }
}

int compare_expected(const ops::Dump& dump, const BackendResults& r, const RunOptions& o) {
  if (dump.expected.empty()) return kExitOk;
  int status = kExitOk;
  std::printf("  against expected.* (|got - expected| <= atol + rtol*|expected|):\n");
  for (const auto& [name, exp] : dump.expected) {
    auto got = r.tensors.find(name);
    if (got == r.tensors.end()) {
      std::printf("    %-14s FAIL  the run wrote no `%s`\n", name.c_str(), name.c_str());
      status = kExitMismatch;
      continue;
    }
    const DType stored = dump.bag.tensors.at(name).dtype;
    const ops::Tolerance tol = o.atol ? ops::Tolerance{*o.atol, *o.rtol}
                                      : ops::documented_tolerance(dump.op->op, name, stored, exp->dtype());
    const ops::Comparison c = ops::compare(got->second, exp->view(), tol);
    if (!c.problem.empty()) {
      std::printf("    %-14s FAIL  %s\n", name.c_str(), c.problem.c_str());
    } else {
      std::printf("    %-14s max_abs %.3e  max_rel %.3e  atol %.1e rtol %.1e  mismatched %lld/%lld  %s\n", name.c_str(),
                  c.max_abs, c.max_rel, tol.atol, tol.rtol, static_cast<long long>(c.mismatched),
                  static_cast<long long>(c.count), c.pass() ? "PASS" : "FAIL");
      if (!c.pass() && !c.worst.empty()) std::printf("    %-14s worst %s\n", "", c.worst.c_str());
    }
    if (!c.pass()) status = kExitMismatch;
  }
  return status;
}

std::string result_path(const RunOptions& o, std::string_view backend, bool several) {
  fs::path p(o.output);
  if (o.output.empty()) {
    const fs::path dump(o.dump);
    p = dump.parent_path() / (dump.stem().string() + ".result.safetensors");
  }
  if (!several) return p.string();
  return (p.parent_path() / (p.stem().string() + "." + std::string(backend) + p.extension().string())).string();
}

int write_results(const std::string& path, const BackendResults& r, const ops::Dump& dump, const RunOptions& o,
                  std::string_view backend) {
  // The reference's precision only; a kernel has the precision it was built with.
  std::map<std::string, std::string> meta = {{"op", std::string(dump.op->op)},
                                             {"backend", std::string(backend)},
                                             {"source", fs::path(o.dump).filename().string()},
                                             {"kparity_version", KPARITY_VERSION}};
  if (backend == "reference") meta["precision"] = o.precision;
  if (!o.out_dtype.empty()) meta["out_dtype"] = o.out_dtype;
  try {
    write_safetensors(path, r.tensors, meta);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: cannot write %s: %s\n", path.c_str(), e.what());
    return kExitBadInput;
  }
  std::printf("  wrote %s:", path.c_str());
  for (const auto& [name, v] : r.tensors)
    std::printf(" %s %s %s;", name.c_str(), py_tuple(v.shape()).c_str(), py_dtype(v.dtype).c_str());
  std::printf("\n");
  return kExitOk;
}

}  // namespace kparity::cli
