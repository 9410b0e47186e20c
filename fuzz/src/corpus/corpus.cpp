// Calls as `kparity run` dumps and their replay as regression cases (corpus.hpp).
#include "kparity/fuzz/corpus/corpus.hpp"

#include <algorithm>
#include <filesystem>
#include <ostream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/harness_mutant.hpp"
#include "kparity/fuzz/properties/differential.hpp"
#include "kparity/ops/dump.hpp"

namespace kparity::fuzz {
namespace {

namespace fs = std::filesystem;

bool same_bits(const Call& a, const Call& b, std::string& which) {
  for (const auto& name : a.written) {
    if (a.at(name).storage() != b.at(name).storage() || a.at(name).dtype() != b.at(name).dtype()) {
      which = name;
      return false;
    }
  }
  return true;
}

// The spec's floor when the op has a fuzz spec; without one the rule degrades to 2 * err_f.
OpFuzzSpec spec_or_bare(const std::string& op) {
  try {
    return spec_for(op);
  } catch (const std::invalid_argument&) {
    OpFuzzSpec s;
    s.op = op;
    return s;
  }
}

bool accepted(const std::string& op, const ArgBag& bag, const ValidateOptions& o) {
  try {
    const auto ds = find_op_contract(op)->validate(bag, o);
    return std::none_of(ds.begin(), ds.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
  } catch (const std::invalid_argument&) {  // a required argument is missing
    return false;
  }
}

// The replay's finding when the saved expected.* break the rule against today's oracle: what was
// compared, by which rule, and what that means for where they came from (issue 23 item 6: a dump
// holding an upstream kernel's outputs was told "today's oracle moved away", which presumed them
// to be kparity's own oracle results).
std::string expected_finding(ExpectedOrigin origin, const std::string& detail) {
  const std::string compared =
      "the saved expected.* (b below) against today's oracle o, by the differential rule a backend's results "
      "meet (|b - o| <= max(2*max|f - o|, floor, a-priori), f today's faithful reference): " + detail;
  if (origin == ExpectedOrigin::oracle)
    return compared + "; they are the oracle's results from when kparity fuzz saved the dump, so today's oracle no "
                      "longer reproduces them (a reference change moved it)";
  return compared + "; they are not marked as kparity's oracle results (kparity.expected), so whatever produced them "
                    "(an upstream kernel, say) differs from today's oracle by more than the rule allows an "
                    "implementation on this call, unless they were kparity oracle results and the oracle has changed "
                    "since";
}

}  // namespace

void write_call(const Call& call, const std::string& path, const Call* expected,
                const std::map<std::string, std::string>& info) {
  std::map<std::string, TensorView> expected_views;
  if (expected != nullptr) {
    for (const auto& name : call.written)
      if (auto it = expected->tensors.find(name); it != expected->tensors.end())
        expected_views.emplace(name, it->second.view());
  }
  std::map<std::string, std::string> meta = info;
  if (!call.description.empty() && !info.count("description")) meta["description"] = call.description;
  if (!call.options.deep) meta["deep"] = "false";
  ops::save_dump(path, call.op, call.bag(), expected_views, meta);
}

std::string save_call(const Call& call, const std::string& dir, const std::string& stem,
                      const std::map<std::string, std::string>& info) {
  fs::create_directories(dir);
  const std::string path = (fs::path(dir) / (stem + ".safetensors")).string();
  std::optional<Call> expected;
  try {
    expected = run_oracle(call);
  } catch (const std::exception&) {
    // A call the reference rejects is still worth keeping (a hostile property's counterexample);
    // it is saved without expected.* tensors.
  }
  std::map<std::string, std::string> meta = info;
  if (expected) meta["expected"] = "oracle";  // expected_origin() reads it back
  write_call(call, path, expected ? &*expected : nullptr, meta);
  return path;
}

Call load_call(const std::string& path, std::map<std::string, Tensor>* expected, ExpectedOrigin* origin) {
  const ops::Dump d = ops::load_dump(path);
  if (origin != nullptr) *origin = expected_origin(d.file.metadata);
  ValidateOptions options = Call{}.options;  // strict, at the reference entry
  if (auto it = d.file.metadata.find("kparity.deep"); it != d.file.metadata.end()) options.deep = it->second != "false";
  // The loader allocates outputs a dump may leave out. An optional one (kda/recurrent's
  // final_state) would give the call an output the saved call did not have: keep only those
  // the op cannot run without, and those the dump has expected.* for (a call captured from an
  // implementation that returns its outputs, as chunk_kda returns final_state, saves no output
  // tensor, only what came back: dropping it would leave that result unjudged).
  ArgBag bag = d.bag;
  for (const auto& [name, t] : d.allocated) {
    if (d.expected.count(name) != 0) continue;
    ArgBag without = bag;
    without.tensors.erase(name);
    if (accepted(std::string(d.op->op), without, options)) bag.tensors.erase(name);
  }
  Call c = call_of_bag(*d.op, bag);
  c.options = options;
  if (auto it = d.file.metadata.find("kparity.description"); it != d.file.metadata.end()) c.description = it->second;
  if (expected != nullptr) {
    expected->clear();
    for (const auto& [name, t] : d.expected) expected->emplace(name, *t);
  }
  return c;
}

std::vector<std::string> corpus_files(const std::string& dir_or_file) {
  std::vector<std::string> out;
  const fs::path root(dir_or_file);
  if (fs::is_regular_file(root)) return {root.string()};
  if (!fs::is_directory(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    const auto ends_with = [&](std::string_view suffix) {
      return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(".safetensors") && !ends_with(".result.safetensors")) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

ReplayOutcome replay_file(const std::string& path, const std::vector<Backend>& backends) {
  ReplayOutcome r;
  r.file = path;
  auto problem = [&](std::string s) {
    r.passed = false;
    r.problems.push_back(std::move(s));
  };
  Call c;
  std::map<std::string, Tensor> expected;
  ExpectedOrigin origin = ExpectedOrigin::unknown;
  try {
    c = load_call(path, &expected, &origin);
  } catch (const std::exception& e) {
    problem(std::string("cannot load: ") + e.what());
    return r;
  }
  r.op = c.op;

  const OpContract* contract = find_op_contract(c.op);
  const auto ds = contract->validate(c.bag(), c.options);
  for (const auto& d : ds)
    if (d.severity == Severity::error) problem("does not validate: " + d.id + " " + d.message);
  if (!r.passed) return r;  // the references would throw; nothing else can be judged
  r.checks.push_back("validates");

  try {
    const Call o1 = run_oracle(c), o2 = run_oracle(c);
    const Call f1 = run_faithful(c), f2 = run_faithful(c);
    std::string which;
    if (!same_bits(o1, o2, which)) problem("the oracle reference is not deterministic: `" + which + "` differs between two runs");
    if (!same_bits(f1, f2, which)) problem("the faithful reference is not deterministic: `" + which + "` differs between two runs");
    if (r.passed) r.checks.push_back("deterministic");

    const OpFuzzSpec spec = spec_or_bare(c.op);
    if (!expected.empty()) {
      // The saved results, judged as if a backend had produced them: kparity's own saved oracle
      // results that today's oracle no longer meets are a regression of the reference; anything
      // else saved there is an implementation that breaks the rule on this call.
      Call saved = c;
      for (const auto& name : c.written) {
        auto it = expected.find(name);
        if (it == expected.end()) {
          problem("expected." + name + " is missing (the dump has expected.* for other outputs)");
          continue;
        }
        saved.tensors.insert_or_assign(name, it->second);
      }
      const DifferentialResult d = judge(c, o1, f1, saved, spec);
      if (!d.pass && !harness_mutant(HarnessMutant::replay_ignores_expected)) problem(expected_finding(origin, d.detail));
      else r.checks.push_back("expected");
    }
    for (const auto& b : backends) {
      if (!b.implements(c.op)) continue;
      try {
        const DifferentialResult d = differential(c, b, spec);
        if (!d.pass) problem(b.name + " breaks the differential rule: " + d.detail);
        else r.checks.push_back("differential/" + b.name);
      } catch (const BackendUnsupported& e) {
        r.checks.push_back("differential/" + b.name + " (unsupported: " + e.what() + ")");
      }
    }
  } catch (const std::exception& e) {
    problem(std::string("a run threw: ") + e.what());
  }
  return r;
}

int replay_corpus(const std::string& dir_or_file, const std::vector<Backend>& backends, std::ostream& out) {
  const auto files = corpus_files(dir_or_file);
  if (files.empty()) {
    out << "no .safetensors dumps under " << dir_or_file << "\n";
    return 1;
  }
  std::size_t passed = 0;
  for (const auto& f : files) {
    const ReplayOutcome r = replay_file(f, backends);
    if (r.passed) {
      ++passed;
      out << fmt::format("PASS {} ({}): {}\n", f, r.op, fmt::join(r.checks, ", "));
    } else {
      out << fmt::format("FAIL {} ({})\n", f, r.op);
      for (const auto& p : r.problems) out << "    " << p << "\n";
    }
  }
  out << fmt::format("{} of {} corpus dumps replayed cleanly\n", passed, files.size());
  return passed == files.size() ? 0 : 1;
}

}  // namespace kparity::fuzz
