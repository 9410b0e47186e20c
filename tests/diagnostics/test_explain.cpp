// The explain page, explain JSON, SARIF 2.1.0, the markdown index and the list.
#include <gtest/gtest.h>

#include "diagnostics/synthetic_catalog.hpp"
#include "kparity/diagnostics/explain.hpp"

namespace kparity::test {
namespace {

const Catalog& cat() { return *synthetic_catalog(); }
const CatalogEntry& entry(const char* id) { return *cat().by_id(id); }

std::vector<std::string> section_titles(const std::string& page) {
  std::vector<std::string> titles;
  for (const char* t : {"Error message", "What it means", "Source", "Solutions", "Example fix", "When it happens", "Prevention",
                        "Related errors"})
    if (page.find(std::string("\n") + t + "\n\n") != std::string::npos) titles.push_back(t);
  return titles;
}

TEST(ExplainText, PageLikeTheSeeds) {
  const std::string page = explain_text(entry("aaaaaaaaaaaaaaa1"), cat());
  EXPECT_EQ(page.rfind("sgl-project/sglang · error · ValueError\n", 0), 0u) << page;
  EXPECT_EQ(section_titles(page), (std::vector<std::string>{"Error message", "What it means", "Source", "Solutions", "Example fix",
                                                            "When it happens", "Prevention", "Related errors"}))
      << page;
  // Sections come in this order.
  std::size_t last = 0;
  for (const auto& t : section_titles(page)) {
    const auto at = page.find("\n" + t + "\n\n");
    EXPECT_GT(at, last) << t;
    last = at;
  }
  EXPECT_NE(page.find("Thrown at python/pkg/mod.py:744"), std::string::npos) << page;
  EXPECT_NE(page.find("https://github.com/sgl-project/sglang/blob/0132848349585cfe6aae51c4941cbae872505f8a/python/pkg/mod.py#L744"),
            std::string::npos);
  EXPECT_NE(page.find("1. Allocate it right.\n2. Check it early.\n"), std::string::npos) << page;
  EXPECT_NE(page.find("Trigger: A call with the wrong thing."), std::string::npos);
  EXPECT_NE(page.find("Common situations: Allocating it wrongly."), std::string::npos);
  EXPECT_NE(page.find("• Keep one allocator."), std::string::npos);
  // Related: the listed id first, then neighbours by check order, each shown by its message.
  EXPECT_NE(page.find("• `write_pos` must have shape (2,). (aaaaaaaaaaaaaaa2, kda-test-write-pos-shape)"), std::string::npos) << page;
  EXPECT_NE(page.find("(aaaaaaaaaaaaaaa3, kda-test-any-shape)"), std::string::npos) << page;
  EXPECT_EQ(page.find("bbbbbbbbbbbbbbb1"), std::string::npos) << "other ops are not neighbours";
  EXPECT_TRUE(page.ends_with("\nCatalog id: aaaaaaaaaaaaaaa1 (kda-test-g-cache-dtype)\n")) << page;
  EXPECT_EQ(page.find("kparity explain"), std::string::npos);
}

TEST(ExplainText, KparityEntryNamesItsCheckRefAndSkipsEmptySections) {
  const std::string page = explain_text(entry("aaaaaaaaaaaaaaa4"), cat());
  EXPECT_EQ(page.rfind("kparity · warning · ValueError\n", 0), 0u) << page;
  EXPECT_NE(page.find("A kparity check"), std::string::npos) << page;
  EXPECT_NE(page.find("kda.md C.1 #0"), std::string::npos) << page;
  EXPECT_EQ(page.find("What it means"), std::string::npos) << "no documentation, no section";
  EXPECT_NE(page.find("Template: index {{i}}={index} of {arg} is odd {{}}"), std::string::npos) << page;
  EXPECT_TRUE(page.ends_with("Catalog id: aaaaaaaaaaaaaaa4 (kda-test-index-warning)\n"));
}

TEST(ExplainJson, RecordPlusRenderedFields) {
  const auto j = explain_json(entry("aaaaaaaaaaaaaaa2"));
  EXPECT_EQ(j["id"], "aaaaaaaaaaaaaaa2");
  EXPECT_EQ(j["messagePattern"], R"(`write_pos` must have shape \(\d+,\)\.)");
  EXPECT_EQ(j["rendered"]["sarifMessage"], "`write_pos` must have shape {0}.");
  EXPECT_EQ(j["rendered"]["documented"], true);
}

TEST(Sarif, RulesAndResults) {
  std::vector<const CatalogEntry*> rules;
  for (const auto& e : cat().entries()) rules.push_back(&e);
  ScopedCatalog scope;
  Diagnostic d = make_diagnostic("aaaaaaaaaaaaaaa4", "kda/replayssm_decode::arg[write_pos][1]", {{"index", "3"}, {"arg", "write_pos"}});
  d.add_context("while validating the inputs of kda/replayssm_decode");
  const auto log = sarif_log(rules, {d});
  EXPECT_EQ(log["version"], "2.1.0");
  EXPECT_NE(log["$schema"].get<std::string>().find("sarif-schema-2.1.0"), std::string::npos);
  const auto& run = log["runs"][0];
  EXPECT_EQ(run["tool"]["driver"]["name"], "kparity");
  EXPECT_TRUE(run["tool"]["driver"].contains("semanticVersion"));
  const auto& rs = run["tool"]["driver"]["rules"];
  ASSERT_EQ(rs.size(), rules.size());
  std::size_t wi = 0;
  for (std::size_t i = 0; i < rs.size(); ++i)
    if (rs[i]["id"] == "aaaaaaaaaaaaaaa4") wi = i;
  const auto& r = rs[wi];
  EXPECT_EQ(r["name"], "kda-test-index-warning");
  EXPECT_EQ(r["shortDescription"]["text"], "A summary.");
  EXPECT_FALSE(r.contains("fullDescription")) << "no documentation";
  // args order is [arg, index]; literal braces stay doubled.
  EXPECT_EQ(r["messageStrings"]["default"]["text"], "index {{i}}={1} of {0} is odd {{}}");
  EXPECT_EQ(r["defaultConfiguration"]["level"], "warning");
  EXPECT_EQ(r["properties"]["origin"], "kparity");
  EXPECT_FALSE(r.contains("helpUri"));
  EXPECT_NE(r["help"]["text"].get<std::string>().find("Allocate it right."), std::string::npos);
  const auto& up = rs[0];
  EXPECT_EQ(up["fullDescription"]["text"], "Why the rule exists.");
  EXPECT_TRUE(up["helpUri"].get<std::string>().starts_with("https://github.com/"));
  EXPECT_EQ(up["properties"]["upstream"]["line"], 744);

  const auto& results = run["results"];
  ASSERT_EQ(results.size(), 1u);
  const auto& res = results[0];
  EXPECT_EQ(res["ruleId"], "aaaaaaaaaaaaaaa4");
  EXPECT_EQ(res["ruleIndex"], wi);
  EXPECT_EQ(res["level"], "warning");
  EXPECT_EQ(res["message"]["id"], "default");
  EXPECT_EQ(res["message"]["text"], "index {i}=3 of write_pos is odd {}");
  EXPECT_EQ(res["message"]["arguments"], nlohmann::json::array({"write_pos", "3"}));
  const auto& loc = res["locations"][0]["logicalLocations"][0];
  EXPECT_EQ(loc["fullyQualifiedName"], "kda/replayssm_decode::arg[write_pos][1]");
  EXPECT_EQ(loc["kind"], "parameter");
  EXPECT_EQ(res["properties"]["context"][0], "while validating the inputs of kda/replayssm_decode");
  EXPECT_FALSE(res["partialFingerprints"].empty());
}

TEST(Sarif, ResultWithoutItsRuleHasNoRuleIndex) {
  ScopedCatalog scope;
  const auto log = sarif_log({}, {make_diagnostic("aaaaaaaaaaaaaaa2", "loc", {{"shape", "(2,)"}})});
  const auto& res = log["runs"][0]["results"][0];
  EXPECT_EQ(res["ruleId"], "aaaaaaaaaaaaaaa2");
  EXPECT_FALSE(res.contains("ruleIndex"));
  EXPECT_EQ(res["message"]["arguments"], nlohmann::json::array({"(2,)"}));
}

TEST(MarkdownIndex, GroupedByOpWithAnchors) {
  std::vector<const CatalogEntry*> all;
  for (const auto& e : cat().entries()) all.push_back(&e);
  const std::string md = markdown_index(all, cat());
  const auto kda = md.find("\n## kda/replayssm_decode\n"), sparse = md.find("\n## sparse/paged_prefill\n");
  ASSERT_NE(kda, std::string::npos) << md;
  ASSERT_NE(sparse, std::string::npos) << md;
  EXPECT_LT(kda, sparse);
  for (const auto* e : all) {
    const auto at = md.find("<a id=\"" + e->id + "\"></a>");
    ASSERT_NE(at, std::string::npos) << e->id;
    EXPECT_EQ(at > sparse, e->op == "sparse/paged_prefill") << e->id;
  }
  EXPECT_NE(md.find("](#aaaaaaaaaaaaaaa2)"), std::string::npos) << "related entries link to their anchors";
}

TEST(ListText, OneLinePerEntry) {
  const std::string text = list_text(cat().list("sparse/"));
  EXPECT_EQ(text, "bbbbbbbbbbbbbbb1  sparse-test-requires-cuda  A summary.\n");
}

}  // namespace
}  // namespace kparity::test
