#pragma once
// The catalog: one JSON record per check (catalog/**/<slug>.json), embedded into the library at
// build time. Look-ups by id, slug or a pasted message; "did you mean" for unknown input.
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/diagnostic.hpp"

namespace kparity {

// A malformed catalog file or record; the message names the file and the field.
class CatalogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CatalogEntry {
  nlohmann::json record;  // the whole record, as written
  std::string source;     // file it came from ("<embedded>/kda/kda-g-cache-dtype.json")

  std::string id, slug, op, argument, status, origin, summary;
  std::string error_message, message_pattern, message_template;
  ErrorClass error_class = ErrorClass::ValueError;
  Severity severity = Severity::error;
  int check_order = 0;
  std::vector<std::string> tags;

  bool documented() const;  // has prose (documentation): the explain footer is printed only then
};

class Catalog {
 public:
  // The catalog compiled into the library. Parsed once, on first use; never fails at run time
  // (the build rejects a malformed file).
  static const Catalog& embedded();
  // Every *.json below dir (or one file); throws CatalogError on malformed JSON or a bad record.
  static Catalog load(const std::filesystem::path& path);
  // From (source name, JSON text) pairs; throws CatalogError.
  static Catalog from_texts(const std::vector<std::pair<std::string, std::string>>& files);

  const std::vector<CatalogEntry>& entries() const noexcept { return entries_; }
  const CatalogEntry* by_id(std::string_view id) const;
  const CatalogEntry* by_slug(std::string_view slug) const;
  // Entries whose messagePattern fully matches the pasted text (trimmed; a leading
  // "ValueError: " style class prefix is accepted), most specific pattern first.
  std::vector<const CatalogEntry*> by_message(std::string_view text) const;
  // id, then slug, then message.
  const CatalogEntry* lookup(std::string_view query) const;
  // Up to `n` ids/slugs closest to query by edit distance (bounded), best first.
  std::vector<std::string> suggest(std::string_view query, std::size_t n = 3) const;
  // Filter by op (exact or prefix such as "kda/") and/or tag; empty filters match all.
  std::vector<const CatalogEntry*> list(std::string_view op = {}, std::string_view tag = {}) const;

 private:
  std::vector<CatalogEntry> entries_;
};

// The catalog diagnostics are built from: the embedded one unless an override is installed.
const Catalog& active_catalog();
void use_catalog(std::shared_ptr<const Catalog> c);  // nullptr restores the embedded catalog

// Base fixtures for executable examples (catalog/fixtures/*.json), embedded like the catalog.
const nlohmann::json& embedded_fixtures();

}  // namespace kparity
