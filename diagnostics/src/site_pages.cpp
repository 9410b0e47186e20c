// The pages of the static site (render_site): the index, one page per entry with the sections of
// explain_text, the slug and deprecated-id permalinks, catalog.json and the search index. Assets
// (CSS, the filter/search script and the scorer) come from diagnostics/site/, embedded at build time.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/diagnostics/explain.hpp"
#include "kparity/diagnostics/search.hpp"
#include "kparity/diagnostics/site.hpp"
#include "util.hpp"

#ifndef KPARITY_VERSION_STRING
#define KPARITY_VERSION_STRING "0.1.0"
#endif

namespace kparity {
namespace detail {
// Generated from diagnostics/site/ by diagnostics/site/embed.cmake: file name -> contents.
const std::vector<std::pair<std::string_view, std::string_view>>& site_assets();
}  // namespace detail

namespace {

using nlohmann::json;
using detail::json_str;
using detail::json_str_list;

std::string esc(std::string_view s) {
  std::string out;
  out.reserve(s.size() + s.size() / 8);
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// Prose of the catalog: `code` spans become <code>, blank lines separate paragraphs.
std::string inline_html(std::string_view s) {
  std::string out;
  bool in_code = false;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '`') {
      // An unpaired backtick stays literal.
      const bool opens = i < s.size() && !in_code && s.find('`', i + 1) != std::string_view::npos;
      out += esc(s.substr(start, i - start));
      if (i < s.size()) {
        if (in_code) out += "</code>";
        else if (opens) out += "<code>";
        else out += "`";
        in_code = in_code ? false : opens;
      }
      start = i + 1;
    }
  }
  if (in_code) out += "</code>";
  return out;
}

std::string paragraphs(std::string_view s) {
  std::string out;
  std::size_t pos = 0;
  const std::string_view t = detail::trim(s);
  while (pos < t.size()) {
    std::size_t end = t.find("\n\n", pos);
    if (end == std::string_view::npos) end = t.size();
    const auto para = detail::trim(t.substr(pos, end - pos));
    if (!para.empty()) out += "<p>" + inline_html(para) + "</p>\n";
    pos = end + 2;
  }
  return out;
}

std::string entry_path(const std::string& id) { return "e/" + id + "/index.html"; }
std::string slug_path(const std::string& slug) { return "s/" + slug + "/index.html"; }

std::string class_token(std::string_view s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : '-');
  return out;
}

struct SiteInfo {
  std::string digest;    // of every record, in catalog order
  std::string source;    // "the embedded catalog" or the override's path
  std::size_t upstream = 0, own = 0, inactive = 0;
  std::vector<std::tuple<std::string, std::string, std::size_t>> commits;  // repo, sha, entries citing it
};

SiteInfo site_info(const Catalog& c, const SiteOptions& o) {
  SiteInfo info;
  std::string all;
  std::map<std::pair<std::string, std::string>, std::size_t> commits;
  for (const auto& e : c.entries()) {
    all += e.record.dump() + "\n";
    (e.origin == "upstream" ? info.upstream : info.own) += 1;
    if (e.status != "active") ++info.inactive;
    const std::string sha = json_str(e.record, "analyzedSha");
    if (!sha.empty()) ++commits[{json_str(e.record, "repo"), sha}];
  }
  info.digest = detail::hex64(detail::fnv1a(all));
  info.source = o.catalog_label.empty() ? "the embedded catalog" : o.catalog_label;
  for (const auto& [key, n] : commits) info.commits.emplace_back(key.first, key.second, n);
  return info;
}

std::string head(const std::string& title, const std::string& description, const std::string& root,
                 const std::string& extra = {}) {
  return "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         "<meta name=\"color-scheme\" content=\"light dark\">\n"
         "<title>" + esc(title) + "</title>\n<meta name=\"description\" content=\"" + esc(description) + "\">\n"
         "<link rel=\"stylesheet\" href=\"" + root + "assets/site.css\">\n" + extra + "</head>\n";
}

std::string top_bar(const std::string& root, bool with_search) {
  std::string s = "<a class=\"skip\" href=\"#main\">Skip to content</a>\n<header class=\"top\"><div class=\"wrap\">\n"
                  "<a class=\"brand\" href=\"" + root + "index.html\"><span class=\"logo\" aria-hidden=\"true\">kp</span> kparity error index</a>\n";
  if (with_search)
    s += "<form class=\"top-search\" action=\"" + root + "index.html\" method=\"get\" role=\"search\">"
         "<input type=\"search\" name=\"q\" placeholder=\"Paste an error message\" aria-label=\"Search the catalog\">"
         "<button type=\"submit\">Search</button></form>\n";
  return s + "</div></header>\n";
}

