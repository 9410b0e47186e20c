#pragma once
// The pinned seed of one property in a test binary: stable per name (FNV-1a over the name from a
// per-binary base), overridden by KPARITY_FUZZ_SEED so a CI failure can be rerun under other seeds.
#include <cstdint>
#include <cstdlib>
#include <string_view>

namespace kparity::testing_support {

inline std::uint64_t pinned_seed(std::string_view name, std::uint64_t base) {
  std::uint64_t h = base;
  if (const char* s = std::getenv("KPARITY_FUZZ_SEED")) h = std::strtoull(s, nullptr, 0);
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace kparity::testing_support
