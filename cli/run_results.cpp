#include "run_results.hpp"

#include <cstdio>
#include <filesystem>

#include "kparity/core/format.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/ops/compare.hpp"

#include <algorithm>

#include "kparity/judge/runs.hpp"

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

namespace {

// expected.* that are kparity's saved oracle results, judged as the oracle itself would be used
// (issue 23 item 3): the saved values take the oracle's place in the differential rule, so a call
// whose dot products cancel gets the bound its conditioning allows instead of a fixed atol/rtol
// (on the 2^100 conditioning corpus dumps a kernel 1.2e30 from an expected 8.4e23 is inside what
// fp32 allows there, 2.5e30).
int judge_expected(const ops::Dump& dump, const ArgBag& inputs, const BackendResults& r) {
  std::printf("  against expected.* (kparity's saved oracle results: the differential rule with them in the "
              "oracle's place, max|b - e| <= max(2*max|f - e|, floor, a-priori)):\n");
  judging::Call input = judge_call_of(dump, inputs);
  int status = kExitOk;
  std::vector<std::string> judged;
  for (const auto& name : input.written) {
    if (!dump.expected.count(name)) continue;
    if (!r.tensors.count(name)) {
      std::printf("    %-14s FAIL  the run wrote no `%s`\n", name.c_str(), name.c_str());
      status = kExitMismatch;
      continue;
    }
    judged.push_back(name);
  }
  if (judged.empty()) return status;
  judging::Call saved = input, got = input;
  for (const auto& name : judged) {
    saved.tensors.insert_or_assign(name, *dump.expected.at(name));
    const TensorView& v = r.tensors.at(name);
    Tensor t(v.dtype, v.shape());
    t.copy_from(v);
    got.tensors.insert_or_assign(name, std::move(t));
  }
  try {
    const judging::Call faithful = judging::run_faithful(input);
    input.written = judged;
    const judging::DifferentialResult rule = judging::rule(input, saved, faithful, got);
    print_rule(nullptr, "b-e", rule);
    return std::max(status, rule.pass ? kExitOk : kExitMismatch);
  } catch (const std::exception& e) {  // the dump passed its contract: a throw here is ours
    std::fprintf(stderr, "kparity: internal error: the faithful reference for the expected.* rule: %s\n", e.what());
    return kExitInternal;
  }
}

}  // namespace

judging::Call judge_call_of(const ops::Dump& dump, const ArgBag& inputs) {
  return judging::call_of_bag(*dump.op, inputs);  // validated strictly at the reference entry, as the dump was
}

void print_rule(const char* header, const char* diff, const judging::DifferentialResult& r) {
  if (header != nullptr) std::printf("  %s\n", header);
  const char other = diff[2];  // 'o' or 'e': the side that stands for the exact result
  for (const auto& e : r.tensors) {
    if (e.mismatch) {
      std::printf("    %-14s FAIL  %s\n", e.name.c_str(), e.worst.c_str());
      continue;
    }
    std::printf("    %-14s |%s| %.3e  bound %.3e (2*|f-%c| %.3e, floor %.1e, a-priori %.3e)  %s\n", e.name.c_str(), diff,
                e.backend, e.bound, other, 2.0 * e.faithful, e.floor, e.apriori, e.pass ? "PASS" : "FAIL");
  }
  if (!r.pass) std::printf("    worst: %s\n", r.detail.c_str());
}

int compare_expected(const ops::Dump& dump, const ArgBag& inputs, const BackendResults& r, const RunOptions& o) {
  if (dump.expected.empty()) return kExitOk;
  if (!o.atol && judging::expected_origin(dump.file.metadata) == judging::ExpectedOrigin::oracle)
    return judge_expected(dump, inputs, r);
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
