#pragma once
// Matchers over a validate() result shared by the contract tests: the ids in order, and membership.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/diagnostic.hpp"

namespace kparity::test {

inline std::vector<std::string> ids_of(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.id);
  return out;
}

inline bool has(const std::vector<Diagnostic>& ds, std::string_view id) {
  return std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.id == id; });
}

}  // namespace kparity::test
