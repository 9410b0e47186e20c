#include "errors.hpp"

#include <array>

namespace kparity::py {
namespace {

constexpr std::array<ErrorClass, 8> kClasses = {ErrorClass::ValueError,          ErrorClass::RuntimeError,
                                                ErrorClass::IndexError,          ErrorClass::TypeError,
                                                ErrorClass::NotImplementedError, ErrorClass::AssertionError,
                                                ErrorClass::ZeroDivisionError,   ErrorClass::InternalError};

std::array<nb::object, kClasses.size()>& classes() {
  static auto* c = new std::array<nb::object, kClasses.size()>();  // leaked: outlives module teardown
  return *c;
}

}  // namespace

void set_exception_types(nb::dict d) {
  for (std::size_t i = 0; i < kClasses.size(); ++i) {
    const std::string_view name = error_class_name(kClasses[i]);
    nb::str key(name.data(), name.size());
    if (!d.contains(key)) throw nb::key_error(("no exception class for " + std::string(name)).c_str());
    classes()[i] = d[key];
  }
}

void raise_diagnostic(const Diagnostic& d) {
  std::size_t i = 0;
  while (i < kClasses.size() && kClasses[i] != d.error_class) ++i;
  nb::object cls = i < kClasses.size() ? classes()[i] : nb::object();
  if (!cls.is_valid()) {
    PyErr_SetString(PyExc_RuntimeError, d.message.c_str());
    throw nb::python_error();
  }
  nb::object exc = cls(nb::str(d.message.c_str(), d.message.size()), nb::cast(d));
  PyErr_SetObject(cls.ptr(), exc.ptr());
  throw nb::python_error();
}

}  // namespace kparity::py
