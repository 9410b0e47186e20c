#pragma once
// Exceptions carrying a Diagnostic, one class per Python error class, and a non-throwing Status.
#include <exception>
#include <string>
#include <vector>

#include "kparity/diagnostics/diagnostic.hpp"

namespace kparity {

class Error : public std::exception {
 public:
  explicit Error(Diagnostic d);
  // The rendered message only (what upstream would print).
  const char* what() const noexcept override { return what_.c_str(); }
  const Diagnostic& diagnostic() const noexcept { return diag_; }
  Diagnostic& diagnostic() noexcept { return diag_; }
  // The full human text with location, notes, context frames and help.
  std::string full_text() const { return diag_.render_text(); }
  const std::string& id() const noexcept { return diag_.id; }

 private:
  Diagnostic diag_;
  std::string what_;
};

class ContractError : public Error { using Error::Error; };
class ValueError : public ContractError { using ContractError::ContractError; };
class RuntimeError : public ContractError { using ContractError::ContractError; };
class IndexError : public ContractError { using ContractError::ContractError; };
class TypeError : public ContractError { using ContractError::ContractError; };
class NotImplementedError : public ContractError { using ContractError::ContractError; };
class AssertionError : public ContractError { using ContractError::ContractError; };
class ZeroDivisionError : public ContractError { using ContractError::ContractError; };
class InternalError : public Error { using Error::Error; };

// Throws the subclass that matches d.error_class.
[[noreturn]] void throw_diagnostic(Diagnostic d);
// A broken invariant inside kparity: message ends with the "please report" sentence.
[[noreturn]] void throw_internal(std::string what);

// For launch paths that cannot throw. Holds every diagnostic of a failed call (first = the one
// upstream would raise) and any warnings of a passing one.
struct Status {
  std::vector<Diagnostic> diagnostics;
  bool ok() const noexcept;  // no error-severity diagnostic
  const Diagnostic* first_error() const noexcept;
  static Status success() { return {}; }
  // Throws the first error, if any.
  void raise_if_error() const;
};

}  // namespace kparity
