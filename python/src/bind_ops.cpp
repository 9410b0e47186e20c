// The op table, the scalar references and the dump convention (kparity::ops) from Python. Every
// tensor reaching this file is host memory: kparity/_staging.py copies device tensors first.
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "kparity/ops/dump.hpp"
#include "kparity/ops/op_table.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::py {
namespace {

[[noreturn]] void raise(PyObject* exc, const std::string& msg) {
  PyErr_SetString(exc, msg.c_str());
  throw nb::python_error();
}

std::string_view kind_name(ops::ArgKind k) {
  switch (k) {
    case ops::ArgKind::tensor: return "tensor";
    case ops::ArgKind::scalar: return "scalar";
    case ops::ArgKind::flag: return "flag";
  }
  return "?";
}

nb::dlpack::dtype to_dlpack(DType t) {
  using C = nb::dlpack::dtype_code;
  switch (t) {
    case DType::f32: return {static_cast<std::uint8_t>(C::Float), 32, 1};
    case DType::f16: return {static_cast<std::uint8_t>(C::Float), 16, 1};
    case DType::bf16: return {static_cast<std::uint8_t>(C::Bfloat), 16, 1};
    case DType::i32: return {static_cast<std::uint8_t>(C::Int), 32, 1};
    case DType::i64: return {static_cast<std::uint8_t>(C::Int), 64, 1};
    case DType::boolean: return {static_cast<std::uint8_t>(C::Bool), 8, 1};
    case DType::f64: return {static_cast<std::uint8_t>(C::Float), 64, 1};
  }
  return {};
}

// A host view as a DLPack-exporting nanobind array that keeps `owner` alive.
nb::object to_array(const TensorView& v, nb::handle owner) {
  std::size_t shape[kMaxRank];
  std::int64_t strides[kMaxRank];
  for (int d = 0; d < v.rank; ++d) {
    shape[d] = static_cast<std::size_t>(v.sizes[d]);
    strides[d] = v.strides[d];
  }
  // array_api: an object with __dlpack__ and __dlpack_device__ (numpy.from_dlpack needs one).
  nb::ndarray<nb::array_api> a(v.data, static_cast<std::size_t>(v.rank), shape, owner, strides, to_dlpack(v.dtype),
                  nb::device::cpu::value, 0);
  return nb::cast(a);
}

template <class T>
nb::capsule owning(std::shared_ptr<T> p) {
  auto* keep = new std::shared_ptr<T>(std::move(p));
  return nb::capsule(keep, [](void* q) noexcept { delete static_cast<std::shared_ptr<T>*>(q); });
}

void require_host(const CallArgs& call, const char* fn) {
  for (const auto& t : call.tensors)
    if (t.view.device.is_cuda())
      raise(PyExc_ValueError, fmt::format("{}: argument `{}` is on {}; this function reads host memory (pass a CPU "
                                          "tensor, or a torch tensor that kparity can copy)",
                                          fn, t.name, t.view.device.str()));
}

reference::Precision precision_or_raise(std::string_view p, const char* fn) {
  if (auto v = reference::parse_precision(p)) return *v;
  raise(PyExc_ValueError, fmt::format("{}: precision must be \"oracle\" or \"faithful\", got '{}'", fn, p));
}

nb::dict outputs_dict(const std::map<std::string, Tensor>& owned, nb::handle owner) {
  nb::dict d;
  for (const auto& [name, t] : owned) d[nb::str(name.c_str())] = to_array(t.view(), owner);
  return d;
}

}  // namespace