std::string footer(const Catalog& c, const SiteInfo& info, const std::string& root) {
  std::string s = "<footer class=\"foot\"><div class=\"wrap\">\n<p>Catalog: <strong>" + std::to_string(c.entries().size()) +
                  " entries</strong> (" + std::to_string(info.upstream) + " upstream checks, " + std::to_string(info.own) +
                  " kparity checks";
  if (info.inactive) s += ", " + std::to_string(info.inactive) + " no longer emitted or retired";
  s += ") &middot; kparity " KPARITY_VERSION_STRING " &middot; catalog digest <code class=\"digest\">" + info.digest +
       "</code> &middot; from " + esc(info.source) + "</p>\n";
  if (!info.commits.empty()) {
    s += "<p>Upstream commits cited: ";
    bool first = true;
    for (const auto& [repo, sha, n] : info.commits) {
      if (!first) s += ", ";
      first = false;
      s += "<a class=\"commit\" href=\"https://github.com/" + esc(repo) + "/tree/" + esc(sha) + "\">" + esc(repo) + "@" +
           esc(sha.substr(0, 10)) + "</a> (" + std::to_string(n) + (n == 1 ? " entry)" : " entries)");
    }
    s += "</p>\n";
  }
  s += "<p>For tools: <a href=\"" + root + "catalog.json\">catalog.json</a> &middot; <a href=\"" + root +
       "search-index.json\">search-index.json</a> &middot; the same pages in a terminal: <code>kparity explain &lt;id&gt;</code></p>\n"
       "</div></footer>\n";
  return s;
}

std::string badge(std::string_view kind, std::string_view value, std::string_view label = {}) {
  return "<span class=\"badge " + std::string(kind) + " " + std::string(kind) + "-" + class_token(value) + "\">" +
         (label.empty() ? esc(value) : esc(label)) + "</span>";
}

std::string badges(const CatalogEntry& e) {
  std::string s = badge("op", e.op) + badge("class", error_class_name(e.error_class)) + badge("severity", severity_name(e.severity)) +
                  badge("origin", e.origin, e.origin == "upstream" ? "upstream check" : "kparity check");
  if (e.status != "active") s += badge("status", e.status);
  return s;
}

std::string section(const char* id, const char* title, const std::string& body) {
  if (detail::trim(body).empty()) return {};
  return "<section id=\"" + std::string(id) + "\" aria-labelledby=\"h-" + id + "\">\n<h2 id=\"h-" + id + "\">" + title +
         "</h2>\n" + body + "</section>\n";
}

std::string list_items(const std::vector<std::string>& items, const char* tag) {
  if (items.empty()) return {};
  std::string s = "<" + std::string(tag) + ">\n";
  for (const auto& it : items) s += "<li>" + inline_html(it) + "</li>\n";
  return s + "</" + tag + ">\n";
}

std::string code_block(std::string_view code, std::string_view cls, bool copy = true) {
  std::string s = "<div class=\"code\">";
  if (copy) s += "<button type=\"button\" class=\"copy\" aria-label=\"Copy to the clipboard\">Copy</button>";
  return s + "<pre><code class=\"" + std::string(cls) + "\">" + esc(code) + "</code></pre></div>\n";
}

// The example fix with its comment lines ("# before", "// after") set apart.
std::string fix_block(std::string_view fix, bool cpp) {
  std::string body;
  std::size_t pos = 0;
  while (pos <= fix.size()) {
    std::size_t end = fix.find('\n', pos);
    if (end == std::string_view::npos) end = fix.size();
    const std::string_view line = fix.substr(pos, end - pos);
    const std::string_view t = detail::trim(line);
    const bool comment = cpp ? t.starts_with("//") : (t.starts_with("#") && !t.starts_with("#include"));
    body += comment ? "<span class=\"tok-comment\">" + esc(line) + "</span>" : esc(line);
    if (end < fix.size()) body += "\n";
    pos = end + 1;
  }
  return "<div class=\"code\"><button type=\"button\" class=\"copy\" aria-label=\"Copy to the clipboard\">Copy</button><pre><code class=\"" +
         std::string(cpp ? "language-cpp" : "language-python") + "\">" + body + "</code></pre></div>\n";
}

