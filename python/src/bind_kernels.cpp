// kparity.kernel: the CUDA launchers (kernels/include/kparity/kernels/*.hpp) on DLPack device
// tensors, on the caller's stream, never synchronising unless asked (so a call can be captured into
// a CUDA graph). Compiled only when the kernels are built.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "errors.hpp"
#include "kparity/judge/kernel_launch.hpp"
#include "kparity/judge/kernel_ops.hpp"

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

using Launch = std::function<Status(cudaStream_t, const kernels::LaunchOptions&)>;

// The op's launcher over typed arguments built once from the bag (the one op -> launcher table,
// kparity/judge/kernel_launch.hpp).
Launch make_launch(const ops::OpInfo& info, const ArgBag& bag) {
  const std::string_view op = info.op;
  if (!judging::has_kernel(op)) raise(PyExc_ValueError, fmt::format("kparity.kernel: {} has no CUDA kernel", op));
  return translate([&]() -> Launch {
    return [bound = judging::bind_kernel(op, bag)](cudaStream_t s, const kernels::LaunchOptions& o) {
      return bound(s, o, {});
    };
  });
}

// The launch of the last call of each op, reused while a call's Values are the same (a decode loop
// over the same buffers): the typed arguments are not rebuilt. The launcher itself (its contract
// included) runs every time.
struct KernelMemo {
  Values key;
  Launch launch;
  int device = -1;
};

KernelMemo& kernel_memo(const ops::OpInfo* op) {
  static auto* memos = new std::vector<std::pair<const ops::OpInfo*, KernelMemo>>();
  for (auto& [o, m] : *memos)
    if (o == op) return m;
  memos->emplace_back(op, KernelMemo{});
  return memos->back().second;
}

// Allocates the outputs upstream allocates that the call lacks (through the package's allocator),
// checks that every tensor is on one CUDA device and returns that device.
int prepare(Bound& b, nb::dict& allocated, const char* fn) {
  const ops::OpInfo& info = *b.v.op;
  bool missing = false;
  for (const auto& w : info.written) {
    const ops::Param* p = info.param(w.name);
    const std::size_t i = p ? static_cast<std::size_t>(p - info.params.data()) : kMaxParams;
    const ops::Param* flag = w.only_if.empty() ? nullptr : info.param(w.only_if);
    const std::size_t fi = flag ? static_cast<std::size_t>(flag - info.params.data()) : kMaxParams;
    const bool wanted = !flag || (((b.v.present >> fi) & 1u) && b.v.flags[fi]);
    if (wanted && i < kMaxParams && !((b.v.present >> i) & 1u)) missing = true;
  }
  if (missing && allocator_fn().is_valid()) {
    nb::dict args;
    for (std::size_t i = 0; i < info.params.size(); ++i)
      if (b.objects[i]) args[nb::str(std::string(info.params[i].name).c_str())] = nb::handle(b.objects[i]);
    allocated = nb::cast<nb::dict>(allocator_fn()(nb::str(info.op.data(), info.op.size()), args));
    for (auto [k, val] : allocated) {
      const ops::Param* p = info.param(nb::cast<std::string>(k));
      if (!p) continue;
      const std::size_t i = static_cast<std::size_t>(p - info.params.data());
      b.objects[i] = val.ptr();  // `allocated` holds the reference
      b.v.views[i] = import_tensor(val.ptr(), p->name, fn, b.keep, b.arrays);
      b.v.present |= std::uint64_t{1} << i;
    }
  }
    int device = -1;
  std::string_view host;
  for (std::size_t i = 0; i < info.params.size(); ++i) {
    if (!((b.v.present >> i) & 1u) || info.params[i].kind != ops::ArgKind::tensor) continue;
    const TensorView& v = b.v.views[i];
    if (!v.device.is_cuda()) {
      if (host.empty()) host = info.params[i].name;
    } else if (device < 0) {
      device = v.device.index;
    }
  }
  if (!host.empty() || device < 0) {
    // Upstream's own error first (sparse: "requires CUDA/HIP tensors"), then ours.
    CallArgs call;
    b.to_call(call);
    check_call(call, ValidateOptions::upstream(), true, fn);
    raise(PyExc_ValueError, fmt::format("{}: argument `{}` is in host memory; the CUDA kernels read device tensors "
                                        "(kparity.reference runs on host tensors)",
                                        fn, host.empty() ? std::string_view("?") : host));
  }
  return device;
}

kernels::LaunchOptions launch_options(const FastOptions& f, const char* fn) {
  kernels::LaunchOptions o;
  o.validate.extra = fast_bool(f.extra, "extra", false, fn);
  o.validate.deep = fast_bool(f.deep, "deep", false, fn);
  o.sync_after_launch = fast_bool(f.sync, "sync", false, fn);
  return o;
}

