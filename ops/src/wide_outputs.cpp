#include "kparity/ops/wide_outputs.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kparity/ops/op_table.hpp"

namespace kparity::ops {
namespace {

// "kda/recurrent::arg[out].dtype" -> "out" (checker.hpp's arg_loc forms); "" without an argument.
std::string argument_of(std::string_view location) {
  const auto open = location.find("::arg[");
  if (open == std::string_view::npos) return {};
  const auto begin = open + 6;
  const auto close = location.find(']', begin);
  return close == std::string_view::npos ? std::string() : std::string(location.substr(begin, close - begin));
}

std::vector<std::string_view> views_of(const std::vector<std::string>& ids) { return {ids.begin(), ids.end()}; }

}  // namespace

WideCall widen_written(std::string_view op, const ArgBag& bag, DType wide, const ValidateOptions& options) {
  if (wide != DType::f32 && wide != DType::f64)
    throw std::invalid_argument(fmt::format("widen_written: {} is not f32 or f64", dtype_name(wide)));
  const OpInfo& info = op_info(op);
  WideCall w;
  w.bag = bag;
  for (const std::string& name : info.written_by(bag)) {
    const TensorView& v = bag.tensors.at(name);
    if (!is_floating(v.dtype) || dtype_size(v.dtype) >= dtype_size(wide)) continue;
    Tensor copy(wide, v.shape());
    copy.copy_from(v);  // exact: every narrower float value is representable in `wide`
    auto it = w.copies.insert_or_assign(name, std::move(copy)).first;
    w.bag.tensors[name] = it->second.view();
  }
  if (w.copies.empty()) return w;

  const OpContract* contract = find_op_contract(op);
  if (contract == nullptr) throw std::invalid_argument(fmt::format("no contract for op '{}'", op));
  // A waived failure can let a check run that the failure used to skip, so repeat until nothing new
  // fails; each round waives at least one more id, and a contract has finitely many.
  for (;;) {
    const std::vector<std::string_view> ids = views_of(w.waived);
    ValidateOptions o = options;
    o.waived = ids;
    bool added = false;
    for (const Diagnostic& d : contract->validate(w.bag, o)) {
      if (d.severity != Severity::error) continue;
      const std::string arg = argument_of(d.location);
      if (w.copies.count(arg) == 0) {
        throw std::invalid_argument(fmt::format(
            "the {} copies of the written tensors break {} ({}) at {}, which is not about a copied tensor: {}",
            dtype_name(wide), d.id, d.slug, d.location, d.message));
      }
      if (std::find(w.waived.begin(), w.waived.end(), d.id) == w.waived.end()) {
        w.waived.push_back(d.id);
        added = true;
      }
    }
    if (!added) return w;
  }
}

void run_reference(std::string_view op, const WideCall& call, reference::Precision p, ValidateOptions options) {
  const std::vector<std::string_view> ids = views_of(call.waived);
  options.waived = ids;
  run_reference(op, call.bag, p, options);
}

}  // namespace kparity::ops