std::string source_html(const CatalogEntry& e) {
  const auto& r = e.record;
  std::string s = "<dl class=\"facts\">\n";
  if (e.origin == "upstream") {
    const std::string path = json_str(r, "filePath"), uri = json_str(r, "helpUri"), sha = json_str(r, "analyzedSha");
    const auto line = r.find("lineNumber");
    const std::string at = path + (line != r.end() && line->is_number_integer() ? ":" + std::to_string(line->get<long long>()) : "");
    if (!path.empty()) {
      s += "<dt>Thrown at</dt><dd>";
      s += uri.empty() ? "<code>" + esc(at) + "</code>" : "<a class=\"upstream\" href=\"" + esc(uri) + "\"><code>" + esc(at) + "</code></a>";
      s += " in " + esc(json_str(r, "repo"));
      if (!sha.empty()) s += ", pinned to <code>" + esc(sha.substr(0, 10)) + "</code>";
      s += "</dd>\n";
    }
  } else {
    s += "<dt>Origin</dt><dd>A kparity check with no upstream counterpart. ";
    if (r.value("defaultEnabled", false)) s += "On by default.";
    else s += r.value("dataDependent", false) ? "Off by default: runs with <code>ValidateOptions::extra</code> and <code>deep</code> (it reads tensor contents)."
                                              : "Off by default: runs with <code>ValidateOptions::extra</code>.";
    s += "</dd>\n";
    if (const auto uri = json_str(r, "helpUri"); !uri.empty())
      s += "<dt>Upstream site</dt><dd><a class=\"upstream\" href=\"" + esc(uri) + "\">" + esc(uri) + "</a></dd>\n";
  }
  if (const auto ref = json_str(r, "checkRef"); !ref.empty()) s += "<dt>Spec</dt><dd>" + esc(ref) + "</dd>\n";
  s += "<dt>Op</dt><dd><code>" + esc(e.op) + "</code>";
  if (!e.argument.empty()) s += ", argument <code>" + esc(e.argument) + "</code>";
  s += "</dd>\n<dt>Check order</dt><dd>" + std::to_string(e.check_order) + "</dd>\n";
  if (const auto since = json_str(r, "since"); !since.empty()) s += "<dt>Since</dt><dd>kparity " + esc(since) + "</dd>\n";
  if (const auto note = json_str(r, "note"); !note.empty() && e.status == "active") s += "<dt>Note</dt><dd>" + inline_html(note) + "</dd>\n";
  return s + "</dl>\n";
}

std::string status_banner(const CatalogEntry& e, const Catalog& c, const std::string& root) {
  if (e.status == "active") return {};
  std::string s = "<div class=\"status-note\" role=\"note\"><strong>" +
                  std::string(e.status == "retired" ? "Retired." : "No longer emitted.") + "</strong> ";
  if (const auto by = json_str(e.record, "replacedBy"); !by.empty()) {
    const CatalogEntry* next = c.by_id(by);
    s += "Replaced by " + (next ? "<a href=\"" + root + entry_path(by) + "\"><code>" + esc(by) + "</code> " + esc(next->slug) + "</a>"
                                : "<code>" + esc(by) + "</code>") + ". ";
  }
  if (const auto note = json_str(e.record, "note"); !note.empty()) s += inline_html(note);
  return s + "</div>\n";
}

// Example fixes are Python for upstream-facing entries and C++ for kparity API use (catalog README).
bool fix_is_cpp(std::string_view fix) {
  return fix.find("kparity::") != std::string_view::npos || fix.find("#include") != std::string_view::npos;
}

