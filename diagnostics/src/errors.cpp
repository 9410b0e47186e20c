#include "kparity/diagnostics/errors.hpp"

#include <utility>

namespace kparity {

Error::Error(Diagnostic d) : diag_(std::move(d)), what_(diag_.message) {}

void throw_diagnostic(Diagnostic d) {
  switch (d.error_class) {
    case ErrorClass::ValueError: throw ValueError(std::move(d));
    case ErrorClass::RuntimeError: throw RuntimeError(std::move(d));
    case ErrorClass::IndexError: throw IndexError(std::move(d));
    case ErrorClass::TypeError: throw TypeError(std::move(d));
    case ErrorClass::NotImplementedError: throw NotImplementedError(std::move(d));
    case ErrorClass::AssertionError: throw AssertionError(std::move(d));
    case ErrorClass::ZeroDivisionError: throw ZeroDivisionError(std::move(d));
    case ErrorClass::InternalError: throw InternalError(std::move(d));
  }
  throw InternalError(std::move(d));
}

void throw_internal(std::string what) {
  Diagnostic d;
  d.error_class = ErrorClass::InternalError;
  d.severity = Severity::error;
  d.message = "internal error: " + what + "; this is a bug in kparity, please report it";
  throw InternalError(std::move(d));
}

bool Status::ok() const noexcept { return first_error() == nullptr; }

const Diagnostic* Status::first_error() const noexcept {
  for (const auto& d : diagnostics)
    if (d.severity == Severity::error) return &d;
  return nullptr;
}

void Status::raise_if_error() const {
  if (const Diagnostic* d = first_error()) throw_diagnostic(*d);
}

}  // namespace kparity
