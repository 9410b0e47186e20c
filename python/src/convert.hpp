#pragma once
// Python arguments -> kparity's ArgBag, without copies: every tensor crosses through DLPack and
// becomes a TensorView over the caller's memory (data pointer, shape, strides and device as the
// producer exported them). Bad input is a Python TypeError/ValueError naming the argument.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <array>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::py {

namespace nb = nanobind;

// One tensor argument: its view and the Python object it came from (borrowed from the call's
// arguments, which outlive the CallArgs).
struct TensorArg {
  std::string_view name;  // the op table's spelling (static storage)
  PyObject* object = nullptr;
  TensorView view;
};

// A call's arguments as kparity sees them. `keep` holds the DLPack exports (capsules or nanobind
// handles) for as long as the views are used.
struct CallArgs {
  const ops::OpInfo* op = nullptr;
  ArgBag bag;
  std::vector<TensorArg> tensors;
  std::vector<nb::object> keep;
  std::vector<nb::ndarray<nb::ro>> arrays;
};

// The op's table row; ValueError naming the known ops otherwise. `fn` prefixes messages
// ("kparity.check").
const ops::OpInfo& op_or_raise(std::string_view op, const char* fn);

// Keyword arguments `kwargs` (a dict) of op `info`: every key must be one of the op's parameters or
// one of `options` (skipped here; the caller reads them). None means absent. A tensor parameter
// takes any DLPack producer (torch, numpy, cupy, ...); a scalar a Python number; a flag a bool.
// Missing required parameters are a TypeError unless `allow_missing`.
void bind_kwargs(CallArgs& call, const ops::OpInfo& info, PyObject* kwargs, const char* fn,
                 std::span<const std::string_view> options = {}, bool allow_missing = false);

// One DLPack object as a view (TypeError naming `name` when it is not one kparity can read).
TensorView import_tensor(PyObject* obj, std::string_view name, const char* fn, CallArgs& call);
TensorView import_tensor(PyObject* obj, std::string_view name, const char* fn, std::vector<nb::object>& keep,
                         std::vector<nb::ndarray<nb::ro>>& arrays);

// The producer's current work stream on a device, through its DLPack C exchange API (`known` false
// when obj's type has none).
void* exchange_current_stream(PyObject* obj, int device_type, int device_id, bool& known);

// The kparity DType of a DLPack dtype, if kparity has one.
bool dtype_from_dlpack(nb::dlpack::dtype dt, DType& out);
// numpy/torch-style name of a DLPack dtype ("uint8", "float64", "complex64"), for messages.
std::string dlpack_dtype_name(nb::dlpack::dtype dt);


}  // namespace kparity::py

namespace kparity::py {

// The hot path (kparity.check / validate / kernel): a call's arguments parsed straight from
// CPython's vectorcall arrays into fixed storage, with no dictionary, map or heap allocation when
// the tensors come through the DLPack C exchange API.
inline constexpr int kMaxParams = 32;

struct FastOptions {
  PyObject* entry = nullptr;
  PyObject* extra = nullptr;
  PyObject* deep = nullptr;
  PyObject* warnings = nullptr;
  PyObject* stream = nullptr;
  PyObject* sync = nullptr;
};

// What a contract's result depends on: the op and every argument's value (a view's metadata, a
// scalar, a flag). Two calls with equal Values get the same shape-check findings.
struct Values {
  const ops::OpInfo* op = nullptr;
  std::uint64_t present = 0;  // bit i: params[i] was given a value (not None)
  std::array<TensorView, kMaxParams> views{};
  std::array<double, kMaxParams> scalars{};
  std::array<bool, kMaxParams> flags{};

  // Views compared field by field, scalars bit for bit.
  bool operator==(const Values& o) const noexcept;
};

struct Bound {
  Values v;
  std::array<PyObject*, kMaxParams> objects{};  // borrowed from the call
  std::vector<nb::object> keep;                 // DLPack exports of the slow paths
  std::vector<nb::ndarray<nb::ro>> arrays;

  ArgBag bag() const;
  // As CallArgs (the shared, map-based form the other entry points take). The exports stay here.
  void to_call(CallArgs& call) const;
};

// Parses fn(op, **kwargs) from vectorcall arguments. `allowed` says which options the entry point
// takes ("entry", "extra", "deep", "warnings", "stream", "sync"); any other keyword must be a
// parameter of the op.
void parse_fast(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, const char* fn,
                std::span<const std::string_view> allowed, Bound& out, FastOptions& opts);

bool fast_bool(PyObject* v, const char* key, bool fallback, const char* fn);

// Runs the body of a raw CPython function: a Python error propagates as set, any other exception
// becomes a RuntimeError; returns nullptr then.
template <class F>
PyObject* python_call(F&& f) noexcept {
  try {
    return f();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

}  // namespace kparity::py
