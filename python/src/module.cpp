// kparity._kparity: the C++ side of the Python package. The public API is kparity/__init__.py.
#include "bindings.hpp"

NB_MODULE(_kparity, m) {
  m.doc() = "kparity's C++ libraries (contracts, catalog, references, kernels) over DLPack tensors";
  kparity::py::bind_checks(m);
  kparity::py::bind_catalog(m);
  kparity::py::bind_ops(m);
  kparity::py::bind_judge(m);
#ifdef KPARITY_PY_WITH_KERNELS
  kparity::py::bind_kernels(m);
  m.attr("has_kernels") = true;
#else
  m.attr("has_kernels") = false;
#endif
}
