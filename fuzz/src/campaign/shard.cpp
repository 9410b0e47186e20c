// Shards of a campaign (shard.hpp).
#include "kparity/fuzz/campaign/shard.hpp"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

namespace kparity::fuzz {
namespace {

// A non-negative decimal integer, or nullopt.
std::optional<long long> parse_count(const std::string& s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

long long env_number(const EnvLookup& env, const char* name) {
  const auto v = env(name);
  const auto n = v ? parse_count(*v) : std::nullopt;
  if (!n) throw std::invalid_argument(fmt::format("--shard auto: {}={} is not a non-negative integer", name, v.value_or("")));
  return *n;
}

Shard checked(long long index, long long count, const std::string& where) {
  if (count < 1 || index >= count)
    throw std::invalid_argument(fmt::format("--shard {}: the index must lie in [0, count) and count be at least 1 "
                                            "(index {}, count {})", where, index, count));
  return {static_cast<int>(index), static_cast<int>(count)};
}

}  // namespace

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
}

Shard parse_shard(std::string_view spec, const EnvLookup& env) {
  if (spec != "auto") {
    const auto slash = spec.find('/');
    const auto i = slash == std::string_view::npos ? std::nullopt : parse_count(std::string(spec.substr(0, slash)));
    const auto n = slash == std::string_view::npos ? std::nullopt : parse_count(std::string(spec.substr(slash + 1)));
    if (!i || !n) throw std::invalid_argument(fmt::format("--shard {}: expected i/n (shard i of n, from 0) or auto", spec));
    return checked(*i, *n, std::string(spec));
  }
  if (env("SLURM_ARRAY_TASK_ID")) {
    // sbatch --array=a-b sets ids a..b; a step other than 1 would leave holes in the partition.
    if (const auto step = env("SLURM_ARRAY_TASK_STEP"); step && *step != "1")
      throw std::invalid_argument(fmt::format("--shard auto: SLURM_ARRAY_TASK_STEP={}: use a contiguous array "
                                              "(--array=0-N) so that every shard runs", *step));
    if (!env("SLURM_ARRAY_TASK_COUNT"))
      throw std::invalid_argument("--shard auto: SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not "
                                  "(a Slurm array job sets both)");
    const long long id = env_number(env, "SLURM_ARRAY_TASK_ID");
    const long long min = env("SLURM_ARRAY_TASK_MIN") ? env_number(env, "SLURM_ARRAY_TASK_MIN") : 0;
    const long long count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
    if (id < min) throw std::invalid_argument(fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} is below SLURM_ARRAY_TASK_MIN={}", id, min));
    return checked(id - min, count, fmt::format("auto (Slurm array task {} of {})", id - min, count));
  }
  if (env("JOB_COMPLETION_INDEX")) {
    if (!env("KPARITY_SHARD_COUNT"))
      throw std::invalid_argument("--shard auto: JOB_COMPLETION_INDEX is set (a Kubernetes Indexed Job) but "
                                  "KPARITY_SHARD_COUNT is not: set it to the Job's completions");
    const long long index = env_number(env, "JOB_COMPLETION_INDEX");
    const long long count = env_number(env, "KPARITY_SHARD_COUNT");
    return checked(index, count, fmt::format("auto (Indexed Job completion {} of {})", index, count));
  }
  if (env("KPARITY_SHARD_COUNT"))
    throw std::invalid_argument("--shard auto: KPARITY_SHARD_COUNT is set but JOB_COMPLETION_INDEX is not "
                                "(Kubernetes sets it in an Indexed Job's pods)");
  throw std::invalid_argument("--shard auto: no scheduler found: expected SLURM_ARRAY_TASK_ID and "
                              "SLURM_ARRAY_TASK_COUNT (sbatch --array) or JOB_COMPLETION_INDEX and KPARITY_SHARD_COUNT "
                              "(a Kubernetes Indexed Job); or pass --shard i/n");
}

std::pair<int, int> shard_chunks(int chunks, const Shard& s) {
  const auto at = [&](int i) { return static_cast<int>(static_cast<long long>(chunks) * i / s.count); };
  return {at(s.index), at(s.index + 1)};
}

}  // namespace kparity::fuzz
