#include "kparity/judge/call.hpp"

#include <algorithm>
#include <stdexcept>

namespace kparity::judging {

ArgBag Call::bag() const {
  ArgBag b;
  for (const auto& [name, t] : tensors) b.tensors.emplace(name, t.view());
  b.scalars = scalars;
  b.flags = flags;
  return b;
}

Tensor& Call::at(const std::string& name) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw std::out_of_range(op + ": the call has no tensor `" + name + "`");
  return it->second;
}

const Tensor& Call::at(const std::string& name) const { return const_cast<Call&>(*this).at(name); }

Call call_of_bag(const ops::OpInfo& op, const ArgBag& bag) {
  Call c;
  c.op = std::string(op.op);
  for (const auto& [name, v] : bag.tensors) {
    Tensor t(v.dtype, v.shape());
    t.copy_from(v);
    c.tensors.emplace(name, std::move(t));
  }
  c.scalars = bag.scalars;
  c.flags = bag.flags;
  c.written = op.written_by(bag);
  for (auto name : op.pure_outputs())
    if (std::find(c.written.begin(), c.written.end(), name) != c.written.end()) c.pure_outputs.emplace_back(name);
  return c;
}

ExpectedOrigin expected_origin(const std::map<std::string, std::string>& metadata) {
  if (auto it = metadata.find("kparity.expected"); it != metadata.end())
    return it->second == "oracle" ? ExpectedOrigin::oracle : ExpectedOrigin::unknown;
  return metadata.count("kparity.property") ? ExpectedOrigin::oracle : ExpectedOrigin::unknown;
}

}  // namespace kparity::judging
