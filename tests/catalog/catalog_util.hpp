#pragma once
// Shared by the catalog-wide tests: source files, the entry list for parametrised suites, and the
// exception class check.
#include <cctype>
#include <fstream>
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

// Ids of the embedded catalog, or none when it does not load: a separate test reports that, and
// parametrised suites must still instantiate (at static initialisation) rather than crash.
inline std::vector<std::string> embedded_ids() {
  std::vector<std::string> ids;
  try {
    // Kernel-dispatch entries fire in the launchers, after the contract passed: tests/gpu_dispatch
    // launches their examples instead.
    for (const auto& e : Catalog::embedded().entries())
      if (e.record.value("emittedBy", "contracts") != "kernels") ids.push_back(e.id);
  } catch (const std::exception&) {
  }
  return ids;
}

inline std::string gtest_name(const std::string& id) {
  const CatalogEntry* e = nullptr;
  try {
    e = Catalog::embedded().by_id(id);
  } catch (const std::exception&) {
  }
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
