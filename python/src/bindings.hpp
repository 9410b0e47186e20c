#pragma once
// The parts of the extension module kparity._kparity, one function per source file.
#include <nanobind/nanobind.h>

#include "convert.hpp"

namespace kparity::py {

namespace nb = nanobind;

void bind_checks(nb::module_& m);     // check, validate, Diagnostic
void bind_catalog(nb::module_& m);    // catalog look-ups, explain pages, search, examples
void bind_ops(nb::module_& m);        // the op table, reference, dumps
void bind_kernels(nb::module_& m);    // kernel launches (only in builds with the CUDA kernels)
void bind_judge(nb::module_& m);      // the differential rule on one call

// The contract of `call` under options `o`: the list of diagnostics; with first_error, raises the
// first error instead and returns the warnings.
nb::object check_call(CallArgs& call, const ValidateOptions& o, bool first_error, const char* fn);

}  // namespace kparity::py
