// `kparity explain`: look-ups and exports of the catalog (diagnostics guide §5).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/explain.hpp"
#include "kparity/diagnostics/search.hpp"
#include "kparity/diagnostics/site.hpp"

namespace kparity::cli {
namespace {

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) {
    if (!s.empty()) s += ' ';
    s += w;
  }
  return s;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

void print(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (text.empty() || text.back() != '\n') std::fputc('\n', stdout);
}

// Nothing matched exactly: the ranked candidates of kparity::search (the same ranking as the
// site's search box), then the closest ids and slugs by spelling. Exit status stays 2.
int unknown(const Catalog& c, const std::string& query) {
  std::fprintf(stderr, "error: no catalog entry matches '%s' (not an id, a slug, or a known message)\n", query.c_str());
  const auto hits = search(c, query);
  if (!hits.empty()) {
    std::fprintf(stderr, "help: closest entries, best first (score: share of the query explained, +1 for an exact match):\n");
    for (const auto& h : hits) {
      const std::string& summary = h.entry->summary.empty() ? h.entry->error_message : h.entry->summary;
      std::fprintf(stderr, "  %s  %-40s %.2f  %s\n", h.entry->id.c_str(), h.entry->slug.c_str(), h.score, summary.c_str());
      if (!h.reason.empty()) std::fprintf(stderr, "  %16s  %s\n", "", h.reason.c_str());
    }
  }
  auto near = c.suggest(query);
  if (!near.empty()) {
    std::string list;
    for (const auto& s : near) list += fmt::format("{}{}", list.empty() ? "" : ", ", s);
    std::fprintf(stderr, "help: did you mean %s?\n", list.c_str());
  }
  std::fprintf(stderr, "help: `kparity explain <id>` shows an entry; `kparity explain --list` shows every entry\n");
  return kExitBadInput;
}

// `--site DIR`: the whole catalog as a static site (issue 17); the catalog was loaded, and rejected
// with status 2 if malformed, before anything is written.
int write_site_cmd(const Catalog& c, const ExplainOptions& o, const std::string& query) {
  if (!query.empty() || o.json || o.sarif || o.markdown || o.list || !o.op.empty() || !o.tag.empty()) {
    std::fprintf(stderr, "error: --site writes every entry; it takes no query, --json, --sarif, --markdown, --list, --op or --tag\n");
    return kExitBadInput;
  }
  try {
    write_site(c, o.site, {.force = o.force, .catalog_label = o.catalog});
  } catch (const SiteError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  }
  std::printf("wrote %zu entry pages to %s; open %s/index.html\n", c.entries().size(), o.site.c_str(), o.site.c_str());
  return kExitOk;
}

}  // namespace

int explain(const ExplainOptions& o) {
  if (int modes = o.json + o.sarif + o.markdown; modes > 1) {
    std::fprintf(stderr, "error: choose one of --json, --sarif, --markdown\n");
    return kExitBadInput;
  }
  std::shared_ptr<const Catalog> override_catalog;
  if (!o.catalog.empty()) {
    try {
      override_catalog = std::make_shared<const Catalog>(Catalog::load(o.catalog));
    } catch (const std::exception& e) {  // CatalogError, and filesystem errors for a missing path
      std::fprintf(stderr, "error: cannot load catalog '%s': %s\n", o.catalog.c_str(), e.what());
      return kExitBadInput;
    }
    use_catalog(override_catalog);
  }
  const Catalog& c = override_catalog ? *override_catalog : Catalog::embedded();
  const std::string query = joined(o.query);
  if (o.force && o.site.empty()) {
    std::fprintf(stderr, "error: --force only applies to --site DIR\n");
    return kExitBadInput;
  }
  if (!o.site.empty()) return write_site_cmd(c, o, query);

  // One entry: the page, or its JSON / SARIF rule.
  if (!query.empty() && !o.list && !o.markdown) {
    const CatalogEntry* e = c.lookup(query);
    if (!e) return unknown(c, query);
    if (o.json) print(explain_json(*e).dump(2));
    else if (o.sarif) print(sarif_log({e}).dump(2));
    else print(explain_text(*e, c));
    return kExitOk;
  }

  std::vector<const CatalogEntry*> selected = c.list(o.op, o.tag);
  if (!query.empty()) {  // --list/--markdown with a query: an id or slug prefix
    std::erase_if(selected, [&](const CatalogEntry* e) {
      return !starts_with(e->id, query) && !starts_with(e->slug, query);
    });
    if (selected.empty()) return unknown(c, query);
  }
  if (o.json) {
    auto all = nlohmann::json::array();
    for (const auto* e : selected) all.push_back(explain_json(*e));
    print(all.dump(2));
  } else if (o.sarif) {
    print(sarif_log(selected).dump(2));
  } else if (o.markdown) {
    print(markdown_index(selected, c));
  } else if (o.list) {
    print(list_text(selected));
  } else {
    std::fprintf(stderr,
                 "usage: kparity explain <id | slug | \"pasted message\">\n"
                 "       kparity explain --list [prefix] [--op OP] [--tag TAG]\n"
                 "       kparity explain [--json | --sarif | --markdown] [query]\n"
                 "       kparity explain --site DIR [--force] [--catalog PATH]\n");
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace kparity::cli
