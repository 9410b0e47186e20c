#include "kparity/fuzz/call.hpp"

namespace kparity::fuzz {
namespace {

thread_local std::vector<std::string> t_buckets;
thread_local std::optional<Call> t_recorded;

}  // namespace

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
