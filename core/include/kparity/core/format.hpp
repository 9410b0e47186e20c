#pragma once
// Python-style renderings used by upstream messages: str() of tuples, dtypes, floats.
#include <cstdint>
#include <span>
#include <string>

#include "kparity/core/dtype.hpp"

namespace kparity {

// (3,)  (3, 1, 4, 128)  ()
std::string py_tuple(std::span<const std::int64_t> values);
std::string py_tuple(std::initializer_list<std::int64_t> values);
std::string py_dtype(DType t);  // torch.float32, ...
// Python's repr of a float: shortest round-trip digits, "1.0", "1e-06", "inf", "-inf", "nan".
std::string py_float(double v);
std::string py_bool(bool v);  // True / False

}  // namespace kparity
