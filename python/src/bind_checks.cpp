// kparity.check / kparity.validate and the Diagnostic type.
#include <algorithm>
#include <chrono>

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

// The outputs upstream allocates and returns are not the caller's to pass: sglang's paged prefill and
// decode return `out` (and `lse`), fla's fused_recurrent_kda and chunk_kda return `o` and the final
// state. In the op table they are the written tensors that are keyword-only parameters (not in
// upstream's signature). A call that leaves them out is checked as upstream receives it: each missing
// one is derived as upstream allocates it by the op table's allocate path (ops::output_views, the
// allocate functions kparity.reference fills its outputs with, here as views without storage: no
// memory, a null view overlaps nothing) on the device of the call's first tensor, where upstream
// puts it. An output the caller must pass (the KDA decode ops' positional `out`) stays missing.
void add_upstream_outputs(CallArgs& call) {
  const ops::OpInfo& info = *call.op;
  const auto upstream_allocated = [&](std::string_view name) {
    const ops::Param* p = info.param(name);
    return p != nullptr && p->keyword_only && info.writes(name);
  };
  bool missing = false;
  for (const auto& w : info.written) missing |= upstream_allocated(w.name) && !call.bag.tensor(w.name);
  if (!missing || call.tensors.empty()) return;
  const Device device = call.tensors.front().view.device;
  for (const auto& [name, view] : ops::output_views(info.op, call.bag))
    if (upstream_allocated(name)) call.bag.tensors[name] = view.with_device(device);
}

nb::list to_list(std::vector<Diagnostic>&& ds) {
  nb::list l;
  for (auto& d : ds) l.append(nb::cast(std::move(d)));
  return l;
}

ValidateOptions options_from(const FastOptions& f, const char* fn) {
  ValidateOptions o;
  if (f.entry && f.entry != Py_None) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_Check(f.entry) ? PyUnicode_AsUTF8AndSize(f.entry, &n) : nullptr;
    const std::string_view v = s ? std::string_view(s, static_cast<std::size_t>(n)) : std::string_view();
    if (v == "kernel") o.entry = Entry::cuda_kernel;
    else if (v == "reference") o.entry = Entry::reference;
    else {
      PyErr_Clear();
      PyErr_SetString(PyExc_ValueError,
                      fmt::format("{}: entry must be \"kernel\" or \"reference\", got {}", fn,
                                  nb::cast<std::string>(nb::repr(nb::handle(f.entry))))
                          .c_str());
      throw nb::python_error();
    }
  }
  o.extra = fast_bool(f.extra, "extra", false, fn);
  o.deep = fast_bool(f.deep, "deep", false, fn);
  o.warnings = fast_bool(f.warnings, "warnings", true, fn);
  return o;
}

// The last clean call of each op. A contract without deep checks reads only the views' metadata,
// scalars and flags, so a call whose Values and options equal a clean call's is clean too: the hot
// loop of a model (same buffers every step) skips the ArgBag and the contract.
struct Memo {
  Values key;
  ValidateOptions options;
  bool valid = false;
};

Memo& memo_for(const ops::OpInfo* op) {
  static auto* memos = new std::vector<std::pair<const ops::OpInfo*, Memo>>();
  for (auto& [o, m] : *memos)
    if (o == op) return m;
  memos->emplace_back(op, Memo{});
  return memos->back().second;
}

bool same_options(const ValidateOptions& a, const ValidateOptions& b) {
  return a.entry == b.entry && a.extra == b.extra && a.deep == b.deep && a.warnings == b.warnings &&
         a.deep_pass_follows == b.deep_pass_follows;
}

template <bool FirstError>
PyObject* fast_contract(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const char* fn = FirstError ? "kparity.check" : "kparity.validate";
  return python_call([&]() -> PyObject* {
    Bound b;
    FastOptions fo;
    parse_fast(args, nargs, kwnames, fn, kCheckOptions, b, fo);
    const ValidateOptions o = options_from(fo, fn);
    Memo& memo = memo_for(b.v.op);
    if (!o.deep && memo.valid && same_options(memo.options, o) && memo.key == b.v) return PyList_New(0);
    CallArgs call;
    b.to_call(call);
    add_upstream_outputs(call);
    std::vector<Diagnostic> found = run_contract(call, o, FirstError, fn);
    if (found.empty() && !o.deep) {
      memo.key = b.v;
      memo.options = o;
      memo.valid = true;
    }
    return to_list(std::move(found)).release().ptr();
  });
}

PyObject* fast_check(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fast_contract<true>(args, nargs, kwnames);
}
PyObject* fast_validate(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return fast_contract<false>(args, nargs, kwnames);
}

}  // namespace

nb::object check_call(CallArgs& call, const ValidateOptions& o, bool first_error, const char* fn) {
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

  static PyMethodDef defs[] = {
      {"check", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_check)), METH_FASTCALL | METH_KEYWORDS,
       "check(op, /, *, entry='kernel', extra=False, deep=False, warnings=True, **args) -> list[Diagnostic]\n\n"
       "Runs op's contract on the call; raises the first violation in upstream order (a ContractError\n"
       "subclass that is also the upstream class); returns the warnings."},
      {"validate", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_validate)),
       METH_FASTCALL | METH_KEYWORDS,
       "validate(op, /, *, entry='kernel', extra=False, deep=False, warnings=True, **args) -> list[Diagnostic]\n\n"
       "Every diagnostic of the call, in upstream order."},
  };
  for (auto& d : defs) {
    PyObject* f = PyCFunction_NewEx(&d, nullptr, nb::str("kparity._kparity").ptr());
    if (!f) throw nb::python_error();
    m.attr(d.ml_name) = nb::steal(f);
  }
  m.def(
      "_time_contract",
      [](std::string_view op, std::size_t iters, nb::kwargs kwargs) {
        // For the overhead measurement: the C++ contract alone (kparity::OpContract::check on an
        // ArgBag bound once, upstream options), in ns per call.
        const char* fn = "kparity._time_contract";
        CallArgs call;
        bind_kwargs(call, op_or_raise(op, fn), kwargs.ptr(), fn);
        const ValidateOptions o = ValidateOptions::upstream();
        const OpContract* c = find_op_contract(call.op->op);
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < iters; ++i) translate([&] { return c->check(call.bag, o); });
        const auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters ? iters : 1);
      },
      nb::arg("op"), nb::arg("iters"), nb::arg("kwargs"));
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