std::string entry_page(const CatalogEntry& e, const Catalog& c, const SiteInfo& info) {
  const std::string root = "../../";
  const auto& r = e.record;
  const std::string summary = e.summary.empty() ? e.error_message : e.summary;
  const json ld = {{"@context", "https://schema.org"}, {"@type", "TechArticle"}, {"identifier", e.id}, {"name", e.slug},
                   {"headline", summary}, {"description", json_str(r, "documentation")}, {"about", e.op},
                   {"keywords", e.tags}, {"isPartOf", {{"@type", "WebSite"}, {"name", "kparity error index"}}}};
  // "</" must not appear inside the script element.
  std::string ld_text = ld.dump();
  for (std::size_t p = 0; (p = ld_text.find("</", p)) != std::string::npos;) ld_text.replace(p, 2, "<\\/");
  std::string s = head(e.id + " " + e.slug + " · kparity error index", summary, root,
                       "<script type=\"application/ld+json\">" + ld_text + "</script>\n");
  s += "<body class=\"entry-page\">\n" + top_bar(root, true);
  s += "<main id=\"main\" class=\"wrap\">\n<nav class=\"crumbs\" aria-label=\"Breadcrumb\"><a href=\"" + root + "index.html\">Index</a>"
       " <span aria-hidden=\"true\">/</span> <a href=\"" + root + "index.html?op=" + esc(e.op) + "\">" + esc(e.op) + "</a></nav>\n";
  s += "<div class=\"entry-layout\">\n<article class=\"entry\" data-id=\"" + e.id + "\">\n<header class=\"entry-head\">\n<p class=\"badges\">" + badges(e) + "</p>\n";
  s += "<h1><code class=\"id\">" + e.id + "</code> <span class=\"slug\">" + esc(e.slug) + "</span></h1>\n";
  s += "<p class=\"summary\">" + inline_html(summary) + "</p>\n</header>\n";
  s += status_banner(e, c, root);

  std::vector<std::pair<std::string, std::string>> toc;  // (anchor, title) of the sections present
  std::string body;
  auto add = [&](const char* id, const char* title, const std::string& html) {
    if (detail::trim(html).empty()) return;
    body += section(id, title, html);
    toc.emplace_back(id, title);
  };
  std::string message = code_block(std::string(error_class_name(e.error_class)) + ": " + e.error_message, "message");
  if (e.message_template != e.error_message && !e.message_template.empty()) {
    message += "<dl class=\"facts\">\n<dt>Template</dt><dd><code>" + esc(e.message_template) + "</code></dd>\n";
    message += "<dt>Pattern</dt><dd><code>" + esc(e.message_pattern) + "</code></dd>\n</dl>\n";
  }
  add("error-message", "Error message", message);
  add("what-it-means", "What it means", paragraphs(json_str(r, "documentation")));
  add("source", "Source", source_html(e));
  add("solutions", "Solutions", list_items(json_str_list(r, "solutions"), "ol"));
  if (const auto fix = json_str(r, "exampleFix"); !detail::trim(fix).empty()) add("example-fix", "Example fix", fix_block(fix, fix_is_cpp(fix)));
  std::string when;
  if (auto t = json_str(r, "triggerScenarios"); !detail::trim(t).empty()) when += "<dt>Trigger</dt><dd>" + inline_html(t) + "</dd>\n";
  if (auto t = json_str(r, "commonSituations"); !detail::trim(t).empty()) when += "<dt>Common situations</dt><dd>" + inline_html(t) + "</dd>\n";
  if (!when.empty()) add("when-it-happens", "When it happens", "<dl class=\"facts\">\n" + when + "</dl>\n");
  std::string prevention = list_items(json_str_list(r, "preventionTips"), "ul");
  if (auto h = json_str(r, "handlingStrategy"); !h.empty()) prevention += "<p class=\"strategy\">Strategy: <code>" + esc(h) + "</code></p>\n";
  add("prevention", "Prevention", prevention);
  std::string related;
  for (const auto* x : related_entries(e, c))
    related += "<li><a href=\"" + root + entry_path(x->id) + "\"><code class=\"id\">" + x->id + "</code> " + esc(x->slug) +
               "</a><span class=\"related-msg\">" + esc(x->error_message) + "</span></li>\n";
  if (!related.empty()) add("related", "Related errors", "<ul class=\"related\">\n" + related + "</ul>\n");
  s += body;
  s += "<p class=\"permalinks\">Permalinks: <a class=\"permalink\" href=\"" + root + entry_path(e.id) + "\">e/" + e.id +
       "/</a> &middot; <a class=\"permalink\" href=\"" + root + slug_path(e.slug) + "\">s/" + esc(e.slug) + "/</a></p>\n";
  s += "</article>\n<aside class=\"side\" aria-label=\"On this page\">\n<p class=\"side-title\">On this page</p>\n<ul class=\"toc\">\n";
  for (const auto& [anchor, title] : toc) s += "<li><a href=\"#" + anchor + "\">" + title + "</a></li>\n";
  s += "</ul>\n<p class=\"side-title\">In a terminal</p>\n" + code_block("kparity explain " + e.id, "shell") + "</aside>\n</div>\n";
  s += "</main>\n" + footer(c, info, root);
  s += "<script src=\"" + root + "assets/site.js\"></script>\n</body>\n</html>\n";
  return s;
}