void bind_ops(nb::module_& m) {
  // A malformed dump or file is bad input: ValueError with the loader's message.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ops::DumpError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const SafetensorsError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  m.def("op_table", [] {
    nb::list rows;
    for (const auto& info : ops::op_table()) {
      nb::list params, written;
      for (const auto& p : info.params)
        params.append(nb::make_tuple(std::string(p.name), std::string(kind_name(p.kind)), std::string(p.default_value),
                                     p.keyword_only));
      for (const auto& w : info.written)
        written.append(nb::make_tuple(std::string(w.name), w.pure, std::string(w.only_if)));
      nb::dict row;
      row["op"] = std::string(info.op);
      row["upstream"] = std::string(info.upstream);
      row["params"] = params;
      row["written"] = written;
      rows.append(row);
    }
    return rows;
  }, "Every op: name, upstream function, parameters (name, kind, default, keyword_only), written tensors (name, pure, only_if).");

  m.def(
      "reference_host",
      [](std::string_view op, std::string_view precision, nb::dict args) {
        const char* fn = "kparity.reference";
        const reference::Precision p = precision_or_raise(precision, fn);
        CallArgs call;
        const ops::OpInfo& info = op_or_raise(op, fn);
        bind_kwargs(call, info, args.ptr(), fn, {}, /*allow_missing=*/true);
        require_host(call, fn);
        auto owned = std::make_shared<std::map<std::string, Tensor>>();
        ops::allocate_outputs(info.op, call.bag, *owned);  // the outputs a caller may leave out
        for (const auto& p : info.params) {
          const std::string name(p.name);
          const bool present = p.kind == ops::ArgKind::tensor   ? call.bag.tensors.count(name) != 0
                               : p.kind == ops::ArgKind::scalar ? call.bag.scalars.count(name) != 0
                                                                : call.bag.flags.count(name) != 0;
          if (p.default_value.empty() && !present)
            raise(PyExc_TypeError, fmt::format("{}() missing required argument '{}' of {}", fn, p.name, info.op));
        }
        translate([&] { ops::run_reference(info.op, call.bag, p, ValidateOptions::strict(Entry::reference)); });
        nb::dict out;
        out["allocated"] = outputs_dict(*owned, owning(owned));
        out["written"] = info.written_by(call.bag);
        return out;
      },
      nb::arg("op"), nb::arg("precision"), nb::arg("args"),
      "Runs the reference on host tensors; returns the outputs it allocated and the names it wrote.");

  m.def(
      "missing_outputs",
      [](std::string_view op, nb::dict args) {
        const char* fn = "kparity.kernel";
        CallArgs call;
        const ops::OpInfo& info = op_or_raise(op, fn);
        bind_kwargs(call, info, args.ptr(), fn, {}, /*allow_missing=*/true);
        std::map<std::string, Tensor> owned;
        ArgBag meta = call.bag;
        for (auto& [name, v] : meta.tensors) v = v.with_device(Device::cpu());  // shapes only: never read
        ops::allocate_outputs(info.op, meta, owned);
        nb::dict d;
        for (const auto& [name, t] : owned)
          d[nb::str(name.c_str())] = nb::make_tuple(t.shape(), std::string(dtype_name(t.dtype())));
        return d;
      },
      "The outputs upstream would allocate that `args` lacks: {name: (shape, dtype name)}.");

  m.def(
      "save_dump",
      [](const std::string& path, std::string_view op, nb::dict args, nb::dict expected, nb::dict info) {
        const char* fn = "kparity.dump";
        CallArgs call;
        const ops::OpInfo& oi = op_or_raise(op, fn);
        bind_kwargs(call, oi, args.ptr(), fn, {}, /*allow_missing=*/true);
        require_host(call, fn);
        std::map<std::string, TensorView> exp;
        for (auto [k, v] : expected) {
          const std::string name = nb::cast<std::string>(k);
          if (!oi.writes(name))
            raise(PyExc_ValueError, fmt::format("{}: expected `{}`: {} writes no tensor `{}`", fn, name, oi.op, name));
          TensorView view = import_tensor(v.ptr(), oi.param(name) ? oi.param(name)->name : "expected", fn, call);
          if (view.device.is_cuda())
            raise(PyExc_ValueError, fmt::format("{}: expected `{}` is on {}; pass host tensors", fn, name, view.device.str()));
          exp.emplace(name, view);
        }
        std::map<std::string, std::string> meta;
        for (auto [k, v] : info) meta.emplace(nb::cast<std::string>(k), nb::cast<std::string>(nb::str(v)));
        ops::save_dump(path, oi.op, call.bag, exp, meta);
      },
      nb::arg("path"), nb::arg("op"), nb::arg("args"), nb::arg("expected"), nb::arg("info"));

  m.def(
      "load_dump",
      [](const std::string& path) {
        auto d = std::make_shared<ops::Dump>(ops::load_dump(path));
        nb::capsule owner = owning(d);
        nb::dict tensors, expected, scalars, flags;
        for (const auto& [name, v] : d->bag.tensors)
          if (!d->allocated.count(name)) tensors[nb::str(name.c_str())] = to_array(v, owner);
        for (const auto& [name, t] : d->expected) expected[nb::str(name.c_str())] = to_array(t->view(), owner);
        for (const auto& [k, v] : d->bag.scalars) scalars[nb::str(k.c_str())] = v;
        for (const auto& [k, v] : d->bag.flags) flags[nb::str(k.c_str())] = v;
        nb::dict out;
        out["op"] = std::string(d->op->op);
        out["tensors"] = tensors;
        out["scalars"] = scalars;
        out["flags"] = flags;
        out["expected"] = expected;
        out["warnings"] = d->warnings;
        return out;
      },
      nb::arg("path"), "Reads a `kparity run` dump: op, tensors, scalars, flags, expected tensors, warnings.");
}

}  // namespace kparity::py
