// Ranked catalog search; the formula is written out in search.hpp and transcribed, constant for
// constant, by diagnostics/site/search.js (which reads the constants from search_index_json).
#include "kparity/diagnostics/search.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <utility>

#include "util.hpp"

namespace kparity {
namespace {

using nlohmann::json;

struct Params {
  double prefix = 0.8;
  std::size_t prefix_min_length = 4;
  double edit1 = 0.6;
  std::size_t edit1_min_length = 4;
  double edit2 = 0.4;
  std::size_t edit2_min_length = 7;
  double query_share = 0.8;
  double message_share = 0.2;
  double inactive_factor = 0.9;
  double min_score = 0.2;
};
constexpr Params kParams{};

// Field weights of the formula, in the order the fields are read (first appearance decides a
// word's position in the entry's list, the largest weight its weight).
constexpr double kMessageWeight = 1.0, kArgumentWeight = 0.9, kSlugWeight = 0.8, kSummaryWeight = 0.7,
                 kTagWeight = 0.6, kOpWeight = 0.5, kClassWeight = 0.4, kIdWeight = 1.0;

// Spellings people paste for the words the catalog uses.
const std::vector<std::pair<std::string, std::string>>& synonyms() {
  static const std::vector<std::pair<std::string, std::string>> table = {
      {"fp32", "float32"}, {"fp16", "float16"}, {"bf16", "bfloat16"},    {"fp64", "float64"},
      {"gpu", "cuda"},     {"dims", "dim"},     {"dimension", "dim"}, {"dimensions", "dim"},
  };
  return table;
}

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowered(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = ascii_lower(c);
  return out;
}

std::vector<std::string> tokenize(std::string_view text) {
  std::vector<std::string> out;
  auto emit = [&](std::string w) {
    if (std::none_of(w.begin(), w.end(), [](char c) { return c >= 'a' && c <= 'z'; })) return;
    for (const auto& [from, to] : synonyms()) {
      if (w == from) {
        w = to;
        break;
      }
    }
    if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(std::move(w));
  };
  const std::string s = lowered(text);
  std::size_t i = 0;
  while (i < s.size()) {
    if (!is_lower_alnum(s[i]) && s[i] != '_') {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < s.size() && (is_lower_alnum(s[j]) || s[j] == '_')) ++j;
    std::string_view run(s.data() + i, j - i);
    i = j;
    while (!run.empty() && run.front() == '_') run.remove_prefix(1);
    while (!run.empty() && run.back() == '_') run.remove_suffix(1);
    if (run.empty()) continue;
    std::vector<std::string> parts;
    for (std::size_t b = 0; b < run.size();) {
      std::size_t e = run.find('_', b);
      if (e == std::string_view::npos) e = run.size();
      if (e > b) parts.emplace_back(run.substr(b, e - b));
      b = e + 1;
    }
    if (parts.size() > 1) emit(std::string(run));
    for (auto& p : parts) emit(std::move(p));
  }
  return out;
}

// A message template without its `{name}` placeholders; `{{`/`}}` are literal braces.
std::string without_placeholders(std::string_view t) {
  std::string out;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if ((t[i] == '{' || t[i] == '}') && i + 1 < t.size() && t[i + 1] == t[i]) {
      out += t[i++];
      continue;
    }
    if (t[i] == '{') {
      std::size_t j = i + 1;
      while (j < t.size() && (std::isalnum(static_cast<unsigned char>(t[j])) || t[j] == '_')) ++j;
      if (j > i + 1 && j < t.size() && t[j] == '}' && !std::isdigit(static_cast<unsigned char>(t[i + 1]))) {
        out += ' ';
        i = j;
        continue;
      }
    }
    out += t[i];
  }
  return out;
}

// The words a regex spells out literally: escapes (\d, \., \[) and bracket classes ([0-9a-f])
// become spaces, so "(kv_indptr_prefix|kv_indptr_extend) decreases" keeps both names.
std::string pattern_literals(std::string_view p) {
  std::string out;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (p[i] == '\\') {
      ++i;
      out += ' ';
    } else if (p[i] == '[') {
      for (++i; i < p.size() && p[i] != ']'; ++i)
        if (p[i] == '\\') ++i;
      out += ' ';
    } else {
      out += p[i];
    }
  }
  return out;
}

