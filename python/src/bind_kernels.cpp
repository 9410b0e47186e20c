// kparity.kernel: the CUDA launchers (kernels/include/kparity/kernels/*.hpp) on DLPack device
// tensors, on the caller's stream, never synchronising unless asked (so a call can be captured into
// a CUDA graph). Compiled only when the kernels are built.
#include <cuda_runtime_api.h>

#include <chrono>

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "kparity/kernels/kda.hpp"
#include "kparity/kernels/sparse.hpp"

namespace kparity::py {
namespace {

constexpr std::string_view kKernelOptions[] = {"stream", "extra", "deep", "sync"};

[[noreturn]] void raise(PyObject* exc, const std::string& msg) {
  PyErr_SetString(exc, msg.c_str());
  throw nb::python_error();
}

// Set by the package: current_stream(device_index) -> int handle of the current torch stream.
nb::object& current_stream_fn() {
  static auto* f = new nb::object();
  return *f;
}
// Set by the package: allocate(op, kwargs) -> {name: device tensor} for outputs upstream allocates.
nb::object& allocator_fn() {
  static auto* f = new nb::object();
  return *f;
}

std::uintptr_t handle_of(PyObject* s) {
  if (PyLong_Check(s)) {
    const unsigned long long v = PyLong_AsUnsignedLongLong(s);
    if (PyErr_Occurred()) throw nb::python_error();
    return static_cast<std::uintptr_t>(v);
  }
  nb::handle h(s);
  if (nb::hasattr(h, "__cuda_stream__")) {  // the CUDA stream protocol: (version, handle)
    nb::tuple t = nb::cast<nb::tuple>(h.attr("__cuda_stream__")());
    return nb::cast<std::uintptr_t>(t[1]);
  }
  if (nb::hasattr(h, "cuda_stream")) return nb::cast<std::uintptr_t>(h.attr("cuda_stream"));
  raise(PyExc_TypeError, "kparity.kernel: stream must be an int handle, a torch.cuda.Stream or an object with "
                         "__cuda_stream__");
}

cudaStream_t stream_of(PyObject* kwargs, int device) {
  PyObject* s = option(kwargs, "stream");
  if (s && s != Py_None) return reinterpret_cast<cudaStream_t>(handle_of(s));
  if (!current_stream_fn().is_valid()) return nullptr;
  nb::object h = current_stream_fn()(device);
  return h.is_none() ? nullptr : reinterpret_cast<cudaStream_t>(nb::cast<std::uintptr_t>(h));
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (previous_ != device) {
      if (auto e = cudaSetDevice(device); e != cudaSuccess)
        raise(PyExc_RuntimeError, fmt::format("kparity.kernel: cannot select cuda:{}: {}", device, cudaGetErrorString(e)));
      restore_ = true;
    }
  }
  ~DeviceGuard() {
    if (restore_ && previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
  bool restore_ = false;
};

Status launch(const ops::OpInfo& info, const ArgBag& bag, cudaStream_t stream, const kernels::LaunchOptions& o) {
  const std::string_view op = info.op;
  return translate([&]() -> Status {
    if (op == kda::kReplaySsmDecodeOp) return kernels::kda::replayssm_decode(kda::replayssm_decode_args(bag), stream, o);
    if (op == kda::kPackedDecodeOp) return kernels::kda::packed_decode(kda::packed_decode_args(bag), stream, o);
    if (op == kda::kRecurrentOp) return kernels::kda::recurrent(kda::recurrent_args(bag), stream, o);
    if (op == sparse::kPagedPrefillOp) return kernels::sparse::paged_prefill(sparse::paged_prefill_args(bag), stream, o);
    if (op == sparse::kPagedDecodeOp) return kernels::sparse::paged_decode(sparse::paged_decode_args(bag), stream, o);
    raise(PyExc_ValueError, fmt::format("kparity.kernel: {} has no CUDA kernel", op));
  });
}

// Binds the call, allocates missing outputs on the device (through the package's allocator), and
// checks that every tensor is on one CUDA device. Returns that device.
int prepare(CallArgs& call, nb::kwargs& kwargs, nb::dict& allocated, const char* fn) {
  const ops::OpInfo& info = *call.op;
  bool missing = false;
  for (const auto& w : info.written)
    if ((w.only_if.empty() || call.bag.flag(w.only_if)) && !call.bag.tensor(w.name)) missing = true;
  if (missing && allocator_fn().is_valid()) {
    allocated = nb::cast<nb::dict>(allocator_fn()(nb::str(info.op.data(), info.op.size()), kwargs));
    for (auto [k, v] : allocated) {
      const ops::Param* p = info.param(nb::cast<std::string>(k));
      if (!p) continue;
      const TensorView view = import_tensor(v.ptr(), p->name, fn, call);
      call.tensors.push_back({p->name, v.ptr(), view});
      call.bag.tensors[std::string(p->name)] = view;
    }
  }
  int device = -1;
  const TensorArg* host = nullptr;
  for (const auto& t : call.tensors) {
    if (!t.view.device.is_cuda()) host = host ? host : &t;
    else if (device < 0) device = t.view.device.index;
  }
  if (host || device < 0) {
    // Upstream's own error first (sparse: "requires CUDA/HIP tensors"), then ours.
    check_call(call, nullptr, true, fn);
    raise(PyExc_ValueError, fmt::format("{}: argument `{}` is in host memory; the CUDA kernels read device tensors "
                                        "(kparity.reference runs on host tensors)",
                                        fn, host ? host->name : std::string_view("?")));
  }
  return device;
}

kernels::LaunchOptions launch_options(PyObject* kwargs, const char* fn) {
  kernels::LaunchOptions o;
  o.validate.extra = option_bool(kwargs, "extra", false, fn);
  o.validate.deep = option_bool(kwargs, "deep", false, fn);
  o.sync_after_launch = option_bool(kwargs, "sync", false, fn);
  return o;
}

}  // namespace

void bind_kernels(nb::module_& m) {
  m.def(
      "kernel",
      [](std::string_view op, nb::kwargs kwargs) {
        const char* fn = "kparity.kernel";
        CallArgs call;
        bind_kwargs(call, op_or_raise(op, fn), kwargs.ptr(), fn, kKernelOptions);
        nb::dict allocated;
        const int device = prepare(call, kwargs, allocated, fn);
        const kernels::LaunchOptions o = launch_options(kwargs.ptr(), fn);
        const cudaStream_t stream = stream_of(kwargs.ptr(), device);
        DeviceGuard guard(device);
        Status s = launch(*call.op, call.bag, stream, o);
        if (const Diagnostic* d = s.first_error()) raise_diagnostic(*d);
        nb::dict written;
        for (const auto& w : call.op->written) {
          nb::str key(w.name.data(), w.name.size());
          if (allocated.contains(key)) written[key] = allocated[key];
          else if (PyObject* v = PyDict_GetItem(kwargs.ptr(), key.ptr()); v && v != Py_None) written[key] = nb::handle(v);
        }
        return written;
      },
      nb::arg("op"), nb::arg("kwargs"));
  m.def("_set_current_stream", [](nb::object f) { current_stream_fn() = std::move(f); });
  m.def("_set_device_allocator", [](nb::object f) { allocator_fn() = std::move(f); });
  m.def(
      "_time_launcher",
      [](std::string_view op, std::size_t iters, nb::kwargs kwargs) {
        // For the host-overhead measurement: the C++ launcher alone, arguments bound once.
        const char* fn = "kparity._time_launcher";
        CallArgs call;
        bind_kwargs(call, op_or_raise(op, fn), kwargs.ptr(), fn, kKernelOptions);
        nb::dict allocated;
        const int device = prepare(call, kwargs, allocated, fn);
        const kernels::LaunchOptions o = launch_options(kwargs.ptr(), fn);
        const cudaStream_t stream = stream_of(kwargs.ptr(), device);
        DeviceGuard guard(device);
        const auto t0 = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < iters; ++i) {
          Status s = launch(*call.op, call.bag, stream, o);
          if (const Diagnostic* d = s.first_error()) raise_diagnostic(*d);
        }
        const auto t1 = std::chrono::steady_clock::now();
        return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(iters ? iters : 1);
      },
      nb::arg("op"), nb::arg("iters"), nb::arg("kwargs"));
}

}  // namespace kparity::py
