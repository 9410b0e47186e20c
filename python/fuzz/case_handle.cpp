// One backend run of a Python implementation (case_handle.hpp).
#include "case_handle.hpp"

#include <algorithm>
#include <stdexcept>

#include "kparity/core/format.hpp"
#include "kparity/ops/op_table.hpp"

namespace kparity::py {

CaseHandle::CaseHandle(fuzz::Call& call) : call_(&call) {
  const ops::OpInfo& info = ops::op_info(call.op);
  for (auto& [name, t] : call.tensors) {
    const bool written = std::find(call.written.begin(), call.written.end(), name) != call.written.end();
    const ops::Param* p = info.param(name);
    // Outputs upstream allocates itself are keyword-only extras of the op table: the
    // implementation returns them instead of receiving them.
    if (written && p && p->keyword_only) {
      returned_.insert(name);
      continue;
    }
    images_.emplace(name, std::make_unique<fuzz::GuardedImage>(name, t, written));
  }
}

void CaseHandle::require_open() const {
  if (!open_) throw std::logic_error("kparity.fuzz: a case handle was used after its case ended");
}

const fuzz::Call& CaseHandle::call() const {
  require_open();
  return *call_;
}

fuzz::GuardedImage& CaseHandle::image(const std::string& name) {
  require_open();
  const auto it = images_.find(name);
  if (it == images_.end()) throw std::out_of_range("no tensor `" + name + "` is passed in this call");
  return *it->second;
}

std::string CaseHandle::set_output(const std::string& name, const TensorView& value) {
  require_open();
  if (!returned(name)) throw std::out_of_range("`" + name + "` is not an output this op returns");
  Tensor& dst = call_->at(name);
  if (value.shape() != dst.shape())
    return "shape " + py_tuple(value.shape()) + ", expected " + py_tuple(dst.shape());
  if (!is_floating(value.dtype) && is_floating(dst.dtype()))
    return "dtype " + std::string(dtype_name(value.dtype)) + ", expected a float dtype";
  dst.copy_from(value);
  return "";
}

}  // namespace kparity::py
