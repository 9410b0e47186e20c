// Ranked catalog search (issue 14): the query table, the formula's edges, the exported index, and
// parity of the site's JavaScript scorer with the C++ one (same ids, order and scores, bit for bit).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/search.hpp"

namespace kparity::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Query {
  std::string text, expect, kind;
};

std::vector<Query> query_table() {
  const json j = json::parse(slurp(fs::path(KPARITY_SOURCE_DIR) / "tests/diagnostics/search_queries.json"));
  std::vector<Query> out;
  for (const auto& q : j.at("queries")) out.push_back({q.at("q"), q.at("expect"), q.at("kind")});
  return out;
}

std::string ranking(const std::vector<SearchHit>& hits) {
  std::string s;
  for (const auto& h : hits) s += "  " + h.entry->id + " " + h.entry->slug + " " + std::to_string(h.score) + " (" + h.reason + ")\n";
  return s.empty() ? "  (no hits)\n" : s;
}

// The embedded catalog plus a retired twin of the g_cache dtype entry: same message, another id.
Catalog with_retired_twin() {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& e : Catalog::embedded().entries()) files.emplace_back(e.source, e.record.dump());
  json twin = Catalog::embedded().by_id("066bd06e9ab538bd")->record;
  twin["id"] = "fedcba9876543210";
  twin["slug"] = "kda-g-cache-dtype-old";
  twin["status"] = "retired";
  twin["replacedBy"] = "066bd06e9ab538bd";
  twin["deprecatedIds"] = {"0123456789abcdef"};
  files.emplace_back("twin.json", twin.dump());
  return Catalog::from_texts(files);
}

TEST(SearchTokens, FollowTheDocumentedRules) {
  using V = std::vector<std::string>;
  EXPECT_EQ(search_tokens("ValueError: `g_cache` must have dtype torch.float32 (got 3)."),
            (V{"valueerror", "g_cache", "g", "cache", "must", "have", "dtype", "torch", "float32", "got"}));
  EXPECT_EQ(search_tokens("FP32 bf16 fp32 GPU dims"), (V{"float32", "bfloat16", "cuda", "dim"}));
  EXPECT_EQ(search_tokens("__x__ a__b 3 (3,) 2**31 4D"), (V{"x", "a__b", "a", "b", "4d"}));
  EXPECT_EQ(search_tokens("sparse_attn_v4_paged_prefill"),
            (V{"sparse_attn_v4_paged_prefill", "sparse", "attn", "v4", "paged", "prefill"}));
  EXPECT_TRUE(search_tokens("  12 345 ... \xc3\xa9").empty());
}

TEST(Search, QueryTableRanksTheRightEntryFirst) {
  const auto table = query_table();
  ASSERT_GE(table.size(), 30u);
  const Catalog& c = Catalog::embedded();
  for (const auto& q : table) {
    ASSERT_NE(c.by_id(q.expect), nullptr) << q.expect;
    const auto hits = search(c, q.text);
    ASSERT_FALSE(hits.empty()) << q.kind << ": " << q.text;
    EXPECT_EQ(hits.front().entry->id, q.expect) << q.kind << ": " << q.text << "\n" << ranking(hits);
  }
}

TEST(Search, TheIssueExamples) {
  const Catalog& c = Catalog::embedded();
  const std::pair<const char*, const char*> cases[] = {
      {"sparse_attn_v4_paged_prefill requires CUDA tensors", "5d9da259c68eb6c4"},
      {"RuntimeError: sparse_attn_v4_paged_prefill requires CUDA/HIP tensors", "5d9da259c68eb6c4"},
      {"g_cache must be float32", "066bd06e9ab538bd"},
      {"force_flush on wrong device", "b62325e96d849b25"},
  };
  for (const auto& [text, id] : cases) {
    const auto hits = search(c, text);
    ASSERT_FALSE(hits.empty()) << text;
    EXPECT_EQ(hits.front().entry->id, id) << text << "\n" << ranking(hits);
    EXPECT_LT(hits.front().score, 1.0) << "not an exact match, so below the exact band: " << text;
    EXPECT_NE(hits.front().reason.find("words: "), std::string::npos) << hits.front().reason;
  }
}