// Optimal string alignment distance: Levenshtein plus adjacent transpositions at cost 1.
std::size_t osa_distance(std::string_view a, std::string_view b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      std::size_t v = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) v = std::min(v, d[i - 2][j - 2] + 1);
      d[i][j] = v;
    }
  }
  return d[n][m];
}

double similarity(std::string_view q, std::string_view t) {
  if (q == t) return 1.0;
  const std::size_t shorter = std::min(q.size(), t.size());
  const std::size_t diff = q.size() > t.size() ? q.size() - t.size() : t.size() - q.size();
  if (shorter >= kParams.prefix_min_length && (t.starts_with(q) || q.starts_with(t))) return kParams.prefix;
  if (shorter >= kParams.edit1_min_length && diff <= 1 && osa_distance(q, t) == 1) return kParams.edit1;
  if (shorter >= kParams.edit2_min_length && diff <= 2 && osa_distance(q, t) == 2) return kParams.edit2;
  return 0.0;
}

double round6(double x) { return std::round(x * 1e6) / 1e6; }

struct IndexedEntry {
  const CatalogEntry* entry;
  std::vector<std::string> keys;                      // id, slug, deprecated ids
  std::vector<std::pair<std::size_t, double>> terms;  // (vocabulary index, field weight)
  std::vector<std::size_t> msg;                       // vocabulary indices of the template's words
};

struct Index {
  std::vector<std::string> vocab;
  std::vector<double> idf;
  std::vector<IndexedEntry> entries;
  double unknown_weight = 0;
};

Index build_index(const Catalog& c) {
  Index ix;
  std::unordered_map<std::string, std::size_t> where;
  std::vector<std::size_t> df;
  auto term_id = [&](const std::string& t) {
    auto [it, fresh] = where.emplace(t, ix.vocab.size());
    if (fresh) {
      ix.vocab.push_back(t);
      df.push_back(0);
    }
    return it->second;
  };
  for (const auto& e : c.entries()) {
    IndexedEntry ie{&e, {e.id, e.slug}, {}, {}};
    for (const auto& old : detail::json_str_list(e.record, "deprecatedIds")) ie.keys.push_back(lowered(old));
    auto add = [&](std::string_view text, double w) {
      for (const auto& t : tokenize(text)) {
        const std::size_t k = term_id(t);
        auto it = std::find_if(ie.terms.begin(), ie.terms.end(), [&](const auto& p) { return p.first == k; });
        if (it == ie.terms.end()) ie.terms.emplace_back(k, w);
        else it->second = std::max(it->second, w);
      }
    };
    const std::string tmpl = without_placeholders(e.message_template);
    add(tmpl, kMessageWeight);
    add(e.error_message, kMessageWeight);
    add(pattern_literals(e.message_pattern), kMessageWeight);
    add(e.argument, kArgumentWeight);
    add(e.slug, kSlugWeight);
    add(e.summary, kSummaryWeight);
    for (const auto& tag : e.tags) add(tag, kTagWeight);
    add(e.op, kOpWeight);
    add(error_class_name(e.error_class), kClassWeight);
    for (const auto& k : ie.keys) add(k, kIdWeight);
    for (const auto& t : tokenize(tmpl)) ie.msg.push_back(where.at(t));
    for (const auto& [k, w] : ie.terms) ++df[k];
    ix.entries.push_back(std::move(ie));
  }
  const double n = static_cast<double>(ix.entries.size());
  for (std::size_t k = 0; k < ix.vocab.size(); ++k) ix.idf.push_back(std::log(1.0 + n / static_cast<double>(df[k])));
  ix.unknown_weight = std::log(1.0 + n);
  return ix;
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : ", ") + w;
  return s;
}

}  // namespace

std::vector<std::string> search_tokens(std::string_view text) { return tokenize(text); }

