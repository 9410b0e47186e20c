#include "kparity/fuzz/call.hpp"

#include <algorithm>
#include <stdexcept>

namespace kparity::fuzz {
namespace {

thread_local std::vector<std::string> t_buckets;
thread_local std::optional<Call> t_recorded;

}  // namespace

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

bool Call::is_pure_output(std::string_view name) const {
  return std::find(pure_outputs.begin(), pure_outputs.end(), name) != pure_outputs.end();
}

void note_bucket(std::string bucket) { t_buckets.push_back(std::move(bucket)); }

std::vector<std::string> take_buckets() {
  std::vector<std::string> out;
  out.swap(t_buckets);
  return out;
}

void record_call(const Call& call) { t_recorded = call; }

std::optional<Call> take_recorded_call() {
  std::optional<Call> out;
  out.swap(t_recorded);
  return out;
}

}  // namespace kparity::fuzz
