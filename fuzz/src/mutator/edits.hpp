#pragma once
// Private to the mutator: tensor edits on a Mutant. Each keeps every property of the tensor it does
// not name (an edit of the dtype keeps the layout, an edit of the shape keeps the leading values), so
// that the one contract it targets is the first to notice.
#include <string>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"

namespace kparity::fuzz::detail {

bool has(const Mutant& m, const std::string& name);
Tensor& ten(Mutant& m, const std::string& name);
TensorView view(const Mutant& m, const std::string& name);
std::int64_t dim(const Mutant& m, const std::string& name, int d);

double get(const Mutant& m, const std::string& name, std::int64_t flat);
std::int64_t get_int(const Mutant& m, const std::string& name, std::int64_t flat);
void set(Mutant& m, const std::string& name, std::int64_t flat, double v);

Shape contiguous_strides(const Shape& shape);
// Row-major strides whose innermost stride is `inner` (2: every other element, not contiguous).
Shape padded_strides(const Shape& shape, std::int64_t inner);

// New contiguous shape; the first min(old, new) elements (row-major) are kept, the rest are zero.
void reshape(Mutant& m, const std::string& name, const Shape& shape);
// Adds (or replaces) a contiguous tensor with the given leading values.
void make(Mutant& m, const std::string& name, DType dtype, const Shape& shape, const std::vector<double>& values);
// Same values in a new layout over a fresh buffer.
void restride(Mutant& m, const std::string& name, const Shape& strides, std::int64_t offset = 0);
// Same layout, values converted.
void retype(Mutant& m, const std::string& name, DType dtype);
// Grows `name`'s buffer so that `bytes` bytes are addressable from its first element.
void make_room(Mutant& m, const std::string& name, std::size_t bytes);
// `name` becomes a view of `other`'s memory (see Mutant::alias).
void alias(Mutant& m, const std::string& name, const std::string& other);

}  // namespace kparity::fuzz::detail