std::vector<SearchHit> search(const Catalog& c, std::string_view text, std::size_t limit) {
  // The embedded catalog never changes, so its index is built once; other catalogs may be
  // short-lived, so theirs is built per call.
  static const Index embedded_index = build_index(Catalog::embedded());
  std::optional<Index> own;
  const Index& ix = &c == &Catalog::embedded() ? embedded_index : own.emplace(build_index(c));
  const std::vector<std::string> qs = tokenize(text);
  const std::string key = lowered(detail::trim(text));
  const auto by_message = c.by_message(text);

  std::vector<std::vector<double>> s(qs.size(), std::vector<double>(ix.vocab.size()));
  std::vector<double> g(qs.size());
  double gsum = 0;
  for (std::size_t k = 0; k < qs.size(); ++k) {
    double best = 0;
    for (std::size_t t = 0; t < ix.vocab.size(); ++t) {
      s[k][t] = similarity(qs[k], ix.vocab[t]);
      if (s[k][t] * ix.idf[t] > best) best = s[k][t] * ix.idf[t];
    }
    g[k] = best > 0 ? best : ix.unknown_weight;
    gsum += g[k];
  }

  std::vector<SearchHit> hits;
  for (const auto& ie : ix.entries) {
    double covered = 0;
    std::vector<std::string> words;
    for (std::size_t k = 0; k < qs.size(); ++k) {
      double m = 0;
      std::size_t via = 0;
      for (const auto& [t, w] : ie.terms) {
        const double v = s[k][t] * w;
        if (v > m) {
          m = v;
          via = t;
        }
      }
      if (m > 0) words.push_back(ix.vocab[via] == qs[k] ? qs[k] : qs[k] + "~" + ix.vocab[via]);
      covered += g[k] * m;
    }
    const double q_share = gsum > 0 ? covered / gsum : 0;
    double num = 0, den = 0;
    for (const std::size_t t : ie.msg) {
      double best = 0;
      for (std::size_t k = 0; k < qs.size(); ++k)
        if (s[k][t] > best) best = s[k][t];
      num += ix.idf[t] * best;
      den += ix.idf[t];
    }
    const double d_share = den > 0 ? num / den : 0;
    const bool by_key = std::find(ie.keys.begin(), ie.keys.end(), key) != ie.keys.end();
    const bool by_msg = std::find(by_message.begin(), by_message.end(), ie.entry) != by_message.end();
    const double raw = ((by_key || by_msg) ? 1.0 : 0.0) + kParams.query_share * q_share + kParams.message_share * d_share;
    const double score = round6(raw * (ie.entry->status == "active" ? 1.0 : kParams.inactive_factor));
    if (score < kParams.min_score) continue;
    std::string reason = by_key ? (key == ie.entry->id ? "the id" : key == ie.entry->slug ? "the slug" : "a deprecated id")
                         : by_msg ? "the message matches its pattern"
                                  : "";
    if (!words.empty()) reason += (reason.empty() ? "words: " : "; words: ") + join(words);
    hits.push_back({ie.entry, score, std::move(reason)});
  }
  std::stable_sort(hits.begin(), hits.end(), [](const SearchHit& a, const SearchHit& b) { return a.score > b.score; });
  if (hits.size() > limit) hits.resize(limit);
  return hits;
}

json search_index_json(const Catalog& c) {
  const Index ix = build_index(c);
  json syn = json::object();
  for (const auto& [from, to] : synonyms()) syn[from] = to;
  json entries = json::array();
  for (const auto& ie : ix.entries) {
    const CatalogEntry& e = *ie.entry;
    json terms = json::array();
    for (const auto& [t, w] : ie.terms) terms.push_back(json::array({t, w}));
    entries.push_back({{"id", e.id}, {"slug", e.slug}, {"op", e.op}, {"status", e.status},
                       {"errorClass", error_class_name(e.error_class)}, {"summary", e.summary},
                       {"message", e.error_message}, {"pattern", e.message_pattern}, {"keys", ie.keys},
                       {"terms", terms}, {"msg", ie.msg}});
  }
  const json params = {{"prefix", kParams.prefix},
                       {"prefixMinLength", kParams.prefix_min_length},
                       {"edit1", kParams.edit1},
                       {"edit1MinLength", kParams.edit1_min_length},
                       {"edit2", kParams.edit2},
                       {"edit2MinLength", kParams.edit2_min_length},
                       {"queryShare", kParams.query_share},
                       {"messageShare", kParams.message_share},
                       {"inactiveFactor", kParams.inactive_factor},
                       {"minScore", kParams.min_score},
                       {"unknownWeight", ix.unknown_weight}};
  return {{"format", "kparity-search-index"}, {"version", 1},       {"params", params},
          {"synonyms", syn},                  {"classPrefix", detail::kMessagePrefixRegex},
          {"terms", ix.vocab},                {"idf", ix.idf},      {"entries", entries}};
}

}  // namespace kparity
