#pragma once
// Views of catalog entries: the explain page, JSON, SARIF 2.1.0 and a markdown error index.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"

namespace kparity {

// A page like the seed pages: Error message / What it means / Source / Solutions / Example fix /
// When it happens / Prevention / Related errors, ending with the catalog id.
std::string explain_text(const CatalogEntry& e, const Catalog& c);
nlohmann::json explain_json(const CatalogEntry& e);
// The "Related errors" of a page: the entry's `related` ids, then the active checks up to two
// places before and after it in its op's order.
std::vector<const CatalogEntry*> related_entries(const CatalogEntry& e, const Catalog& c);
// SARIF log with rules[] from the given entries and results[] from the diagnostics.
nlohmann::json sarif_log(const std::vector<const CatalogEntry*>& rules, const std::vector<Diagnostic>& results = {});
// An error index for docs: one section per entry, grouped by op.
std::string markdown_index(const std::vector<const CatalogEntry*>& entries, const Catalog& c);
// One line per entry: "<id>  <slug>  <summary>".
std::string list_text(const std::vector<const CatalogEntry*>& entries);

}  // namespace kparity
