#pragma once
// Shared by the KDA contract tests: a fixture plus overrides as a built example, and the op's
// contract run on it in both modes.
#include <optional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/examples.hpp"

namespace kparity::contract_test {

inline const nlohmann::json kExtra = {{"extra", true}};
inline const nlohmann::json kDeep = {{"extra", true}, {"deep", true}};

inline BuiltExample build(const char* fixture, nlohmann::json set = nlohmann::json::object(),
                          nlohmann::json options = nlohmann::json::object()) {
  if (set.is_null()) set = nlohmann::json::object();
  nlohmann::json ex = {{"fixture", fixture}, {"set", std::move(set)}};
  if (!options.empty()) ex["options"] = std::move(options);
  return build_example(ex);
}

inline std::vector<Diagnostic> validate(const BuiltExample& e) { return find_op_contract(e.op)->validate(e.bag, e.options); }

// The first error check() raises, or nullopt.
inline std::optional<Diagnostic> first_error(const BuiltExample& e) {
  try {
    find_op_contract(e.op)->check(e.bag, e.options);
  } catch (const Error& err) {
    return err.diagnostic();
  }
  return std::nullopt;
}

}  // namespace kparity::contract_test
