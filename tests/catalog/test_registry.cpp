// Catalog-wide consistency ("tidy"): ids, slugs, the golden id list, patterns, prose, upstream
// facts, check order, and how every entry renders.
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "catalog/catalog_util.hpp"
#include "kparity/diagnostics/explain.hpp"

namespace kparity::test {
namespace {

const std::vector<CatalogEntry>& entries() { return Catalog::embedded().entries(); }

std::vector<std::string> placeholders(const std::string& tmpl) {
  std::string t = std::regex_replace(tmpl, std::regex(R"(\{\{|\}\})"), "");
  std::vector<std::string> out;
  static const std::regex re(R"(\{([A-Za-z_][A-Za-z0-9_]*)\})");
  for (std::sregex_iterator it(t.begin(), t.end(), re), end; it != end; ++it) out.push_back((*it)[1]);
  return out;
}

TEST(CatalogRegistry, EmbeddedCatalogLoads) { EXPECT_NO_THROW(Catalog::embedded()); }

TEST(CatalogRegistry, IdsWellFormedAndUnique) {
  std::set<std::string> ids;
  for (const auto& e : entries()) {
    EXPECT_TRUE(std::regex_match(e.id, std::regex("[0-9a-f]{16}"))) << e.source;
    EXPECT_TRUE(ids.insert(e.id).second) << "duplicate id " << e.id;
  }
}

TEST(CatalogRegistry, SlugsUniqueAndPrefixedWithTheOpFamily) {
  std::set<std::string> slugs;
  for (const auto& e : entries()) {
    EXPECT_TRUE(slugs.insert(e.slug).second) << "duplicate slug " << e.slug;
    const std::string family = e.op.substr(0, e.op.find('/'));
    EXPECT_EQ(e.slug.rfind(family + "-", 0), 0u) << e.slug << " is not prefixed with " << family << "-";
  }
}

TEST(CatalogRegistry, FileIsFamilySlugJson) {
  for (const auto& e : entries()) {
    const std::string family = e.op.substr(0, e.op.find('/'));
    EXPECT_EQ(e.source, "<embedded>/" + family + "/" + e.slug + ".json");
  }
}

TEST(CatalogRegistry, GoldenIdListEqualsCatalog) {
  std::istringstream in(read_source("catalog/ids.txt"));
  std::vector<std::string> listed;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    EXPECT_TRUE(std::regex_match(line, std::regex("[0-9a-f]{16}"))) << "ids.txt line '" << line << "'";
    listed.push_back(line);
  }
  std::set<std::string> golden(listed.begin(), listed.end());
  EXPECT_EQ(golden.size(), listed.size()) << "ids.txt lists an id twice";
  ASSERT_GE(listed.size(), 3u);
  // Issue order: the seeds were issued first.
  EXPECT_EQ(listed[0], "066bd06e9ab538bd");
  EXPECT_EQ(listed[1], "b62325e96d849b25");
  EXPECT_EQ(listed[2], "5d9da259c68eb6c4");
  std::set<std::string> catalog;
  for (const auto& e : entries()) catalog.insert(e.id);
  for (const auto& id : golden) EXPECT_TRUE(catalog.count(id)) << id << " is in catalog/ids.txt but no catalog entry has it";
  for (const auto& id : catalog) EXPECT_TRUE(golden.count(id)) << id << " (" << Catalog::embedded().by_id(id)->slug << ") is missing from catalog/ids.txt";
}

TEST(CatalogRegistry, PatternFullyMatchesErrorMessage) {
  for (const auto& e : entries())
    EXPECT_TRUE(std::regex_match(e.error_message, std::regex(e.message_pattern))) << e.slug << ": /" << e.message_pattern << "/ vs " << e.error_message;
}

TEST(CatalogRegistry, TemplatePlaceholdersAreArgs) {
  for (const auto& e : entries()) {
    std::vector<std::string> args;
    for (const auto& a : e.record.value("args", nlohmann::json::array())) args.push_back(a.value("name", ""));
    EXPECT_EQ(std::set<std::string>(args.begin(), args.end()).size(), args.size()) << e.slug << ": an arg is listed twice";
    for (const auto& p : placeholders(e.message_template))
      EXPECT_NE(std::find(args.begin(), args.end(), p), args.end()) << e.slug << ": placeholder {" << p << "} is not in args";
    if (placeholders(e.message_template).empty()) {
      EXPECT_EQ(render_template(e.message_template, {}), e.error_message) << e.slug << ": a template without placeholders must render to errorMessage";
    }
  }
}

TEST(CatalogRegistry, CheckOrderUniquePerOp) {
  std::map<std::pair<std::string, int>, std::string> seen;
  for (const auto& e : entries()) {
    auto [it, fresh] = seen.emplace(std::pair{e.op, e.check_order}, e.slug);
    EXPECT_TRUE(fresh) << e.op << " checkOrder " << e.check_order << " is used by " << it->second << " and " << e.slug;
  }
}

TEST(CatalogRegistry, EveryEntryIsExplained) {
  for (const auto& e : entries()) {
    EXPECT_TRUE(e.documented()) << e.slug << " has no documentation";
    EXPECT_FALSE(e.summary.empty()) << e.slug;
    EXPECT_GE(e.record.value("solutions", nlohmann::json::array()).size(), 1u) << e.slug;
    EXPECT_TRUE(e.record.contains("erroneousExample")) << e.slug;
    EXPECT_TRUE(e.record.contains("fixedExample")) << e.slug;
  }
}

TEST(CatalogRegistry, UpstreamFactsPresentAndLinked) {
  for (const auto& e : entries()) {
    const auto& r = e.record;
    if (e.origin == "upstream") {
      EXPECT_NE(r.value("repo", ""), "kparity") << e.slug;
      // A line that could not be verified stays null rather than guessed, and the note says so;
      // the link then names the file at the commit without a line anchor.
      const bool unverified_line = r.contains("lineNumber") && r["lineNumber"].is_null() && r.contains("note") &&
                                   r["note"].get<std::string>().find("not verified") != std::string::npos;
      const bool facts = r.contains("filePath") && r["filePath"].is_string() && r.contains("lineNumber") &&
                         (r["lineNumber"].is_number_integer() || unverified_line) && r.contains("analyzedSha") &&
                         r["analyzedSha"].is_string();
      EXPECT_TRUE(facts) << e.slug << ": an upstream entry needs filePath, lineNumber (or a note) and analyzedSha";
      if (!facts) continue;
      if (unverified_line) {
        EXPECT_EQ(r.value("helpUri", ""), "https://github.com/" + r["repo"].get<std::string>() + "/blob/" +
                                              r["analyzedSha"].get<std::string>() + "/" + r["filePath"].get<std::string>())
            << e.slug;
        continue;
      }
      EXPECT_TRUE(r.value("defaultEnabled", false)) << e.slug << ": upstream checks are on by default";
      if (r.contains("helpUri") && r["helpUri"].is_string()) {
        const std::string want = "https://github.com/" + r["repo"].get<std::string>() + "/blob/" +
                                 r["analyzedSha"].get<std::string>() + "/" + r["filePath"].get<std::string>() + "#L" +
                                 std::to_string(r["lineNumber"].get<int>());
        EXPECT_EQ(r["helpUri"].get<std::string>().rfind(want, 0), 0u) << e.slug << ": helpUri should start with " << want;
      }
    } else {
      EXPECT_EQ(r.value("repo", ""), "kparity") << e.slug;
      for (const char* k : {"filePath", "lineNumber", "analyzedSha"})
        EXPECT_TRUE(!r.contains(k) || r[k].is_null()) << e.slug << ": a kparity check has no upstream " << k;
    }
    // An optional check only fires when its example turns it on. (kda/recurrent has no upstream,
    // so its own always-on checks are kparity-origin with defaultEnabled true.)
    const auto opts = r.value("erroneousExample", nlohmann::json::object()).value("options", nlohmann::json::object());
    if (!r.value("defaultEnabled", true)) {
      EXPECT_TRUE(opts.value("extra", false) || opts.value("deep", false)) << e.slug << ": the erroneous example must enable the check";
    }
    if (r.value("dataDependent", false)) {
      EXPECT_TRUE(opts.value("deep", false)) << e.slug << ": data-dependent needs deep";
    }
  }
}

TEST(CatalogRegistry, LifecycleLinksResolve) {
  for (const auto& e : entries()) {
    for (const auto& id : e.record.value("related", std::vector<std::string>{}))
      EXPECT_NE(Catalog::embedded().by_id(id), nullptr) << e.slug << " relates to unknown id " << id;
    if (e.record.contains("replacedBy")) {
      EXPECT_NE(Catalog::embedded().by_id(e.record["replacedBy"].get<std::string>()), nullptr) << e.slug;
    }
    if (e.status == "retired") {
      EXPECT_TRUE(e.record.contains("replacedBy")) << e.slug;
    }
    if (e.status != "active") {
      EXPECT_TRUE(e.record.contains("note")) << e.slug;
    }
  }
}

TEST(CatalogRegistry, FooterExactlyForDocumentedEntries) {
  for (const auto& e : entries()) {
    const std::string text = make_diagnostic(e.id, e.op + "::arg[" + e.argument + "]").render_text();
    const std::string footer = "For more information, run `kparity explain " + e.id + "`.\n";
    EXPECT_EQ(text.find(footer) != std::string::npos, e.documented()) << text;
  }
}

TEST(CatalogRegistry, ExplainPageEndsWithTheId) {
  for (const auto& e : entries()) {
    const std::string page = explain_text(e, Catalog::embedded());
    const std::string last = "Catalog id: " + e.id + " (" + e.slug + ")\n";
    ASSERT_GE(page.size(), last.size());
    EXPECT_EQ(page.substr(page.size() - last.size()), last) << page;
    EXPECT_EQ(page.find("kparity explain"), std::string::npos) << "no explain footer on an explain page";
    for (const char* s : {"Error message", "What it means", "Source", "Solutions"})
      EXPECT_NE(page.find(std::string("\n") + s + "\n"), std::string::npos) << e.slug << " page lacks " << s;
  }
}

TEST(CatalogRegistry, LookupFindsEveryEntryByIdSlugAndMessage) {
  const auto& c = Catalog::embedded();
  for (const auto& e : entries()) {
    EXPECT_EQ(c.lookup(e.id), &e);
    EXPECT_EQ(c.lookup(e.slug), &e);
    const auto hits = c.by_message(e.error_message);
    EXPECT_NE(std::find(hits.begin(), hits.end(), &e), hits.end()) << e.slug;
  }
}

TEST(CatalogRegistry, SarifRulesForTheWholeCatalog) {
  std::vector<const CatalogEntry*> all;
  for (const auto& e : entries()) all.push_back(&e);
  const auto log = sarif_log(all);
  const auto& rules = log["runs"][0]["tool"]["driver"]["rules"];
  ASSERT_EQ(rules.size(), all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(rules[i]["id"], all[i]->id);
    EXPECT_EQ(rules[i]["name"], all[i]->slug);
    EXPECT_FALSE(std::regex_search(rules[i]["messageStrings"]["default"]["text"].get<std::string>(),
                                   std::regex(R"((^|[^{])\{[A-Za-z_]\w*\}([^}]|$))")))
        << "named placeholder left in " << rules[i].dump();
  }
}

// The three seeds are the ids users already have (issue 2, "Done when").
TEST(CatalogSeeds, PastedSeedMessagesResolve) {
  const auto& c = Catalog::embedded();
  for (auto [msg, id] : std::vector<std::pair<std::string, std::string>>{
           {"`g_cache` must have dtype torch.float32.", "066bd06e9ab538bd"},
           {"`force_flush` must be on the same device as the inputs.", "b62325e96d849b25"},
           {"Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors", "5d9da259c68eb6c4"}}) {
    const CatalogEntry* e = c.lookup(msg);
    ASSERT_NE(e, nullptr) << msg;
    EXPECT_EQ(e->id, id);
    EXPECT_EQ(e->error_message, msg) << "seed messages are upstream's, byte for byte";
    EXPECT_EQ(e->origin, "upstream");
    EXPECT_EQ(c.lookup("ValueError: " + msg), e);
  }
}

}  // namespace
}  // namespace kparity::test
