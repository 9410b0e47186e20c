#include "kparity/diagnostics/catalog.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "util.hpp"

namespace kparity {
namespace {

using nlohmann::json;

[[noreturn]] void bad_field(const std::string& source, std::string_view field, const std::string& why) {
  throw CatalogError(source + ": field `" + std::string(field) + "`: " + why);
}

std::string required_string(const json& rec, const std::string& source, const char* key) {
  auto it = rec.find(key);
  if (it == rec.end()) bad_field(source, key, "missing (required)");
  if (!it->is_string()) bad_field(source, key, "must be a string, got " + std::string(it->type_name()));
  return it->get<std::string>();
}

std::string optional_string(const json& rec, const std::string& source, const char* key, std::string fallback = {}) {
  auto it = rec.find(key);
  if (it == rec.end() || it->is_null()) return fallback;
  if (!it->is_string()) bad_field(source, key, "must be a string, got " + std::string(it->type_name()));
  return it->get<std::string>();
}

bool is_hex_id(std::string_view s) {
  return s.size() == 16 && std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_slug(std::string_view s) {
  static const std::regex re("[a-z][a-z0-9-]*");
  return std::regex_match(s.begin(), s.end(), re);
}

// Compiled patterns, shared by every catalog: by_message compiles each pattern once per process.
const std::regex& compiled(const std::string& pattern) {
  static std::mutex m;
  static std::map<std::string, std::regex> cache;
  std::lock_guard lock(m);
  auto it = cache.find(pattern);
  if (it == cache.end()) it = cache.emplace(pattern, std::regex(pattern, std::regex::ECMAScript)).first;
  return it->second;
}

CatalogEntry parse_entry(const json& rec, const std::string& source) {
  if (!rec.is_object()) throw CatalogError(source + ": a catalog record must be a JSON object");
  CatalogEntry e;
  e.record = rec;
  e.source = source;
  e.id = required_string(rec, source, "id");
  if (!is_hex_id(e.id)) bad_field(source, "id", "'" + e.id + "' is not 16 lowercase hex digits");
  e.slug = required_string(rec, source, "slug");
  if (!is_slug(e.slug)) bad_field(source, "slug", "'" + e.slug + "' must be lowercase words joined by '-'");
  e.op = required_string(rec, source, "op");
  e.argument = optional_string(rec, source, "argument");
  e.status = optional_string(rec, source, "status", "active");
  if (e.status != "active" && e.status != "no-longer-emitted" && e.status != "retired")
    bad_field(source, "status", "'" + e.status + "' is not active, no-longer-emitted or retired");
  e.origin = required_string(rec, source, "origin");
  if (e.origin != "upstream" && e.origin != "kparity")
    bad_field(source, "origin", "'" + e.origin + "' is not upstream or kparity");
  e.summary = optional_string(rec, source, "summary");
  e.error_message = required_string(rec, source, "errorMessage");
  e.message_pattern = required_string(rec, source, "messagePattern");
  try {
    compiled(e.message_pattern);
  } catch (const std::regex_error& ex) {
    bad_field(source, "messagePattern", std::string("not an ECMAScript regex: ") + ex.what());
  }
  e.message_template = required_string(rec, source, "messageTemplate");
  const std::string cls = required_string(rec, source, "errorClass");
  if (!parse_error_class(cls, e.error_class) || e.error_class == ErrorClass::InternalError)
    bad_field(source, "errorClass", "'" + cls + "' is not a Python error class kparity raises");
  const std::string sev = required_string(rec, source, "severity");
  if (sev == "error") e.severity = Severity::error;
  else if (sev == "warning") e.severity = Severity::warning;
  else if (sev == "note") e.severity = Severity::note;
  else bad_field(source, "severity", "'" + sev + "' is not error, warning or note");
  auto order = rec.find("checkOrder");
  if (order == rec.end()) bad_field(source, "checkOrder", "missing (required)");
  if (!order->is_number_integer()) bad_field(source, "checkOrder", "must be an integer");
  e.check_order = order->get<int>();
  if (auto tags = rec.find("tags"); tags != rec.end()) {
    if (!tags->is_array()) bad_field(source, "tags", "must be an array of strings");
    for (const auto& t : *tags) {
      if (!t.is_string()) bad_field(source, "tags", "must be an array of strings");
      e.tags.push_back(t.get<std::string>());
    }
  }
  return e;
}

json parse_json(std::string_view text, const std::string& source) {
  try {
    return json::parse(text.begin(), text.end());
  } catch (const json::parse_error& ex) {
    throw CatalogError(source + ": malformed JSON: " + ex.what());
  }
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw CatalogError(p.string() + ": cannot be read");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The forms a user pastes: the bare message, "ValueError: <message>", our own rendered first
// line "error[<id>]: <message>", a quoted message, or a whole traceback (its last line counts).
std::vector<std::string> message_candidates(std::string_view text) {
  std::vector<std::string> base;
  const std::string_view t = detail::trim(text);
  base.emplace_back(t);
  if (auto nl = t.find_last_of('\n'); nl != std::string_view::npos) base.emplace_back(detail::trim(t.substr(nl + 1)));
  static const std::regex prefix(detail::kMessagePrefixRegex);
  auto unquote = [](const std::string& s) {
    const bool quoted = s.size() >= 2 && (s.front() == '"' || s.front() == '\'' || s.front() == '`') && s.back() == s.front();
    return quoted ? std::string(detail::trim(std::string_view(s).substr(1, s.size() - 2))) : s;
  };
  std::vector<std::string> out;
  for (auto s : base) {
    for (int pass = 0; pass < 3; ++pass) {
      out.push_back(s);
      std::string next = unquote(s);
      std::smatch m;
      if (std::regex_search(next, m, prefix)) next = std::string(detail::trim(std::string_view(next).substr(m.length(0))));
      if (next == s) break;
      s = std::move(next);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

bool CatalogEntry::documented() const { return !detail::trim(detail::json_str(record, "documentation")).empty(); }

const Catalog& Catalog::embedded() {
  static const Catalog c = [] {
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& [name, text] : detail::catalog_texts()) files.emplace_back("<embedded>/" + std::string(name), std::string(text));
    return from_texts(files);
  }();
  return c;
}

Catalog Catalog::from_texts(const std::vector<std::pair<std::string, std::string>>& files) {
  Catalog c;
  std::map<std::string, std::string> ids, slugs;  // -> source, for the duplicate message
  auto add = [&](const json& rec, const std::string& source) {
    CatalogEntry e = parse_entry(rec, source);
    if (auto [it, fresh] = ids.emplace(e.id, source); !fresh) bad_field(source, "id", "duplicate id " + e.id + " (also in " + it->second + ")");
    if (auto [it, fresh] = slugs.emplace(e.slug, source); !fresh)
      bad_field(source, "slug", "duplicate slug " + e.slug + " (also in " + it->second + ")");
    c.entries_.push_back(std::move(e));
  };
  for (const auto& [source, text] : files) {
    json j = parse_json(text, source);
    if (j.is_array()) {
      for (std::size_t i = 0; i < j.size(); ++i) add(j[i], source + "[" + std::to_string(i) + "]");
    } else {
      add(j, source);
    }
  }
  std::sort(c.entries_.begin(), c.entries_.end(), [](const CatalogEntry& a, const CatalogEntry& b) {
    return std::tie(a.op, a.check_order, a.id) < std::tie(b.op, b.check_order, b.id);
  });
  return c;
}

Catalog Catalog::load(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw CatalogError(path.string() + ": no such file or directory");
  std::vector<fs::path> paths;
  if (fs::is_directory(path, ec)) {
    // A source checkout's catalog/ works as is: fixtures and the schema are not records.
    for (const auto& de : fs::recursive_directory_iterator(path)) {
      if (!de.is_regular_file() || de.path().extension() != ".json") continue;
      const auto rel = fs::relative(de.path(), path).generic_string();
      if (rel.rfind("fixtures/", 0) == 0 || rel == "schema.json") continue;
      paths.push_back(de.path());
    }
    std::sort(paths.begin(), paths.end());
  } else {
    paths.push_back(path);
  }
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& p : paths) files.emplace_back(p.string(), read_file(p));
  return from_texts(files);
}

const CatalogEntry* Catalog::by_id(std::string_view id) const {
  for (const auto& e : entries_)
    if (e.id == id) return &e;
  return nullptr;
}

const CatalogEntry* Catalog::by_slug(std::string_view slug) const {
  for (const auto& e : entries_)
    if (e.slug == slug) return &e;
  return nullptr;
}

std::vector<const CatalogEntry*> Catalog::by_message(std::string_view text) const {
  const auto candidates = message_candidates(text);
  std::vector<const CatalogEntry*> out;
  for (const auto& e : entries_) {
    const std::regex& re = compiled(e.message_pattern);
    for (const auto& c : candidates) {
      if (c == e.error_message || std::regex_match(c, re)) {
        out.push_back(&e);
        break;
      }
    }
  }
  // A longer pattern pins more of the text down, so it is the more specific explanation.
  std::stable_sort(out.begin(), out.end(), [](const CatalogEntry* a, const CatalogEntry* b) {
    return a->message_pattern.size() > b->message_pattern.size();
  });
  return out;
}

const CatalogEntry* Catalog::lookup(std::string_view query) const {
  const std::string q = lower(detail::trim(query));
  if (q.empty()) return nullptr;
  if (const auto* e = by_id(q)) return e;
  for (const auto& e : entries_)
    for (const auto& old : detail::json_str_list(e.record, "deprecatedIds"))
      if (old == q) return &e;
  if (const auto* e = by_slug(q)) return e;
  auto hits = by_message(query);
  return hits.empty() ? nullptr : hits.front();
}

std::vector<std::string> Catalog::suggest(std::string_view query, std::size_t n) const {
  const std::string q = lower(detail::trim(query));
  std::vector<std::pair<std::size_t, std::string>> scored;
  auto consider = [&](const std::string& cand) {
    if (q.empty()) return;
    // A fragment of an id or slug ("066bd", "g-cache-dtype") is as good as an exact hit.
    if (q.size() >= 3 && cand.find(q) != std::string::npos) {
      scored.emplace_back(0, cand);
      return;
    }
    const std::size_t limit = std::max<std::size_t>(1, (q.size() + cand.size() + 3) / 6);
    if (std::max(q.size(), cand.size()) - std::min(q.size(), cand.size()) > limit) return;
    const std::size_t d = detail::edit_distance(q, cand);
    if (d <= limit) scored.emplace_back(d, cand);
  };
  for (const auto& e : entries_) {
    consider(e.id);
    consider(e.slug);
  }
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (const auto& [d, cand] : scored) {
    if (out.size() >= n) break;
    if (std::find(out.begin(), out.end(), cand) == out.end()) out.push_back(cand);
  }
  return out;
}

std::vector<const CatalogEntry*> Catalog::list(std::string_view op, std::string_view tag) const {
  std::vector<const CatalogEntry*> out;
  for (const auto& e : entries_) {
    if (!op.empty() && e.op.rfind(op, 0) != 0) continue;
    if (!tag.empty() && std::find(e.tags.begin(), e.tags.end(), tag) == e.tags.end()) continue;
    out.push_back(&e);
  }
  return out;
}

namespace {
std::mutex g_active_mutex;
std::shared_ptr<const Catalog> g_active;
// Every catalog ever installed stays alive: active_catalog() hands out plain references, and a
// diagnostic built on another thread may still be reading the previous one.
std::vector<std::shared_ptr<const Catalog>> g_installed;
}  // namespace

const Catalog& active_catalog() {
  {
    std::lock_guard lock(g_active_mutex);
    if (g_active) return *g_active;
  }
  return Catalog::embedded();
}

void use_catalog(std::shared_ptr<const Catalog> c) {
  std::lock_guard lock(g_active_mutex);
  if (c) g_installed.push_back(c);
  g_active = std::move(c);
}

const nlohmann::json& embedded_fixtures() {
  static const json fixtures = [] {
    json all = json::object();
    for (const auto& [name, text] : detail::fixture_texts()) {
      const std::string source = "<embedded>/" + std::string(name);
      json j = parse_json(text, source);
      if (!j.is_object()) throw CatalogError(source + ": fixtures must be one JSON object");
      for (auto& [key, value] : j.items()) {
        if (all.contains(key)) bad_field(source, key, "fixture defined twice");
        all[key] = value;
      }
    }
    return all;
  }();
  return fixtures;
}

}  // namespace kparity