cudaStream_t stream_for(const FastOptions& f, const Bound& b, int device) {
  if (f.stream && f.stream != Py_None) return reinterpret_cast<cudaStream_t>(handle_of(f.stream));
  for (std::size_t i = 0; i < b.v.op->params.size(); ++i) {
    if (!((b.v.present >> i) & 1u) || !b.v.views[i].device.is_cuda()) continue;
    bool known = false;
    void* h = exchange_current_stream(b.objects[i], 2, device, known);
    if (known) return static_cast<cudaStream_t>(h);
    break;
  }
  if (!current_stream_fn().is_valid()) return nullptr;
  nb::object h = current_stream_fn()(device);
  return h.is_none() ? nullptr : reinterpret_cast<cudaStream_t>(nb::cast<std::uintptr_t>(h));
}

// Binds and prepares a kernel call; returns the launch (memoised) and fills device and stream.
const Launch& bind_launch(Bound& b, const FastOptions& fo, nb::dict& allocated, int& device, cudaStream_t& stream,
                          const char* fn) {
  KernelMemo& memo = kernel_memo(b.v.op);
  if (memo.launch && memo.key == b.v) {
    device = memo.device;
  } else {
    device = prepare(b, allocated, fn);
    memo.launch = make_launch(*b.v.op, b.bag());
    memo.key = b.v;
    memo.device = device;
    if (allocated.size() != 0) memo.key.op = nullptr;  // fresh outputs each call: never reuse
  }
  stream = stream_for(fo, b, device);
  return memo.launch;
}

PyObject* fast_kernel(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  const char* fn = "kparity.kernel";
  return python_call([&]() -> PyObject* {
    Bound b;
    FastOptions fo;
    parse_fast(args, nargs, kwnames, fn, kKernelOptions, b, fo);
    const kernels::LaunchOptions o = launch_options(fo, fn);
    nb::dict allocated;
    int device = -1;
    cudaStream_t stream = nullptr;
    const Launch& launch = bind_launch(b, fo, allocated, device, stream, fn);
    {
      DeviceGuard guard(device);
      Status s = translate([&] { return launch(stream, o); });
      if (const Diagnostic* d = s.first_error()) raise_diagnostic(*d);
    }
    nb::dict written;
    const ops::OpInfo& info = *b.v.op;
    for (const auto& w : info.written) {
      const ops::Param* p = info.param(w.name);
      if (!p) continue;
      const std::size_t i = static_cast<std::size_t>(p - info.params.data());
      if ((b.v.present >> i) & 1u) written[nb::str(w.name.data(), w.name.size())] = nb::handle(b.objects[i]);
    }
    return written.release().ptr();
  });
}

PyObject* fast_time_launcher(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  // For the host-overhead measurement: _time_launcher(op, **args) runs the launch kparity.kernel
  // makes (the C++ launcher, its contract included) 2000 times and returns the median ns of one launch.
  const char* fn = "kparity._time_launcher";
  return python_call([&]() -> PyObject* {
    Bound b;
    FastOptions fo;
    parse_fast(args, nargs, kwnames, fn, kKernelOptions, b, fo);
    const kernels::LaunchOptions o = launch_options(fo, fn);
    nb::dict allocated;
    int device = -1;
    cudaStream_t stream = nullptr;
    const Launch& launch = bind_launch(b, fo, allocated, device, stream, fn);
    constexpr std::size_t n = 2000;
    DeviceGuard guard(device);
    // Each launch timed alone; the stream is drained every 64 launches, outside the timed region, so
    // a full launch queue never blocks a timed call. The median is returned.
    std::vector<double> ns;
    ns.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (i % 64 == 0) cudaStreamSynchronize(stream);
      const auto t0 = std::chrono::steady_clock::now();
      Status s = launch(stream, o);
      const auto t1 = std::chrono::steady_clock::now();
      if (const Diagnostic* d = s.first_error()) raise_diagnostic(*d);
      ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count());
    }
    cudaStreamSynchronize(stream);
    std::nth_element(ns.begin(), ns.begin() + static_cast<std::ptrdiff_t>(n / 2), ns.end());
    return PyFloat_FromDouble(ns[n / 2]);
  });
}

}  // namespace

void bind_kernels(nb::module_& m) {
  static PyMethodDef defs[] = {
      {"kernel", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_kernel)), METH_FASTCALL | METH_KEYWORDS,
       "kernel(op, /, *, stream=None, extra=False, deep=False, sync=False, **args) -> dict[str, Any]\n\n"
       "Launches kparity's CUDA kernel of op on the current torch stream (or `stream`), without\n"
       "synchronising; returns the tensors it writes."},
      {"_time_launcher", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_time_launcher)),
       METH_FASTCALL | METH_KEYWORDS, "Median ns of one C++ launch as kparity.kernel makes it (2000 launches, drained every 64)."},
  };
  for (auto& d : defs) {
    PyObject* f = PyCFunction_NewEx(&d, nullptr, nb::str("kparity._kparity").ptr());
    if (!f) throw nb::python_error();
    m.attr(d.ml_name) = nb::steal(f);
  }
  m.def("_set_current_stream", [](nb::object f) { current_stream_fn() = std::move(f); });
  m.def("_set_device_allocator", [](nb::object f) { allocator_fn() = std::move(f); });
}

}  // namespace kparity::py
