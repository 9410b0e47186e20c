#pragma once
// Shared by the catalog-wide tests: source files, the entry list for parametrised suites (a catalog
// that does not load fails them), and the exception class check.
#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/errors.hpp"

namespace kparity::test {

inline std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(KPARITY_SOURCE_DIR) + "/" + rel, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + rel);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The parameters of the catalog-wide parametrised suites: the ids of every entry a contract emits
// (kernel-dispatch entries fire in the launchers, after the contract passed: tests/gpu_dispatch
// launches their examples instead). The suites instantiate at static initialisation, where an
// exception would abort the binary before gtest can report anything, so a catalog that throws or
// holds no contract entry becomes one parameter, "!" + the reason, whose case fails
// (fail_if_unusable). An empty list would be no better: the suite would silently have no cases.
inline constexpr char kUnusableCatalog = '!';

inline std::vector<std::string> contract_entry_ids(const std::function<const Catalog&()>& load) {
  std::vector<std::string> ids;
  try {
    for (const auto& e : load().entries())
      if (e.record.value("emittedBy", "contracts") != "kernels") ids.push_back(e.id);
  } catch (const std::exception& e) {
    return {std::string(1, kUnusableCatalog) + "the catalog did not load: " + e.what()};
  }
  if (ids.empty()) return {std::string(1, kUnusableCatalog) + "the catalog holds no entry that a contract emits"};
  return ids;
}

inline std::vector<std::string> embedded_ids() {
  return contract_entry_ids([]() -> const Catalog& { return Catalog::embedded(); });
}

// Fails the current test when its parameter reports an unusable catalog (see contract_entry_ids).
inline ::testing::AssertionResult usable_param(const std::string& param) {
  if (!param.empty() && param.front() == kUnusableCatalog) return ::testing::AssertionFailure() << param.substr(1);
  return ::testing::AssertionSuccess();
}

inline std::string gtest_name(const std::string& id) {
  if (!id.empty() && id.front() == kUnusableCatalog) return "CatalogUnusable";
  const CatalogEntry* e = Catalog::embedded().by_id(id);  // contract_entry_ids loaded it already
  std::string name = e ? e->slug : id;
  for (auto& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

inline bool is_instance(const Error& e, ErrorClass c) {
  switch (c) {
    case ErrorClass::ValueError: return dynamic_cast<const ValueError*>(&e) != nullptr;
    case ErrorClass::RuntimeError: return dynamic_cast<const RuntimeError*>(&e) != nullptr;
    case ErrorClass::IndexError: return dynamic_cast<const IndexError*>(&e) != nullptr;
    case ErrorClass::TypeError: return dynamic_cast<const TypeError*>(&e) != nullptr;
    case ErrorClass::NotImplementedError: return dynamic_cast<const NotImplementedError*>(&e) != nullptr;
    case ErrorClass::InternalError: return dynamic_cast<const InternalError*>(&e) != nullptr;
  }
  return false;
}

}  // namespace kparity::test
