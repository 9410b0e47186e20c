#pragma once
// The engine every op's contract runs on. A contract is one function that walks the checks in
// upstream order and calls fail() for each violation; the Checker decides whether to stop (check:
// first error) or go on (validate: all). A check whose preconditions failed must be skipped by
// the contract (return early), never reported twice.
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor_view.hpp"
#include "kparity/diagnostics/diagnostic.hpp"
#include "kparity/diagnostics/errors.hpp"

namespace kparity {

// Which entry point is validating: the CUDA kernel (upstream parity: device checks such as the
// sparse "requires CUDA/HIP tensors" apply) or the host reference (those checks are skipped).
enum class Entry { cuda_kernel, reference };

struct ValidateOptions {
  Entry entry = Entry::cuda_kernel;
  // kparity-only checks (origin kparity). Shape-only ones cost nothing; off = upstream parity.
  bool extra = false;
  // Data-dependent checks that read index/cursor/value data. Views must then be host-readable:
  // the kernel launchers pass host mirrors of device index tensors.
  bool deep = false;
  // Report warnings (severity warning) in validate(); check() never throws a warning.
  bool warnings = true;
  // With deep off: the caller runs the data-dependent checks in a second pass (the kernel launchers'
  // shape pass on device views, then the deep pass on host copies), so a shape check that only
  // stands in for a data check when no data will be read stays quiet, as under deep.
  bool deep_pass_follows = false;
  // Catalog ids whose violations count as passes (not reported, never stop the contract). A
  // documented relaxation for a call that differs from one already validated in full only in what
  // these entries check: `kparity run --out-dtype` runs the oracle on f32/f64 copies of the written
  // tensors, which some dtype entries forbid. Not owned: the ids must outlive the check.
  std::span<const std::string_view> waived = {};

  static ValidateOptions upstream() { return {}; }
  static ValidateOptions strict(Entry e = Entry::cuda_kernel) { return {e, true, true, true}; }
};

// Success-path discipline: constructing a Checker and running a contract that finds nothing
// allocates nothing. `op` is not copied, so it must outlive the Checker (every caller passes the
// op's constexpr name); everything fail() builds is built only when a check fails.
class Checker {
 public:
  enum class Mode { first_error, all };
  Checker(std::string_view op, Mode mode, ValidateOptions options) noexcept
      : op_(op), mode_(mode), options_(options) {}

  const ValidateOptions& options() const noexcept { return options_; }
  std::string_view op() const noexcept { return op_; }
  bool extra() const noexcept { return options_.extra; }
  bool deep() const noexcept { return options_.deep; }
  // The data-dependent checks run in this pass or in a later one (ValidateOptions::deep_pass_follows).
  bool data_checked() const noexcept { return options_.deep || options_.deep_pass_follows; }
  bool reference() const noexcept { return options_.entry == Entry::reference; }

  // Records a violation of catalog entry `id`. `where` is the part after "<op>::", e.g.
  // "arg[g_cache].dtype". Returns true when the contract must stop now (first_error mode after an
  // error). Warnings never stop. Call it only once a check has failed (`bad && c.fail(...)`), so
  // that the location, args and notes are built on the failure path only.
  bool fail(std::string_view id, std::string where, std::vector<DiagArg> args = {},
            std::vector<std::string> notes = {});
  bool stopped() const noexcept { return stopped_; }
  bool has_error() const noexcept;

  std::vector<Diagnostic>& diagnostics() noexcept { return diags_; }

 private:
  std::string_view op_;  // not owned: see the class comment
  Mode mode_;
  ValidateOptions options_;
  bool stopped_ = false;
  std::vector<Diagnostic> diags_;
};

// The three entry-point forms from one contract function.
template <class Args>
using ContractFn = void (*)(const Args&, Checker&);

template <class Args>
std::vector<Diagnostic> run_validate(std::string_view op, ContractFn<Args> fn, const Args& a,
                                     const ValidateOptions& o) {
  Checker c(op, Checker::Mode::all, o);
  fn(a, c);
  return std::move(c.diagnostics());
}

// Throws the first error in upstream order; returns the warnings seen before it.
template <class Args>
std::vector<Diagnostic> run_check(std::string_view op, ContractFn<Args> fn, const Args& a,
                                  const ValidateOptions& o) {
  Checker c(op, Checker::Mode::first_error, o);
  fn(a, c);
  Status s{std::move(c.diagnostics())};
  s.raise_if_error();
  return std::move(s.diagnostics);
}

template <class Args>
Status run_status(std::string_view op, ContractFn<Args> fn, const Args& a, const ValidateOptions& o) noexcept {
  try {
    Checker c(op, Checker::Mode::first_error, o);
    fn(a, c);
    return Status{std::move(c.diagnostics())};
  } catch (const Error& e) {
    return Status{{e.diagnostic()}};
  } catch (const std::exception& e) {
    Diagnostic d;
    d.error_class = ErrorClass::InternalError;
    d.message = e.what();
    d.op = std::string(op);
    return Status{{std::move(d)}};
  }
}

// Arguments by name: the generic form fixtures, the fuzz mutators and `kparity run` use.
// An absent optional tensor or scalar is simply not in the map (Python's None).
struct ArgBag {
  std::map<std::string, TensorView> tensors;
  std::map<std::string, double> scalars;
  std::map<std::string, bool> flags;

  const TensorView* tensor(std::string_view name) const;
  std::optional<double> scalar(std::string_view name) const;
  bool flag(std::string_view name, bool fallback = false) const;
  // Throw std::invalid_argument naming the missing argument.
  const TensorView& required(std::string_view name) const;
  double required_scalar(std::string_view name) const;
};

// One op's contract seen through ArgBag, so catalogue examples and fuzzers need no per-op code.
struct OpContract {
  std::string_view op;
  std::vector<Diagnostic> (*validate)(const ArgBag&, const ValidateOptions&);
  std::vector<Diagnostic> (*check)(const ArgBag&, const ValidateOptions&);
};

// Every op with a contract. Defined in diagnostics/src/op_registry.cpp.
const std::vector<OpContract>& op_contracts();
const OpContract* find_op_contract(std::string_view op);

// Location helpers: "arg[name]", "arg[name].dtype", "arg[name].shape[1]", "arg[name][3]".
std::string arg_loc(std::string_view name);
std::string arg_loc(std::string_view name, std::string_view suffix);

}  // namespace kparity
