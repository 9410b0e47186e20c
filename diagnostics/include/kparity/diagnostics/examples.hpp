#pragma once
// Executable examples: a base fixture (catalog/fixtures/*.json) plus "set" overrides, turned into
// host tensors and an ArgBag the op's contract can validate. No GPU needed: a "cuda:0" tensor is
// host memory labelled with that device.
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/checker.hpp"

namespace kparity {

struct BuiltExample {
  std::string op;
  ArgBag bag;
  ValidateOptions options;
  std::vector<std::unique_ptr<Tensor>> storage;  // owns what bag's views point at
};

// example: {"fixture": "<name>", "set": {"<tensor>.<field>": value, "scalars.<n>": v, "flags.<n>": b,
//            "<tensor>": null}, "options": {"extra": bool, "deep": bool, "entry": "reference"}}
// Throws CatalogError on an unknown fixture or a malformed override.
BuiltExample build_example(const nlohmann::json& example, const nlohmann::json& fixtures = embedded_fixtures());

}  // namespace kparity
