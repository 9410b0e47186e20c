// Properties and their lists (property.hpp).
#include "kparity/fuzz/properties/property.hpp"

#include <rapidcheck.h>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace kparity::fuzz {
namespace {
thread_local int t_early_returns = 0;
}  // namespace

void note_early_return(const char* why) {
  ++t_early_returns;
  RC_LOG() << "early return: " << why << "\n";
}

int take_early_returns() {
  const int n = t_early_returns;
  t_early_returns = 0;
  return n;
}

std::string op_of(const Property& p) {
  if (!p.op.empty()) return p.op;
  const auto a = p.name.find('/');
  if (a == std::string::npos) return {};
  const auto b = p.name.find('/', a + 1);
  const std::string head = p.name.substr(0, b);
  return find_op_contract(head) != nullptr ? head : std::string();
}

std::string backend_of(const Property& p) { return p.backend.empty() ? std::string("reference") : p.backend; }

std::vector<Property> cpu_properties() {
  std::vector<Property> all;
  for (auto&& group : {kda_properties(), sparse_properties(), hostile_properties(), oracle_properties()})
    for (const auto& p : group) all.push_back(p);
  return all;
}

std::vector<Property> skipped_cuda_properties(const std::string& why) {
  // A stand-in with the real backend's name and ops: the same property names as on a device.
  std::vector<Property> out = differential_properties({Backend{"cuda", cuda_backend_ops(), nullptr}}, op_specs());
  for (auto& p : out) {
    p.skipped = why;
    p.body = nullptr;
  }
  return out;
}

std::vector<Property> all_properties() {
  std::vector<Property> all = cpu_properties();
  std::string why;
  const std::vector<Backend> cuda = cuda_backends(why);
  for (auto& p : cuda.empty() ? skipped_cuda_properties(why) : differential_properties(cuda, op_specs()))
    all.push_back(std::move(p));
  for (auto& p : launcher_properties()) all.push_back(std::move(p));
  return all;
}

}  // namespace kparity::fuzz
