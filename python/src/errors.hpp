#pragma once
// kparity diagnostics as Python exceptions. The classes are Python's (kparity/_errors.py: ContractError
// and one subclass per upstream class, which also derives from ValueError, RuntimeError, ...); the
// package hands them over at import with set_exception_types().
#include <nanobind/nanobind.h>

#include "kparity/diagnostics/errors.hpp"

namespace kparity::py {

namespace nb = nanobind;

void set_exception_types(nb::dict classes);
// Raises the class registered for d.error_class with (message, diagnostic): str(e) is d.message.
[[noreturn]] void raise_diagnostic(const Diagnostic& d);

// Runs f, turning kparity::Error into the registered Python classes.
template <class F>
decltype(auto) translate(F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    raise_diagnostic(e.diagnostic());
  }
}

}  // namespace kparity::py