TEST(Search, ExactMatchesLeadWithAReason) {
  const Catalog& c = Catalog::embedded();
  auto hits = search(c, "`write_pos` must have shape (3,).");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].entry->id, "89c9b2132ca9bde9");
  EXPECT_GE(hits[0].score, 1.0);
  EXPECT_NE(hits[0].reason.find("the message matches its pattern"), std::string::npos) << hits[0].reason;
  ASSERT_GE(hits.size(), 2u);
  EXPECT_LT(hits[1].score, 1.0) << ranking(hits);

  hits = search(c, "  KDA-G-CACHE-DTYPE ");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].entry->id, "066bd06e9ab538bd");
  EXPECT_EQ(hits[0].reason.rfind("the slug", 0), 0u) << hits[0].reason;
  hits = search(c, "066bd06e9ab538bd");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].reason.rfind("the id", 0), 0u) << hits[0].reason;
  EXPECT_GE(hits[0].score, 1.0);
  // A typo in the last digit still finds the entry, through the id's edit distance, below 1.
  hits = search(c, "066bd06e9ab538be");
  ASSERT_FALSE(hits.empty());
  EXPECT_EQ(hits[0].entry->id, "066bd06e9ab538bd");
  EXPECT_LT(hits[0].score, 1.0);
  EXPECT_NE(hits[0].reason.find("066bd06e9ab538be~066bd06e9ab538bd"), std::string::npos) << hits[0].reason;
}

TEST(Search, NoiseFindsNothing) {
  const Catalog& c = Catalog::embedded();
  for (const char* text : {"", "   ", "xyzzy", "12345 678", "qwertyuiop asdfghjkl"})
    EXPECT_TRUE(search(c, text).empty()) << "'" << text << "'\n" << ranking(search(c, text));
}

