// The op specs of every generator, in one list (op_spec.hpp).
#include "kparity/fuzz/generators/op_spec.hpp"

#include <stdexcept>

#include "kparity/fuzz/generators/kda_gen.hpp"
#include "kparity/fuzz/generators/sparse_gen.hpp"

namespace kparity::fuzz {

const std::vector<OpFuzzSpec>& op_specs() {
  static const std::vector<OpFuzzSpec> specs = [] {
    std::vector<OpFuzzSpec> all = kda_specs();
    for (auto& s : sparse_specs()) all.push_back(std::move(s));
    return all;
  }();
  return specs;
}

const OpFuzzSpec& spec_for(std::string_view op) {
  for (const auto& s : op_specs())
    if (s.op == op) return s;
  std::string known;
  for (const auto& s : op_specs()) known += (known.empty() ? "" : ", ") + s.op;
  throw std::invalid_argument("no fuzz spec for op '" + std::string(op) + "' (known: " + known + ")");
}

}  // namespace kparity::fuzz
