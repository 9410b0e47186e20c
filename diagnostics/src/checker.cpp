#include "kparity/diagnostics/checker.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace kparity {

bool Checker::fail(std::string_view id, std::string where, std::vector<DiagArg> args,
                   std::vector<std::string> notes) {
  // A contract that ignores the stop signal must not report a second "first" error.
  if (stopped_) return true;
  if (std::find(options_.waived.begin(), options_.waived.end(), id) != options_.waived.end()) return false;
  std::string location;
  location.reserve(op_.size() + 2 + where.size());
  location.append(op_).append("::").append(where);
  Diagnostic d = make_diagnostic(id, std::move(location), std::move(args), std::move(notes));
  d.add_context(std::string("while validating the inputs of ").append(op_));
  if (d.severity != Severity::error) {
    if (options_.warnings) diags_.push_back(std::move(d));
    return false;
  }
  diags_.push_back(std::move(d));
  if (mode_ == Mode::first_error) stopped_ = true;
  return stopped_;
}

bool Checker::has_error() const noexcept {
  return std::any_of(diags_.begin(), diags_.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
}

const TensorView* ArgBag::tensor(std::string_view name) const {
  auto it = tensors.find(std::string(name));
  return it == tensors.end() ? nullptr : &it->second;
}

std::optional<double> ArgBag::scalar(std::string_view name) const {
  auto it = scalars.find(std::string(name));
  if (it == scalars.end()) return std::nullopt;
  return it->second;
}

bool ArgBag::flag(std::string_view name, bool fallback) const {
  auto it = flags.find(std::string(name));
  return it == flags.end() ? fallback : it->second;
}

const TensorView& ArgBag::required(std::string_view name) const {
  if (const TensorView* t = tensor(name)) return *t;
  throw std::invalid_argument("missing required tensor argument `" + std::string(name) + "`");
}

double ArgBag::required_scalar(std::string_view name) const {
  if (auto v = scalar(name)) return *v;
  throw std::invalid_argument("missing required scalar argument `" + std::string(name) + "`");
}

std::string arg_loc(std::string_view name) { return "arg[" + std::string(name) + "]"; }

std::string arg_loc(std::string_view name, std::string_view suffix) {
  std::string loc = arg_loc(name);
  // Both "dtype" and ".dtype" are accepted, so call sites read naturally either way.
  if (!suffix.empty() && suffix.front() != '.' && suffix.front() != '[') loc += '.';
  loc += suffix;
  return loc;
}

}  // namespace kparity