// A permalink that forwards to an entry page (slugs, deprecated ids).
std::string redirect_page(const std::string& what, const CatalogEntry& e) {
  const std::string target = "../../" + entry_path(e.id);
  std::string s = head(what + " → " + e.id + " · kparity error index", e.summary, "../../",
                       "<meta http-equiv=\"refresh\" content=\"0; url=" + target + "\">\n<link rel=\"canonical\" href=\"" + target + "\">\n");
  s += "<body>\n" + top_bar("../../", false) + "<main id=\"main\" class=\"wrap\">\n<p class=\"redirect\"><code>" + esc(what) +
       "</code> is catalog entry <a href=\"" + target + "\"><code class=\"id\">" + e.id + "</code> " + esc(e.slug) + "</a>.</p>\n</main>\n</body>\n</html>\n";
  return s;
}

std::string options(const std::set<std::string>& values, const char* all) {
  std::string s = "<option value=\"\">" + std::string(all) + "</option>";
  for (const auto& v : values) s += "<option value=\"" + esc(v) + "\">" + esc(v) + "</option>";
  return s;
}

std::string index_page(const Catalog& c, const SiteInfo& info) {
  std::set<std::string> ops, tags, origins, severities, statuses;
  for (const auto& e : c.entries()) {
    ops.insert(e.op);
    tags.insert(e.tags.begin(), e.tags.end());
    origins.insert(e.origin);
    severities.insert(std::string(severity_name(e.severity)));
    statuses.insert(e.status);
  }
  std::string s = head("kparity error index", "Every check kparity knows, with the upstream message, what it means and how to fix it.", "");
  s += "<body class=\"index-page\">\n" + top_bar("", false);
  s += "<main id=\"main\" class=\"wrap\">\n<h1>Error index</h1>\n"
       "<p class=\"lead\">Every input check of the KDA and DeepSeek-V4 sparse attention ops that kparity mirrors: the upstream "
       "message byte for byte, what it means, and how to fix it. Paste an error message, numbers and all, or a few words.</p>\n";
  s += "<form id=\"search\" class=\"search\" role=\"search\" action=\"index.html\" method=\"get\">\n"
       "<label for=\"q\">Search the catalog</label>\n<div class=\"search-row\">"
       "<textarea id=\"q\" name=\"q\" rows=\"2\" spellcheck=\"false\" autocomplete=\"off\" "
       "placeholder=\"ValueError: `g_cache` must have dtype torch.float32.\"></textarea>"
       "<button type=\"submit\">Search</button></div>\n</form>\n";
  s += "<noscript><p class=\"hint\">Search and filters need JavaScript; every entry is listed below.</p></noscript>\n";
  s += "<section id=\"results\" aria-labelledby=\"h-results\" hidden>\n<h2 id=\"h-results\">Best matches</h2>\n"
       "<p id=\"results-status\" class=\"hint\" role=\"status\" aria-live=\"polite\"></p>\n<ol id=\"result-list\" class=\"results\"></ol>\n</section>\n";
  s += "<section id=\"catalog\" aria-labelledby=\"h-catalog\">\n<h2 id=\"h-catalog\">All entries</h2>\n<form id=\"filters\" class=\"filters\">\n"
       "<label>Op <select name=\"op\">" + options(ops, "any op") + "</select></label>\n"
       "<label>Tag <select name=\"tag\">" + options(tags, "any tag") + "</select></label>\n"
       "<label>Origin <select name=\"origin\">" + options(origins, "any origin") + "</select></label>\n"
       "<label>Severity <select name=\"severity\">" + options(severities, "any severity") + "</select></label>\n"
       "<label>Status <select name=\"status\">" + options(statuses, "any status") + "</select></label>\n"
       "<button type=\"reset\">Clear</button>\n<span id=\"count\" class=\"hint\" role=\"status\" aria-live=\"polite\">" +
       std::to_string(c.entries().size()) + " entries</span>\n</form>\n";
  s += "<div class=\"table-wrap\"><table id=\"entries\" class=\"entries\">\n<thead><tr><th scope=\"col\">Entry</th>"
       "<th scope=\"col\">Class</th><th scope=\"col\">Summary</th></tr></thead>\n";
  std::string current_op;
  for (const auto& e : c.entries()) {
    if (e.op != current_op) {  // entries come sorted by op, then check order
      if (!current_op.empty()) s += "</tbody>\n";
      current_op = e.op;
      std::size_t n = 0;
      for (const auto& x : c.entries()) n += x.op == e.op;
      s += "<tbody data-op=\"" + esc(e.op) + "\"><tr class=\"group\"><th colspan=\"3\" scope=\"rowgroup\"><code>" + esc(e.op) +
           "</code> <span class=\"hint\">" + std::to_string(n) + " checks in check order</span></th></tr>\n";
    }
    std::string tag_list;
    for (const auto& t : e.tags) tag_list += (tag_list.empty() ? "" : " ") + t;
    s += "<tr class=\"row\" data-id=\"" + e.id + "\" data-op=\"" + esc(e.op) + "\" data-tags=\"" + esc(tag_list) + "\" data-origin=\"" +
         esc(e.origin) + "\" data-severity=\"" + std::string(severity_name(e.severity)) + "\" data-status=\"" + esc(e.status) + "\">"
         "<td><a class=\"slug\" href=\"" + entry_path(e.id) + "\">" + esc(e.slug) + "</a><br><code class=\"id\">" + e.id + "</code></td><td>" +
         badge("class", error_class_name(e.error_class)) + "</td><td>" + inline_html(e.summary.empty() ? e.error_message : e.summary);
    if (e.status != "active") s += " " + badge("status", e.status);
    if (e.origin != "upstream") s += " " + badge("origin", e.origin, "kparity");
    if (e.severity != Severity::error) s += " " + badge("severity", severity_name(e.severity));
    s += "</td></tr>\n";
  }
  if (!current_op.empty()) s += "</tbody>\n";
  s += "</table></div>\n</section>\n</main>\n" + footer(c, info, "");
  s += "<script src=\"assets/search.js\"></script>\n<script src=\"assets/search-index.js\"></script>\n"
       "<script src=\"assets/site.js\"></script>\n</body>\n</html>\n";
  return s;
}

}  // namespace

