// Catalog look-ups ("kparity explain <id | slug | pasted message>"), suggestions, listing, and
// override catalogs with their load errors.
#include <filesystem>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "diagnostics/synthetic_catalog.hpp"

namespace kparity::test {
namespace {

const Catalog& cat() { return *synthetic_catalog(); }

std::string slug_of(const CatalogEntry* e) { return e ? e->slug : "(none)"; }

TEST(Lookup, ByIdAndSlug) {
  EXPECT_EQ(slug_of(cat().by_id("aaaaaaaaaaaaaaa1")), "kda-test-g-cache-dtype");
  EXPECT_EQ(cat().by_id("aaaaaaaaaaaaaaa9"), nullptr);
  EXPECT_EQ(slug_of(cat().by_slug("kda-test-write-pos-shape")), "kda-test-write-pos-shape");
  EXPECT_EQ(slug_of(cat().lookup("aaaaaaaaaaaaaaa2")), "kda-test-write-pos-shape");
  EXPECT_EQ(slug_of(cat().lookup("  AAAAAAAAAAAAAAA2\n")), "kda-test-write-pos-shape");
  EXPECT_EQ(slug_of(cat().lookup("kda-test-write-pos-shape")), "kda-test-write-pos-shape");
  EXPECT_EQ(cat().lookup(""), nullptr);
  EXPECT_EQ(cat().lookup("nothing like it"), nullptr);
}

TEST(Lookup, PastedMessageWithNumbersResolvesThroughThePattern) {
  // Concrete numbers the catalog never saw; the most specific pattern wins over the generic one.
  for (const char* pasted : {"`write_pos` must have shape (3,).", "`write_pos` must have shape (128,).",
                             "ValueError: `write_pos` must have shape (3,).", "  \"`write_pos` must have shape (3,).\"  ",
                             "error[aaaaaaaaaaaaaaa2]: `write_pos` must have shape (3,).",
                             "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: `write_pos` must have shape (7,).\n"}) {
    EXPECT_EQ(slug_of(cat().lookup(pasted)), "kda-test-write-pos-shape") << pasted;
    const auto hits = cat().by_message(pasted);
    ASSERT_EQ(hits.size(), 2u) << pasted;
    EXPECT_EQ(hits[1]->slug, "kda-test-any-shape");
  }
  EXPECT_EQ(slug_of(cat().lookup("`d_cache` must have shape (3, 2).")), "kda-test-any-shape");
  EXPECT_TRUE(cat().by_message("`write_pos` must have shape (3,). trailing").size() <= 1) << "full match only";
  EXPECT_EQ(slug_of(cat().lookup("`write_pos` must have shape (3,). trailing")), "kda-test-any-shape");
  EXPECT_EQ(slug_of(cat().lookup("RuntimeError: Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensors")),
            "sparse-test-requires-cuda");
  EXPECT_EQ(cat().lookup("Triton sparse_attn_v4_paged_prefill requires CUDA/HIP tensor"), nullptr) << "the message says tensors";
}

TEST(Lookup, DeprecatedIdsResolveToTheSuccessor) {
  auto texts = synthetic_texts();
  auto rec = nlohmann::json::parse(texts[0].second);
  rec["deprecatedIds"] = {"cccccccccccccccc"};
  texts[0].second = rec.dump();
  EXPECT_EQ(slug_of(Catalog::from_texts(texts).lookup("cccccccccccccccc")), "kda-test-g-cache-dtype");
}

TEST(Suggest, DidYouMean) {
  auto s = cat().suggest("aaaaaaaaaaaaaab1");
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0], "aaaaaaaaaaaaaaa1");
  s = cat().suggest("kda-test-write-pos-shap");
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0], "kda-test-write-pos-shape");
  s = cat().suggest("KDA-TEST-G-CACHE-DTYPO");
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0], "kda-test-g-cache-dtype");
  s = cat().suggest("write-pos");
  ASSERT_FALSE(s.empty());
  EXPECT_EQ(s[0], "kda-test-write-pos-shape") << "a fragment of a slug";
  EXPECT_LE(cat().suggest("aaaa").size(), 3u);
  EXPECT_LE(cat().suggest("aaaa", 2).size(), 2u);
  EXPECT_TRUE(cat().suggest("completely-unrelated-words").empty());
  EXPECT_TRUE(cat().suggest("").empty());
}

