// kparity.check / kparity.validate and the Diagnostic type.
#include <algorithm>

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "convert.hpp"
#include "errors.hpp"
#include "kparity/diagnostics/catalog.hpp"

namespace kparity::py {
namespace {

// The options every contract entry point takes besides the op's arguments.
constexpr std::string_view kCheckOptions[] = {"entry", "extra", "deep", "warnings"};

ValidateOptions read_options(PyObject* kwargs, const char* fn) {
  ValidateOptions o;
  if (PyObject* e = option(kwargs, "entry"); e && e != Py_None) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_Check(e) ? PyUnicode_AsUTF8AndSize(e, &n) : nullptr;
    const std::string_view v = s ? std::string_view(s, static_cast<std::size_t>(n)) : std::string_view();
    if (v == "kernel") o.entry = Entry::cuda_kernel;
    else if (v == "reference") o.entry = Entry::reference;
    else {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError,
                      fmt::format("{}: entry must be \"kernel\" or \"reference\", got {}", fn,
                                  nb::cast<std::string>(nb::repr(nb::handle(e))))
                          .c_str());
      throw nb::python_error();
    }
  }
  o.extra = option_bool(kwargs, "extra", false, fn);
  o.deep = option_bool(kwargs, "deep", false, fn);
  o.warnings = option_bool(kwargs, "warnings", true, fn);
  return o;
}

// Set by the package: stage(obj, name) -> a host object with obj's shape, strides and dtype.
nb::object& host_stager() {
  static auto* f = new nb::object();
  return *f;
}

bool is_data_dependent(const Diagnostic& d) {
  const CatalogEntry* e = d.id.empty() ? nullptr : active_catalog().by_id(d.id);
  return e == nullptr || e->record.value("dataDependent", false);
}

// The contract on `call`. With deep checks and device tensors, in two passes like the kernel
// launchers (kernels/src/launch_util.hpp): the shape checks on the caller's views, then the data
// checks on host copies of every tensor the op reads (its pure outputs are never read), keeping only
// the data-dependent findings (a copy's address must not stand in for the tensor's in overlap checks).
std::vector<Diagnostic> run_contract(CallArgs& call, const ValidateOptions& o, bool first_error, const char* fn) {
  const OpContract* c = find_op_contract(call.op->op);
  if (!c) {
    PyErr_SetString(PyExc_ValueError, fmt::format("{}: {} has no contract", fn, call.op->op).c_str());
    throw nb::python_error();
  }
  auto run = [&](const ArgBag& bag, const ValidateOptions& opts) {
    return translate([&] { return first_error ? c->check(bag, opts) : c->validate(bag, opts); });
  };
  bool device_data = false;
  if (o.deep)
    for (const auto& t : call.tensors) device_data |= t.view.device.is_cuda();
  if (!device_data) return run(call.bag, o);

  ValidateOptions shape = o;
  shape.deep = false;
  shape.deep_pass_follows = true;
  std::vector<Diagnostic> out = run(call.bag, shape);
  if (!first_error && std::any_of(out.begin(), out.end(), [](const Diagnostic& d) { return d.severity == Severity::error; }))
    return out;  // as the launchers: no data pass over a call whose shapes are already wrong

  CallArgs mirrors;
  mirrors.op = call.op;
  mirrors.bag = call.bag;
  const auto pure = call.op->pure_outputs();
  for (const auto& t : call.tensors) {
    if (!t.view.device.is_cuda() || std::find(pure.begin(), pure.end(), t.name) != pure.end()) continue;
    if (!host_stager().is_valid()) {
      PyErr_SetString(PyExc_RuntimeError, "kparity: the host stager is not installed");
      throw nb::python_error();
    }
    nb::object host = host_stager()(nb::handle(t.object), nb::str(t.name.data(), t.name.size()), nb::str(fn));
    TensorView v = import_tensor(host.ptr(), t.name, fn, mirrors);
    mirrors.keep.push_back(std::move(host));
    v.device = t.view.device;  // the label stays: device checks must see what the caller passed
    mirrors.bag.tensors[std::string(t.name)] = v;
  }
  ValidateOptions data = o;
  std::vector<Diagnostic> found = translate([&] { return c->validate(mirrors.bag, data); });
  for (auto& d : found) {
    if (!is_data_dependent(d)) continue;
    if (first_error && d.severity == Severity::error) raise_diagnostic(d);
    out.push_back(std::move(d));
  }
  return out;
}

nb::list to_list(std::vector<Diagnostic>&& ds) {
  nb::list l;
  for (auto& d : ds) l.append(nb::cast(std::move(d)));
  return l;
}

}  // namespace

nb::object check_call(CallArgs& call, PyObject* kwargs, bool first_error, const char* fn) {
  const ValidateOptions o = read_options(kwargs, fn);
  return to_list(run_contract(call, o, first_error, fn));
}

void bind_checks(nb::module_& m) {
  nb::class_<Diagnostic>(m, "Diagnostic", "One finding of a contract: a catalog entry, rendered for this call.")
      .def_ro("id", &Diagnostic::id)
      .def_ro("slug", &Diagnostic::slug)
      .def_ro("op", &Diagnostic::op)
      .def_ro("argument", &Diagnostic::argument)
      .def_ro("message", &Diagnostic::message)
      .def_ro("location", &Diagnostic::location)
      .def_ro("notes", &Diagnostic::notes)
      .def_ro("context", &Diagnostic::context)
      .def_prop_ro("severity", [](const Diagnostic& d) { return std::string(severity_name(d.severity)); })
      .def_prop_ro("error_class", [](const Diagnostic& d) { return std::string(error_class_name(d.error_class)); })
      .def("text", &Diagnostic::render_text, "The human rendering: message, location, notes and help.")
      .def("json", &Diagnostic::render_json, "One JSON object (schema_version 1).")
      .def("__str__", [](const Diagnostic& d) { return d.message; })
      .def("__repr__", [](const Diagnostic& d) {
        return fmt::format("<Diagnostic {} {} {}: {}>", d.id, d.slug, severity_name(d.severity), d.message);
      });

  m.def(
      "check",
      [](std::string_view op, nb::kwargs kwargs) {
        CallArgs call;
        bind_kwargs(call, op_or_raise(op, "kparity.check"), kwargs.ptr(), "kparity.check", kCheckOptions);
        return check_call(call, kwargs.ptr(), true, "kparity.check");
      },
      nb::arg("op"), nb::arg("kwargs"));
  m.def(
      "validate",
      [](std::string_view op, nb::kwargs kwargs) {
        CallArgs call;
        bind_kwargs(call, op_or_raise(op, "kparity.validate"), kwargs.ptr(), "kparity.validate", kCheckOptions);
        return check_call(call, kwargs.ptr(), false, "kparity.validate");
      },
      nb::arg("op"), nb::arg("kwargs"));
  m.def("_set_host_stager", [](nb::object f) { host_stager() = std::move(f); });
  m.def("_set_exception_types", &set_exception_types);
  m.def(
      "_view",
      [](nb::handle obj) {
        CallArgs call;
        const TensorView v = import_tensor(obj.ptr(), "x", "kparity._view", call);
        nb::dict d;
        d["data"] = reinterpret_cast<std::uintptr_t>(v.data);
        d["shape"] = v.shape();
        d["strides"] = v.stride_vec();
        d["dtype"] = std::string(dtype_name(v.dtype));
        d["device"] = v.device.str();
        return d;
      },
      "The TensorView kparity builds over a DLPack object (for tests: data pointer, shape, strides, dtype, device).");
}

}  // namespace kparity::py