std::map<std::string, std::string> render_site(const Catalog& c, const SiteOptions& o) {
  const SiteInfo info = site_info(c, o);
  std::map<std::string, std::string> files;
  files["index.html"] = index_page(c, info);
  std::set<std::string> ids;
  for (const auto& e : c.entries()) ids.insert(e.id);
  json records = json::array();
  for (const auto& e : c.entries()) {
    files[entry_path(e.id)] = entry_page(e, c, info);
    files[slug_path(e.slug)] = redirect_page(e.slug, e);
    // An id an entry replaced keeps its permalink, unless a live entry still carries it.
    for (const auto& old : json_str_list(e.record, "deprecatedIds"))
      if (!ids.count(old) && !files.count(entry_path(old))) files[entry_path(old)] = redirect_page(old, e);
    json rec = e.record;
    rec["permalink"] = "e/" + e.id + "/";
    records.push_back(std::move(rec));
  }
  json commits = json::array();
  for (const auto& [repo, sha, n] : info.commits) commits.push_back({{"repo", repo}, {"commit", sha}, {"entries", n}});
  const json catalog = {{"format", "kparity-catalog"}, {"kparityVersion", KPARITY_VERSION_STRING}, {"digest", info.digest},
                        {"source", info.source}, {"upstreamCommits", commits}, {"entries", records}};
  files["catalog.json"] = catalog.dump(1) + "\n";
  const json index = search_index_json(c);
  files["search-index.json"] = index.dump() + "\n";
  // file:// pages cannot fetch JSON, so the page loads the index as a script.
  files["assets/search-index.js"] = "window.KPARITY_SEARCH_INDEX = " + index.dump() + ";\n";
  for (const auto& [name, text] : detail::site_assets()) files["assets/" + std::string(name)] = std::string(text);
  files[kSiteMarker] = json({{"generator", "kparity explain --site"}, {"kparityVersion", KPARITY_VERSION_STRING},
                             {"digest", info.digest}, {"entries", c.entries().size()}}).dump(1) + "\n";
  return files;
}

}  // namespace kparity
