#include "convert.hpp"

#include <cstring>

#include <fmt/format.h>

namespace kparity::py {
namespace {

// torch.Tensor's __dlpack__ is a Python method (checks, stream hand-shake) that costs more than the
// rest of a check; torch.utils.dlpack.to_dlpack is the C function behind it. Only the exact types
// torch.Tensor and torch.nn.Parameter take this path (a subclass may override __dlpack__); their
// memory is read through the capsule exactly as through __dlpack__, minus the stream hand-shake,
// which only matters to a consumer that reads the data on another stream (kparity stages device
// data through the producer's own copy, see kparity/_staging.py).
struct TorchFastPath {
  PyTypeObject* tensor = nullptr;
  PyTypeObject* parameter = nullptr;
  nb::object to_dlpack;
  bool ready = false;

  // Looks torch up once it has been imported by someone (never imports it).
  bool probe() {
    if (ready) return true;
    PyObject* torch = PyImport_GetModule(nb::str("torch").ptr());
    if (!torch) {
      PyErr_Clear();
      return false;
    }
    nb::object mod = nb::steal(torch);
    try {
      nb::object t = mod.attr("Tensor");
      nb::object p = mod.attr("nn").attr("Parameter");
      to_dlpack = mod.attr("utils").attr("dlpack").attr("to_dlpack");
      tensor = reinterpret_cast<PyTypeObject*>(t.ptr());
      parameter = reinterpret_cast<PyTypeObject*>(p.ptr());
      t.release();  // types live as long as torch: keep the references
      p.release();
      ready = true;
    } catch (const nb::python_error&) {
      to_dlpack.reset();
    }
    return ready;
  }
};

TorchFastPath& torch_fast() {
  static TorchFastPath* t = new TorchFastPath();  // never destroyed: outlives interpreter teardown order
  return *t;
}

std::string type_name(PyObject* o) {
  PyTypeObject* tp = Py_TYPE(o);
  nb::handle mod = nb::handle(reinterpret_cast<PyObject*>(tp)).attr("__module__");
  std::string m = nb::isinstance<nb::str>(mod) ? nb::cast<std::string>(mod) : std::string();
  return (m.empty() || m == "builtins") ? std::string(tp->tp_name) : m + "." + nb::cast<std::string>(nb::handle(reinterpret_cast<PyObject*>(tp)).attr("__qualname__"));
}

[[noreturn]] void raise(PyObject* exc, const std::string& msg) {
  PyErr_SetString(exc, msg.c_str());
  throw nb::python_error();
}

// The current Python exception as "Class: message", cleared.
std::string take_error() {
  nb::python_error e;
  std::string cls = nb::cast<std::string>(e.type().attr("__name__"));
  std::string msg = nb::cast<std::string>(nb::str(e.value()));
  return msg.empty() ? cls : cls + ": " + msg;
}

bool has_attr(PyObject* o, const char* name) {
  PyObject* r = PyObject_GetAttrString(o, name);
  if (!r) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(r);
  return true;
}

Device device_of(int type, int id, std::string_view name, const char* fn) {
  switch (type) {
    case 1:  // kDLCPU
    case 3:  // kDLCUDAHost: pinned host memory, readable on the host
      return Device::cpu();
    case 2:   // kDLCUDA
    case 13:  // kDLCUDAManaged
      return Device::cuda(id);
    default:
      raise(PyExc_TypeError,
            fmt::format("{}: argument `{}` lives on DLPack device type {} (kparity reads CPU and CUDA tensors)", fn, name,
                        type));
  }
}

TensorView make_view(void* data, nb::dlpack::dtype dt, int dev_type, int dev_id, int ndim, const std::int64_t* shape,
                     const std::int64_t* strides, std::string_view name, const char* fn) {
  TensorView v;
  if (!dtype_from_dlpack(dt, v.dtype))
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` has dtype {}, which kparity does not read (it reads float64, "
                                       "float32, float16, bfloat16, int32, int64 and bool tensors)",
                                       fn, name, dlpack_dtype_name(dt)));
  if (ndim > kMaxRank)
    raise(PyExc_TypeError,
          fmt::format("{}: argument `{}` has {} dimensions; kparity reads tensors of at most {}", fn, name, ndim, kMaxRank));
  v.device = device_of(dev_type, dev_id, name, fn);
  v.data = data;
  v.rank = ndim;
  std::int64_t expected = 1;
  for (int d = ndim - 1; d >= 0; --d) {  // DLPack allows a null strides array: row-major
    v.sizes[d] = shape[d];
    v.strides[d] = strides ? strides[d] : expected;
    expected *= shape[d];
  }
  return v;
}

// The DLPack C exchange API (DLPack 1.2+, `type(x).__dlpack_c_exchange_api__`, PyTorch >= 2.10):
// a producer's C functions, one of which fills a caller-owned DLTensor with no allocation and no
// reference taken, valid while the object lives unchanged -- exactly a check's lifetime.
struct DLPackVersion {
  std::uint32_t major, minor;
};
struct DLPackExchangeAPIHeader {
  DLPackVersion version;
  DLPackExchangeAPIHeader* prev_api;
};
struct DLPackExchangeAPI {
  DLPackExchangeAPIHeader header;
  void* managed_tensor_allocator;
  void* managed_tensor_from_py_object_no_sync;
  void* managed_tensor_to_py_object_no_sync;
  int (*dltensor_from_py_object_no_sync)(void* py_object, nb::dlpack::dltensor* out);
  int (*current_work_stream)(int device_type, std::int32_t device_id, void** out_stream);
};

// Per producer type: its exchange API, or nullptr (looked up once per type; types are few).
const DLPackExchangeAPI* exchange_api(PyTypeObject* tp) {
  static auto* cache = new std::vector<std::pair<PyTypeObject*, const DLPackExchangeAPI*>>();
  for (const auto& [t, api] : *cache)
    if (t == tp) return api;
  const DLPackExchangeAPI* api = nullptr;
  for (const char* attr : {"__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"}) {
    PyObject* cap = PyObject_GetAttrString(reinterpret_cast<PyObject*>(tp), attr);
    if (!cap) {
      PyErr_Clear();
      continue;
    }
    if (PyCapsule_IsValid(cap, "dlpack_exchange_api"))
      api = static_cast<const DLPackExchangeAPI*>(PyCapsule_GetPointer(cap, "dlpack_exchange_api"));
    Py_DECREF(cap);  // the producer keeps the capsule on its type
    if (api && (api->header.version.major != 1 || !api->dltensor_from_py_object_no_sync)) api = nullptr;
    if (api) break;
  }
  Py_INCREF(tp);  // the cache holds the type
  cache->emplace_back(tp, api);
  return api;
}

bool import_exchange(PyObject* obj, std::string_view name, const char* fn, TensorView& out) {
  const DLPackExchangeAPI* api = exchange_api(Py_TYPE(obj));
  if (!api) return false;
  nb::dlpack::dltensor dl{};
  if (api->dltensor_from_py_object_no_sync(obj, &dl) != 0)
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` could not cross DLPack: {}", fn, name, take_error()));
  out = make_view(static_cast<char*>(dl.data) + dl.byte_offset, dl.dtype, dl.device.device_type, dl.device.device_id,
                  dl.ndim, dl.shape, dl.strides, name, fn);
  return true;
}

// torch.Tensor / torch.nn.Parameter: to_dlpack's capsule, read in place. The capsule keeps its
// producer's destructor, which releases the export when `call.keep` drops the capsule.
bool import_torch(PyObject* obj, std::string_view name, const char* fn, std::vector<nb::object>& keep,
                  TensorView& out) {
  TorchFastPath& t = torch_fast();
  if (!t.ready) {
    // Cheap test before touching sys.modules: only objects whose type could be torch's.
    if (std::strcmp(Py_TYPE(obj)->tp_name, "Tensor") != 0 && std::strcmp(Py_TYPE(obj)->tp_name, "Parameter") != 0)
      return false;
    if (!t.probe()) return false;
  }
  if (Py_TYPE(obj) != t.tensor && Py_TYPE(obj) != t.parameter) return false;
  PyObject* cap = PyObject_CallOneArg(t.to_dlpack.ptr(), obj);
  if (!cap)
    raise(PyExc_TypeError,
          fmt::format("{}: argument `{}` could not cross DLPack: {}", fn, name, take_error()));
  keep.push_back(nb::steal(cap));
  auto* dl = static_cast<nb::dlpack::dltensor*>(PyCapsule_GetPointer(cap, "dltensor"));
  if (!dl) {
    PyErr_Clear();
    return false;
  }
  out = make_view(static_cast<char*>(dl->data) + dl->byte_offset, dl->dtype, dl->device.device_type,
                  dl->device.device_id, dl->ndim, dl->shape, dl->strides, name, fn);
  return true;
}

}  // namespace

void* exchange_current_stream(PyObject* obj, int device_type, int device_id, bool& known) {
  known = false;
  const DLPackExchangeAPI* api = exchange_api(Py_TYPE(obj));
  if (!api || !api->current_work_stream) return nullptr;
  void* stream = nullptr;
  if (api->current_work_stream(device_type, device_id, &stream) != 0) {
    PyErr_Clear();
    return nullptr;
  }
  known = true;
  return stream;
}

bool dtype_from_dlpack(nb::dlpack::dtype dt, DType& out) {
  if (dt.lanes != 1) return false;
  using C = nb::dlpack::dtype_code;
  const auto code = static_cast<C>(dt.code);
  if (code == C::Float && dt.bits == 64) out = DType::f64;
  else if (code == C::Float && dt.bits == 32) out = DType::f32;
  else if (code == C::Float && dt.bits == 16) out = DType::f16;
  else if (code == C::Bfloat && dt.bits == 16) out = DType::bf16;
  else if (code == C::Int && dt.bits == 32) out = DType::i32;
  else if (code == C::Int && dt.bits == 64) out = DType::i64;
  else if (code == C::Bool && dt.bits == 8) out = DType::boolean;
  else return false;
  return true;
}

std::string dlpack_dtype_name(nb::dlpack::dtype dt) {
  using C = nb::dlpack::dtype_code;
  std::string base;
  switch (static_cast<C>(dt.code)) {
    case C::Int: base = "int"; break;
    case C::UInt: base = "uint"; break;
    case C::Float: base = "float"; break;
    case C::Bfloat: base = "bfloat"; break;
    case C::Complex: base = "complex"; break;
    case C::Bool: return "bool";
    default: base = fmt::format("code{}_", int(dt.code));
  }
  std::string s = base + std::to_string(dt.bits);
  if (dt.lanes != 1) s += "x" + std::to_string(dt.lanes);
  return s;
}

const ops::OpInfo& op_or_raise(std::string_view op, const char* fn) {
  if (const ops::OpInfo* info = ops::find_op(op)) return *info;
  raise(PyExc_ValueError, fmt::format("{}: unknown op '{}' (known: {})", fn, op, ops::known_ops()));
}

TensorView import_tensor(PyObject* obj, std::string_view name, const char* fn, CallArgs& call) {
  return import_tensor(obj, name, fn, call.keep, call.arrays);
}

TensorView import_tensor(PyObject* obj, std::string_view name, const char* fn, std::vector<nb::object>& keep,
                         std::vector<nb::ndarray<nb::ro>>& arrays) {
  TensorView v;
  if (import_exchange(obj, name, fn, v)) return v;
  if (import_torch(obj, name, fn, keep, v)) return v;
  nb::ndarray<nb::ro> nd;
  if (nb::try_cast(nb::handle(obj), nd, /*convert=*/false)) {
    int64_t strides[kMaxRank + 1];
    const int ndim = static_cast<int>(nd.ndim());
    for (int d = 0; d < ndim && d <= kMaxRank; ++d) strides[d] = nd.stride(d);
    int64_t shape[kMaxRank + 1];
    for (int d = 0; d < ndim && d <= kMaxRank; ++d) shape[d] = static_cast<std::int64_t>(nd.shape(d));
    v = make_view(const_cast<void*>(nd.data()), nd.dtype(), nd.device_type(), nd.device_id(), ndim, shape, strides,
                  name, fn);
    arrays.push_back(std::move(nd));
    return v;
  }
  // Say why: not a tensor at all, or a producer that refused to export (a dtype DLPack cannot
  // express, a tensor that requires grad, ...).
  if (has_attr(obj, "__dlpack__")) {
    PyObject* cap = PyObject_CallMethod(obj, "__dlpack__", nullptr);
    if (!cap)
      raise(PyExc_TypeError, fmt::format("{}: argument `{}` ({}) could not cross DLPack: {}", fn, name,
                                         type_name(obj), take_error()));
    Py_DECREF(cap);
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` ({}) exported a DLPack tensor kparity cannot read "
                                       "(more than 64 dimensions, or a malformed capsule)",
                                       fn, name, type_name(obj)));
  }
  raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be a tensor (an object with __dlpack__, such as a "
                                     "torch.Tensor or numpy.ndarray), got {}",
                                     fn, name, type_name(obj)));
}

namespace {

double scalar_value(PyObject* v, std::string_view name, const char* fn) {
  if (PyFloat_Check(v)) return PyFloat_AS_DOUBLE(v);
  if (PyBool_Check(v))
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be a number, got bool", fn, name));
  if (PyLong_Check(v)) {
    const double d = PyLong_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred())
      raise(PyExc_ValueError, fmt::format("{}: argument `{}`: {}", fn, name, take_error()));
    return d;
  }
  if (PyUnicode_Check(v) || PyBytes_Check(v))
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be a number, got {}", fn, name, type_name(v)));
  if (has_attr(v, "__dlpack__"))
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be a Python number, got a tensor ({}); upstream takes "
                                       "a float here",
                                       fn, name, type_name(v)));
  PyObject* f = PyNumber_Float(v);  // numpy scalars and other numbers
  if (!f) {
    PyErr_Clear();
    raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be a number, got {}", fn, name, type_name(v)));
  }
  const double d = PyFloat_AS_DOUBLE(f);
  Py_DECREF(f);
  return d;
}

bool flag_value(PyObject* v, std::string_view name, const char* fn) {
  if (PyBool_Check(v)) return v == Py_True;
  const char* tn = Py_TYPE(v)->tp_name;
  if (PyLong_Check(v) || std::strcmp(tn, "numpy.bool_") == 0 || std::strcmp(tn, "numpy.bool") == 0) {
    const int t = PyObject_IsTrue(v);
    if (t < 0) raise(PyExc_TypeError, fmt::format("{}: argument `{}`: {}", fn, name, take_error()));
    return t == 1;
  }
  raise(PyExc_TypeError, fmt::format("{}: argument `{}` must be True or False, got {}", fn, name, type_name(v)));
}

std::string param_list(const ops::OpInfo& info) {
  std::string s;
  for (const auto& p : info.params) s += fmt::format("{}{}", s.empty() ? "" : ", ", p.name);
  return s;
}

}  // namespace

void bind_kwargs(CallArgs& call, const ops::OpInfo& info, PyObject* kwargs, const char* fn,
                 std::span<const std::string_view> options, bool allow_missing) {
  call.op = &info;
  const std::size_t n = info.params.size();
  std::uint64_t seen = 0, present = 0;  // bit i: params[i] given (None included) / given a value
  if (kwargs) {
    Py_ssize_t pos = 0;
    PyObject *key, *value;
    while (PyDict_Next(kwargs, &pos, &key, &value)) {
      Py_ssize_t len = 0;
      const char* k = PyUnicode_AsUTF8AndSize(key, &len);
      if (!k) throw nb::python_error();
      const std::string_view name(k, static_cast<std::size_t>(len));
      std::size_t i = 0;
      while (i < n && info.params[i].name != name) ++i;
      if (i == n) {
        bool is_option = false;
        for (auto o : options) is_option |= (o == name);
        if (is_option) continue;
        raise(PyExc_TypeError, fmt::format("{}() got an unexpected keyword argument '{}' for {} (its arguments: {})", fn,
                                           name, info.op, param_list(info)));
      }
      const ops::Param& p = info.params[i];
      if (i < 64) seen |= std::uint64_t{1} << i;
      if (value == Py_None) continue;
      if (i < 64) present |= std::uint64_t{1} << i;
      switch (p.kind) {
        case ops::ArgKind::tensor: {
          TensorView v = import_tensor(value, p.name, fn, call);
          call.tensors.push_back({p.name, value, v});
          call.bag.tensors.emplace(std::string(p.name), v);
          break;
        }
        case ops::ArgKind::scalar:
          call.bag.scalars.emplace(std::string(p.name), scalar_value(value, p.name, fn));
          break;
        case ops::ArgKind::flag:
          call.bag.flags.emplace(std::string(p.name), flag_value(value, p.name, fn));
          break;
      }
    }
  }
  if (allow_missing) return;
  for (std::size_t i = 0; i < n && i < 64; ++i) {
    const ops::Param& p = info.params[i];
    if (!p.default_value.empty()) continue;
    const bool given = (seen >> i) & 1u;
    if (!((present >> i) & 1u))
      raise(PyExc_TypeError, given ? fmt::format("{}(): argument '{}' of {} is required, got None", fn, p.name, info.op)
                                   : fmt::format("{}() missing required argument '{}' of {}", fn, p.name, info.op));
  }
}

}  // namespace kparity::py

namespace kparity::py {
namespace {

// Interned parameter names of one op: call sites pass interned keyword names, so a pointer
// comparison finds the parameter (a string comparison is the fallback).
struct OpNames {
  const ops::OpInfo* op = nullptr;
  std::vector<PyObject*> names;
};

const OpNames& op_names(const ops::OpInfo& info) {
  static auto* cache = new std::vector<OpNames>();
  for (const auto& n : *cache)
    if (n.op == &info) return n;
  OpNames n{&info, {}};
  for (const auto& p : info.params) {
    PyObject* s = PyUnicode_InternFromString(std::string(p.name).c_str());
    if (!s) throw nb::python_error();
    n.names.push_back(s);  // kept for the process
  }
  cache->push_back(std::move(n));
  return cache->back();
}

constexpr std::string_view kOptionNames[] = {"entry", "extra", "deep", "warnings", "stream", "sync"};

PyObject* interned_option(std::size_t i) {
  static PyObject* names[std::size(kOptionNames)] = {};
  if (!names[i]) names[i] = PyUnicode_InternFromString(std::string(kOptionNames[i]).c_str());
  return names[i];
}

PyObject** option_slot(FastOptions& o, std::size_t i) {
  PyObject** slots[] = {&o.entry, &o.extra, &o.deep, &o.warnings, &o.stream, &o.sync};
  return slots[i];
}

bool same_view(const TensorView& a, const TensorView& b) noexcept {
  if (a.data != b.data || a.dtype != b.dtype || !(a.device == b.device) || a.device.kind != b.device.kind ||
      a.rank != b.rank)
    return false;
  for (int d = 0; d < a.rank; ++d)
    if (a.sizes[d] != b.sizes[d] || a.strides[d] != b.strides[d]) return false;
  return true;
}

}  // namespace

bool Values::operator==(const Values& o) const noexcept {
  if (op != o.op || present != o.present) return false;
  for (std::size_t i = 0; i < op->params.size() && i < kMaxParams; ++i) {
    if (!((present >> i) & 1u)) continue;
    switch (op->params[i].kind) {
      case ops::ArgKind::tensor:
        if (!same_view(views[i], o.views[i])) return false;
        break;
      case ops::ArgKind::scalar:
        if (std::memcmp(&scalars[i], &o.scalars[i], sizeof(double)) != 0) return false;
        break;
      case ops::ArgKind::flag:
        if (flags[i] != o.flags[i]) return false;
        break;
    }
  }
  return true;
}

ArgBag Bound::bag() const {
  ArgBag bag;
  for (std::size_t i = 0; i < v.op->params.size() && i < kMaxParams; ++i) {
    if (!((v.present >> i) & 1u)) continue;
    const ops::Param& p = v.op->params[i];
    std::string name(p.name);
    switch (p.kind) {
      case ops::ArgKind::tensor: bag.tensors.emplace(std::move(name), v.views[i]); break;
      case ops::ArgKind::scalar: bag.scalars.emplace(std::move(name), v.scalars[i]); break;
      case ops::ArgKind::flag: bag.flags.emplace(std::move(name), v.flags[i]); break;
    }
  }
  return bag;
}

void Bound::to_call(CallArgs& call) const {
  call.op = v.op;
  call.bag = bag();
  for (std::size_t i = 0; i < v.op->params.size() && i < kMaxParams; ++i)
    if (((v.present >> i) & 1u) && v.op->params[i].kind == ops::ArgKind::tensor)
      call.tensors.push_back({v.op->params[i].name, objects[i], v.views[i]});
}

bool fast_bool(PyObject* v, const char* key, bool fallback, const char* fn) {
  if (!v || v == Py_None) return fallback;
  if (v == Py_True) return true;
  if (v == Py_False) return false;
  raise(PyExc_TypeError, fmt::format("{}: option `{}` must be True or False, got {}", fn, key, type_name(v)));
}

void parse_fast(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* fn,
                std::span<const std::string_view> allowed, Bound& out, FastOptions& opts) {
  nargs = PyVectorcall_NARGS(nargs);
  if (nargs != 1)
    raise(PyExc_TypeError,
          fmt::format("{}() takes the op name as its only positional argument ({} given); pass the op's arguments "
                      "by name, or use kparity.kda / kparity.sparse for upstream's positional order",
                      fn, nargs));
  // The op: call sites pass the same (interned) string every time.
  static PyObject* last_op_obj = nullptr;
  static const ops::OpInfo* last_op = nullptr;
  PyObject* op_obj = args[0];
  if (op_obj != last_op_obj || !last_op) {
    if (!PyUnicode_Check(op_obj))
      raise(PyExc_TypeError, fmt::format("{}: op must be a str such as 'kda/replayssm_decode', got {}", fn,
                                         type_name(op_obj)));
    Py_ssize_t len = 0;
    const char* s = PyUnicode_AsUTF8AndSize(op_obj, &len);
    if (!s) throw nb::python_error();
    last_op = &op_or_raise(std::string_view(s, static_cast<std::size_t>(len)), fn);
    Py_XDECREF(last_op_obj);
    Py_INCREF(op_obj);
    last_op_obj = op_obj;
  }
  const ops::OpInfo& info = *last_op;
  out.v.op = &info;
  const OpNames& names = op_names(info);
  const std::size_t n = names.names.size();
  std::uint64_t seen = 0;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    PyObject* value = args[nargs + k];
    std::size_t i = 0;
    while (i < n && names.names[i] != key) ++i;
    if (i == n) {
      // An option, or a parameter spelled with a non-interned string.
      Py_ssize_t len = 0;
      const char* ks = PyUnicode_AsUTF8AndSize(key, &len);
      if (!ks) throw nb::python_error();
      const std::string_view kv(ks, static_cast<std::size_t>(len));
      bool option = false;
      for (std::size_t o = 0; o < std::size(kOptionNames) && !option; ++o) {
        if (key != interned_option(o) && kv != kOptionNames[o]) continue;
        for (auto a : allowed) option |= (a == kOptionNames[o]);
        if (option) *option_slot(opts, o) = value;
      }
      if (option) continue;
      i = 0;
      while (i < n && info.params[i].name != kv) ++i;
      if (i == n) {
        std::string list;
        for (const auto& p : info.params) list += fmt::format("{}{}", list.empty() ? "" : ", ", p.name);
        raise(PyExc_TypeError, fmt::format("{}() got an unexpected keyword argument '{}' for {} (its arguments: {})",
                                           fn, kv, info.op, list));
      }
    }
    const ops::Param& p = info.params[i];
    seen |= std::uint64_t{1} << i;
    out.objects[i] = value;
    if (value == Py_None) continue;
    out.v.present |= std::uint64_t{1} << i;
    switch (p.kind) {
      case ops::ArgKind::tensor: out.v.views[i] = import_tensor(value, p.name, fn, out.keep, out.arrays); break;
      case ops::ArgKind::scalar: out.v.scalars[i] = scalar_value(value, p.name, fn); break;
      case ops::ArgKind::flag: out.v.flags[i] = flag_value(value, p.name, fn); break;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const ops::Param& p = info.params[i];
    if (!p.default_value.empty() || ((out.v.present >> i) & 1u)) continue;
    raise(PyExc_TypeError, ((seen >> i) & 1u)
                               ? fmt::format("{}(): argument '{}' of {} is required, got None", fn, p.name, info.op)
                               : fmt::format("{}() missing required argument '{}' of {}", fn, p.name, info.op));
  }
}

}  // namespace kparity::py
