// kparity.judge: one call judged in-process by the differential rule (kparity/judge/rule.hpp): the
// call's arguments as they were before it ran, the tensors an implementation wrote, and the rule's
// verdict with its per-tensor details. Every tensor reaching this file is host memory
// (kparity/_judge.py copies device tensors first).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "kparity/judge/rule.hpp"
#include "kparity/judge/runs.hpp"

namespace kparity::py {
namespace {

[[noreturn]] void raise(PyObject* exc, const std::string& msg) {
  PyErr_SetString(exc, msg.c_str());
  throw nb::python_error();
}

void require_host(const TensorView& v, std::string_view name, const char* fn) {
  if (v.device.is_cuda())
    raise(PyExc_ValueError, fmt::format("{}: `{}` is on {}; pass host tensors", fn, name, v.device.str()));
}

nb::dict verdict_dict(const judging::DifferentialResult& r) {
  nb::list tensors;
  for (const auto& e : r.tensors) {
    nb::dict t;
    t["name"] = e.name;
    t["passed"] = e.pass;
    t["mismatch"] = e.mismatch;
    t["error"] = e.backend;
    t["faithful_error"] = e.faithful;
    t["floor"] = e.floor;
    t["bound"] = e.bound;
    t["apriori"] = e.apriori;
    t["ratio"] = e.ratio;
    t["worst"] = e.worst;
    tensors.append(t);
  }
  nb::dict d;
  d["passed"] = r.pass;
  d["detail"] = r.detail;
  d["tensors"] = tensors;
  return d;
}

}  // namespace

void bind_judge(nb::module_& m) {
  m.def(
      "judge_host",
      [](std::string_view op, nb::dict args, nb::dict outputs, std::optional<std::string> profile) {
        const char* fn = "kparity.judge";
        std::optional<reference::PrecisionProfile> p;
        if (profile) {
          p = reference::parse_profile(*profile);
          if (!p)
            raise(PyExc_ValueError, fmt::format("{}: profile must be faithful, tf32-dot (sglang-triton) or fla-chunk, "
                                                "got '{}'", fn, *profile));
        }
        CallArgs call;
        const ops::OpInfo& info = op_or_raise(op, fn);
        bind_kwargs(call, info, args.ptr(), fn, {}, /*allow_missing=*/true);
        for (const auto& t : call.tensors) require_host(t.view, t.name, fn);
        // The outputs upstream allocates that the call left out, as the reference allocates them.
        std::map<std::string, Tensor> allocated;
        ops::allocate_outputs(info.op, call.bag, allocated);
        const judging::Call input = judging::call_of_bag(info, call.bag);
        judging::Call got = input;
        for (auto [k, v] : outputs) {
          const std::string name = nb::cast<std::string>(k);
          if (std::find(input.written.begin(), input.written.end(), name) == input.written.end())
            raise(PyExc_ValueError, fmt::format("{}: outputs[`{}`]: this call of {} writes no tensor `{}`", fn, name, op, name));
          const TensorView view = import_tensor(v.ptr(), name, fn, call);
          require_host(view, name, fn);
          Tensor t(view.dtype, view.shape());
          t.copy_from(view);
          got.tensors.insert_or_assign(name, std::move(t));
        }
        for (const auto& name : input.written)
          if (!outputs.contains(name.c_str()))
            raise(PyExc_ValueError, fmt::format("{}: outputs lacks `{}`, which this call of {} writes", fn, name, op));
        judging::RuleOptions o;
        o.profile = p.value_or(reference::PrecisionProfile::faithful);
        return translate([&] {
          const judging::Call oracle = judging::run_oracle(input);
          const judging::Call faithful = judging::run_faithful(input, o.profile);
          return verdict_dict(judging::rule(input, oracle, faithful, got, o));
        });
      },
      nb::arg("op"), nb::arg("args"), nb::arg("outputs"), nb::arg("profile") = nb::none(),
      "The differential rule's verdict on `outputs` for the call `args` (host tensors).");
}

}  // namespace kparity::py
