#pragma once
// Ranked search over the catalog: the entries closest to a pasted message, a paraphrase, a slug or
// an id, best first. `kparity explain` prints these candidates when nothing matches exactly, the
// Python package binds search(), and the static site (kparity explain --site) runs the same formula
// in JavaScript (diagnostics/site/search.js) over search_index_json(): the index carries every
// constant below, so the browser script is a transcription of the arithmetic only, and a test
// (tests/diagnostics/test_search.cpp) requires both to produce the same ranking and scores.
//
// The formula
// -----------
// tokens(s): ASCII-lowercase s; take the maximal runs of [a-z0-9_], strip underscores at their ends;
//   a run with inner underscores yields itself and then its parts ("g_cache" -> g_cache, g, cache);
//   a word listed in `synonyms` becomes its canonical word (fp32 -> float32); words without a letter
//   (bare numbers) are dropped; only the first occurrence of a word counts.
// Entry e: weighted words w_e(t), the largest field weight among the fields t occurs in: the message
//   (its template without {placeholders}, the example errorMessage and the literal words of
//   messagePattern) 1.0, argument 0.9, slug 0.8, summary 0.7, tags 0.6, op 0.5, errorClass 0.4,
//   id and deprecated ids 1.0. msg(e): the words of the template without placeholders.
// idf(t) = ln(1 + N / df(t)) over the N entries, df(t) the number of entries with word t.
// sim(q, t) = 1 if q == t; else 0.8 if one is a prefix of the other and the shorter has >= 4
//   letters; else 0.6 if their optimal-string-alignment distance (adjacent swaps cost 1) is 1 and
//   the shorter has >= 4 letters; else 0.4 if that distance is 2 and the shorter has >= 7; else 0.
// For the query words q_1..q_k (tokens of the text, in order):
//   g(q) = max_t sim(q, t) idf(t) over the vocabulary, or ln(1 + N) when that is 0 (an unknown word
//   lowers every entry's coverage alike);
//   Q(e) = sum_i g(q_i) max_t [sim(q_i, t) w_e(t)] / sum_i g(q_i)        (how much of the query e explains)
//   D(e) = sum_{t in msg(e)} idf(t) max_i sim(q_i, t) / sum_{t in msg(e)} idf(t)   (how much of e's message the query has)
//   exact(e) = 1 when the lowercased trimmed text is e's id, slug or a deprecated id, or when a form of
//   the text (Catalog::by_message: the text or its last line, unquoted, without a class prefix)
//   equals errorMessage or fully matches messagePattern; else 0.
//   score(e) = round6((exact(e) + 0.8 Q(e) + 0.2 D(e)) * (status active ? 1 : 0.9)),
//   round6(x) = round(x * 1e6) / 1e6. Entries with score >= 0.2 are hits, ordered by score
//   (higher first), then by catalog order. Sums run in the order written above (query words in
//   order, msg words in index order), so C++ and JavaScript doubles agree bit for bit.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"

namespace kparity {

struct SearchHit {
  const CatalogEntry* entry;  // points into the catalog passed to search()
  double score;               // the formula above: an exact match adds 1 to the words' share (at most 1)
  std::string reason;         // "message matches the pattern; words: g_cache, float32 (cahce~cache)"
};

// Up to `limit` hits for `text`, best first; empty when nothing scores 0.2 or more.
std::vector<SearchHit> search(const Catalog& c, std::string_view text, std::size_t limit = 5);

// Everything the browser scorer needs: {"format": "kparity-search-index", "version": 1, "params",
// "synonyms", "classPrefix", "terms", "idf", "entries": [{id, slug, op, status, errorClass,
// summary, message, pattern, keys, terms: [[term, weight]...], msg: [term...]}]} in catalog order.
nlohmann::json search_index_json(const Catalog& c);

// The tokens() of the formula (exposed for tests and bindings).
std::vector<std::string> search_tokens(std::string_view text);

}  // namespace kparity