TEST(Search, LimitAndOrder) {
  const Catalog& c = Catalog::embedded();
  EXPECT_TRUE(search(c, "g_cache must be float32", 0).empty());
  const auto three = search(c, "must be contiguous", 3);
  EXPECT_EQ(three.size(), 3u);
  const auto many = search(c, "must be contiguous", 1000);
  ASSERT_GT(many.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(three[i].entry, many[i].entry);
  for (std::size_t i = 1; i < many.size(); ++i) {
    EXPECT_GE(many[i - 1].score, many[i].score);
    if (many[i - 1].score == many[i].score) {  // ties keep catalog order
      const auto pos = [&](const CatalogEntry* e) { return e - c.entries().data(); };
      EXPECT_LT(pos(many[i - 1].entry), pos(many[i].entry));
    }
  }
}

TEST(Search, RetiredEntryRanksBelowItsActiveTwin) {
  const Catalog c = with_retired_twin();
  const auto hits = search(c, "`g_cache` must have dtype torch.float32.");
  ASSERT_GE(hits.size(), 2u);
  EXPECT_EQ(hits[0].entry->id, "066bd06e9ab538bd");
  EXPECT_EQ(hits[1].entry->id, "fedcba9876543210");
  EXPECT_NEAR(hits[1].score, hits[0].score * 0.9, 1e-6);
  const auto old = search(c, "0123456789ABCDEF");
  ASSERT_FALSE(old.empty());
  EXPECT_EQ(old[0].entry->id, "fedcba9876543210");
  EXPECT_EQ(old[0].reason.rfind("a deprecated id", 0), 0u) << old[0].reason;
}

TEST(SearchIndex, ExportsEverythingTheScorerNeeds) {
  const Catalog& c = Catalog::embedded();
  const json ix = search_index_json(c);
  EXPECT_EQ(ix.at("format"), "kparity-search-index");
  EXPECT_EQ(ix.at("version"), 1);
  for (const char* p : {"prefix", "prefixMinLength", "edit1", "edit1MinLength", "edit2", "edit2MinLength", "queryShare",
                        "messageShare", "inactiveFactor", "minScore", "unknownWeight"})
    EXPECT_TRUE(ix.at("params").contains(p)) << p;
  const auto& terms = ix.at("terms");
  ASSERT_EQ(ix.at("idf").size(), terms.size());
  ASSERT_EQ(ix.at("entries").size(), c.entries().size());
  for (std::size_t i = 0; i < c.entries().size(); ++i) {
    const auto& e = ix.at("entries")[i];
    EXPECT_EQ(e.at("id"), c.entries()[i].id) << "catalog order";
    EXPECT_EQ(e.at("pattern"), c.entries()[i].message_pattern);
    std::vector<std::size_t> own;
    for (const auto& tw : e.at("terms")) {
      ASSERT_LT(tw.at(0).get<std::size_t>(), terms.size());
      const double w = tw.at(1);
      EXPECT_TRUE(w > 0 && w <= 1) << w;
      own.push_back(tw.at(0));
    }
    for (const auto& t : e.at("msg")) EXPECT_NE(std::find(own.begin(), own.end(), t.get<std::size_t>()), own.end());
  }
  for (const auto& v : ix.at("idf")) EXPECT_GT(v.get<double>(), 0.0);
}

// --- the JavaScript scorer under node -------------------------------------------------------

std::string node_binary() {
  for (const char* name : {"node", "nodejs"}) {
    const std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return {};
}

// Ranks `queries` with search.js over `c`'s exported index: per query, [{id, score, exact}].
json run_js(const std::string& node, const Catalog& c, const std::vector<std::string>& queries, std::size_t limit) {
  const fs::path dir = fs::temp_directory_path() / ("kparity_search_parity_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "index.json") << search_index_json(c).dump();
  std::ofstream(dir / "queries.json") << json(queries).dump();
  const fs::path src(KPARITY_SOURCE_DIR);
  const std::string cmd = node + " '" + (src / "tests/diagnostics/search_parity.js").string() + "' '" +
                          (src / "diagnostics/site/search.js").string() + "' '" + (dir / "index.json").string() + "' '" +
                          (dir / "queries.json").string() + "' " + std::to_string(limit) + " >'" +
                          (dir / "out.json").string() + "'";
  const int rc = std::system(cmd.c_str());
  const std::string out = slurp(dir / "out.json");
  fs::remove_all(dir);
  if (rc != 0) throw std::runtime_error("node failed (" + std::to_string(rc) + "): " + cmd);
  return json::parse(out);
}

void expect_same_ranking(const Catalog& c, const std::vector<std::string>& queries, const json& js, std::size_t limit) {
  ASSERT_EQ(js.size(), queries.size());
  for (std::size_t i = 0; i < queries.size(); ++i) {
    const auto hits = search(c, queries[i], limit);
    const auto& got = js[i];
    std::string js_rank;
    for (const auto& h : got) js_rank += "  " + h.at("id").get<std::string>() + " " + h.at("score").dump() + "\n";
    ASSERT_EQ(got.size(), hits.size()) << queries[i] << "\nC++:\n" << ranking(hits) << "JS:\n" << js_rank;
    for (std::size_t k = 0; k < hits.size(); ++k) {
      EXPECT_EQ(got[k].at("id"), hits[k].entry->id) << queries[i] << " rank " << k << "\nC++:\n" << ranking(hits) << "JS:\n" << js_rank;
      EXPECT_EQ(got[k].at("score").get<double>(), hits[k].score) << queries[i] << " rank " << k;  // bit for bit
      const std::string& why = hits[k].reason;
      const bool exact = why.rfind("the id", 0) == 0 || why.rfind("the slug", 0) == 0 ||
                         why.rfind("a deprecated id", 0) == 0 || why.rfind("the message matches", 0) == 0;
      EXPECT_EQ(got[k].at("exact").get<bool>(), exact) << queries[i] << " rank " << k << ": " << why;
    }
  }
}

std::vector<std::string> parity_queries() {
  std::vector<std::string> qs;
  for (const auto& q : query_table()) qs.push_back(q.text);
  // Edges of the transcription: empty and blank text, unknown words, quotes, Unicode, synonyms,
  // prefixes and typos, ids and slugs in odd case, a generic query with many ties.
  for (const char* extra : {"", "  \n ", "xyzzy", "must", "must be contiguous", "\"`out` must be contiguous.\"",
                            "'`write_pos` must have shape (12,).'", "torch.cuda.OutOfMemoryError: CUDA out of memory",
                            "g_cache m\xc3\xbcst be fp32", "GPU tensors required", "dtyp", "contig", "066BD06E9AB538BD",
                            "Kda-G-Cache-Dtype", "sparse", "kda", "the the the", "head dim", "error", "ValueError"})
    qs.emplace_back(extra);
  return qs;
}

TEST(SearchParity, JavaScriptRanksLikeCpp) {
  const std::string node = node_binary();
  if (node.empty()) GTEST_SKIP() << "skipped: node not found (the browser test runs the same check in Chromium)";
  const auto qs = parity_queries();
  expect_same_ranking(Catalog::embedded(), qs, run_js(node, Catalog::embedded(), qs, 10), 10);
}

TEST(SearchParity, JavaScriptRanksLikeCppWithARetiredEntry) {
  const std::string node = node_binary();
  if (node.empty()) GTEST_SKIP() << "skipped: node not found";
  const Catalog c = with_retired_twin();
  const std::vector<std::string> qs = {"`g_cache` must have dtype torch.float32.", "g_cache float32", "0123456789abcdef",
                                       "kda-g-cache-dtype-old"};
  expect_same_ranking(c, qs, run_js(node, c, qs, 5), 5);
}

}  // namespace
}  // namespace kparity::test