TEST(List, ByOpAndTag) {
  EXPECT_EQ(cat().list().size(), cat().entries().size());
  EXPECT_EQ(cat().list("kda/").size(), 4u);
  EXPECT_EQ(cat().list("kda/replayssm_decode").size(), 4u);
  EXPECT_EQ(cat().list("sparse/paged_prefill").size(), 1u);
  EXPECT_EQ(cat().list("", "ring").size(), 1u);
  EXPECT_EQ(cat().list("sparse", "ring").size(), 0u);
  // Entries come in op order, then check order.
  auto kda = cat().list("kda/");
  for (std::size_t i = 1; i < kda.size(); ++i) EXPECT_LT(kda[i - 1]->check_order, kda[i]->check_order);
}

class OverrideCatalog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("kparity-catalog-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "kda");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::string& rel, const std::string& text) {
    std::filesystem::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  static std::string load_error(const std::function<void()>& f) {
    try {
      f();
    } catch (const CatalogError& e) {
      return e.what();
    }
    return "(no CatalogError)";
  }
  std::filesystem::path dir_;
};

TEST_F(OverrideCatalog, LoadsADirectoryOrAFile) {
  for (const auto& [name, text] : synthetic_texts()) write(name, text);
  write("fixtures/ignored.json", "{\"not\": \"a record\"}");
  write("schema.json", "{\"type\": \"object\"}");
  const Catalog c = Catalog::load(dir_);
  EXPECT_EQ(c.entries().size(), synthetic_texts().size());
  EXPECT_NE(c.by_id("aaaaaaaaaaaaaaa1"), nullptr);
  EXPECT_EQ(c.by_id("aaaaaaaaaaaaaaa1")->source, (dir_ / "test/kda-test-g-cache-dtype.json").string());
  EXPECT_EQ(Catalog::load(dir_ / "test/kda-test-g-cache-dtype.json").entries().size(), 1u);
}

TEST_F(OverrideCatalog, MalformedJsonNamesTheFile) {
  write("kda/broken.json", "{\"id\": \"aaaaaaaaaaaaaaa1\",");
  const std::string msg = load_error([&] { Catalog::load(dir_); });
  EXPECT_NE(msg.find("broken.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("malformed JSON"), std::string::npos) << msg;
}

TEST_F(OverrideCatalog, MissingOrBadFieldNamesFileAndField) {
  auto rec = nlohmann::json::parse(synthetic_texts()[0].second);
  rec.erase("messagePattern");
  write("kda/no-pattern.json", rec.dump());
  std::string msg = load_error([&] { Catalog::load(dir_); });
  EXPECT_NE(msg.find("no-pattern.json"), std::string::npos) << msg;
  EXPECT_NE(msg.find("messagePattern"), std::string::npos) << msg;

  for (auto [field, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"messagePattern", "(unclosed"}, {"errorClass", "KeyError"}, {"severity", "fatal"}, {"id", "XYZ"},
           {"checkOrder", "first"}, {"slug", "Bad Slug"}, {"tags", "dtype"}, {"origin", "elsewhere"}}) {
    auto r = nlohmann::json::parse(synthetic_texts()[0].second);
    r[field] = value;
    msg = load_error([&] { Catalog::from_texts({{"x/file.json", r.dump()}}); });
    EXPECT_NE(msg.find("x/file.json"), std::string::npos) << field << ": " << msg;
    EXPECT_NE(msg.find("`" + field + "`"), std::string::npos) << field << ": " << msg;
  }
}

TEST_F(OverrideCatalog, DuplicatesAndMissingPath) {
  auto texts = synthetic_texts();
  texts.push_back({"dup.json", texts[0].second});
  EXPECT_NE(load_error([&] { Catalog::from_texts(texts); }).find("duplicate id"), std::string::npos);
  EXPECT_NE(load_error([&] { Catalog::load(dir_ / "does-not-exist"); }).find("does-not-exist"), std::string::npos);
  EXPECT_EQ(load_error([&] { Catalog::from_texts({{"empty.json", "[]"}}); }), "(no CatalogError)");
}

TEST(ActiveCatalog, OverrideAndRestore) {
  const Catalog* embedded = &Catalog::embedded();
  EXPECT_EQ(&active_catalog(), embedded);
  {
    ScopedCatalog scope;
    EXPECT_EQ(&active_catalog(), synthetic_catalog().get());
  }
  EXPECT_EQ(&active_catalog(), embedded);
}

TEST(Fixtures, EmbeddedFixturesMergeAllFiles) {
  const auto& f = embedded_fixtures();
  ASSERT_TRUE(f.is_object());
  for (const char* name : {"kda.replayssm.minimal", "kda.packed.minimal", "kda.recurrent.minimal", "sparse.prefill.minimal",
                           "sparse.decode.minimal"})
    EXPECT_TRUE(f.contains(name)) << name;
}

}  // namespace
}  // namespace kparity::test
