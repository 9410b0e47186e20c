#pragma once
// A ReplaySSM world triple (kernel, faithful, oracle) stepped together under the cursor protocol.
#include <string>

#include "compare.hpp"
#include "decode_case.hpp"
#include "kparity/kernels/kda.hpp"
#include "tolerances.hpp"

namespace kparity::gpu_test {

inline const kernels::LaunchOptions kSyncLaunch{ValidateOptions::upstream(), true};

struct ReplayWorlds {
  HostDecode lp, orc, ker;  // ker: host mirror of the device world after each step
  DevDecode dev;
  Tensor state_before;  // the kernel world's state when the last step began
  explicit ReplayWorlds(const HostDecode& h) : lp(h), orc(h), ker(h), dev(h) {}

  // One step with fresh inputs; returns the per-row flush flags the step used.
  std::vector<bool> step(std::uint64_t seed);
  void advance();  // B.2.8 cursor protocol on every world
  // Compares out, and the state on rows that flushed, rings at c on rows that appended.
  void expect_step_matches(const std::vector<bool>& flushed, const std::vector<std::int64_t>& cursors,
                           const std::string& tag) const;
};

}  // namespace kparity::gpu_test
