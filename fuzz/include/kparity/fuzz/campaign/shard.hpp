#pragma once
// Splitting a campaign across machines: shard i of n runs its share of every property's chunks, and
// `kparity fuzz merge` puts the shards' reports back together (merge.hpp). With a case budget shard
// i takes the consecutive chunks [floor(i*K/n), floor((i+1)*K/n)) of each property's K, so the merge
// equals one run; with a time budget it takes chunks i, i+n, i+2n, ... for the whole --time.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace kparity::fuzz {

struct Shard {
  int index = 0;
  int count = 1;
  bool operator==(const Shard&) const = default;
};

// Reads the environment (a test passes its own).
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup process_env();

// "i/n" (0 <= i < n), or "auto": Slurm's SLURM_ARRAY_TASK_ID (less SLURM_ARRAY_TASK_MIN when set)
// and SLURM_ARRAY_TASK_COUNT, else Kubernetes' JOB_COMPLETION_INDEX with KPARITY_SHARD_COUNT (an
// Indexed Job does not expose its completions count). Throws std::invalid_argument saying what is
// missing or wrong.
Shard parse_shard(std::string_view spec, const EnvLookup& env = process_env());

// Shard `s`'s chunks [first, end) of a property with `chunks` chunks.
std::pair<int, int> shard_chunks(int chunks, const Shard& s);

}  // namespace kparity::fuzz
