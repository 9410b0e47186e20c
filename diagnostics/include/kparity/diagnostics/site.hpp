#pragma once
// The catalog as a static website (`kparity explain --site DIR`, issue 17): an index with filters
// and the ranked search of search.hpp, one page per entry with the sections of the text page,
// permalinks e/<id>/ and s/<slug>/ (a slug page points to the id page), catalog.json and
// search-index.json for tools. Every link is relative and names its index.html, so the site works
// from file:// as well as from any static host; nothing is fetched at run time.
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "kparity/diagnostics/catalog.hpp"

namespace kparity {

// DIR cannot take the site (not a directory, not a previous site without --force, unwritable).
class SiteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct SiteOptions {
  bool force = false;         // replace a non-empty DIR that is not a previous kparity site
  std::string catalog_label;  // where the catalog came from, for the footer; empty: the embedded one
};

// The file a previous site holds at its root; write_site replaces a folder that has it.
inline constexpr const char* kSiteMarker = ".kparity-site";

// Every file of the site: path relative to the root (forward slashes) -> contents. Deterministic:
// the same catalog gives the same bytes (no dates), so a site can be diffed and cached.
std::map<std::string, std::string> render_site(const Catalog& c, const SiteOptions& o = {});

// Writes render_site() to dir. The site is built in a temporary sibling folder and moved into place,
// so dir is afterwards either as it was or the complete new site. An existing dir must be empty or
// a previous site (it has kSiteMarker), unless o.force; then its contents are replaced. Never
// replaces the filesystem root, the home folder or a folder holding the working directory.
void write_site(const Catalog& c, const std::filesystem::path& dir, const SiteOptions& o = {});

}  // namespace kparity
