#pragma once
// Python arguments -> kparity's ArgBag, without copies: every tensor crosses through DLPack and
// becomes a TensorView over the caller's memory (data pointer, shape, strides and device as the
// producer exported them). Bad input is a Python TypeError/ValueError naming the argument.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

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

// The kparity DType of a DLPack dtype, if kparity has one.
bool dtype_from_dlpack(nb::dlpack::dtype dt, DType& out);
// numpy/torch-style name of a DLPack dtype ("uint8", "float64", "complex64"), for messages.
std::string dlpack_dtype_name(nb::dlpack::dtype dt);

// Reads an option from kwargs (nullptr when absent).
PyObject* option(PyObject* kwargs, const char* key);
bool option_bool(PyObject* kwargs, const char* key, bool fallback, const char* fn);

}  // namespace kparity::py
