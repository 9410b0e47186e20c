// `kparity explain --site DIR` (issue 17): the generated site is valid (tests/site/check_site.py,
// which must also reject broken copies), deterministic, keeps retired entries, and bad input leaves
// DIR as it was; the browser test (tests/site/browser_test.py) runs it in headless Chromium.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kparity/diagnostics/search.hpp"
#include "kparity/diagnostics/site.hpp"
#include "site/site_test_util.hpp"

namespace kparity::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kSource(KPARITY_SOURCE_DIR);

bool have(const char* program) { return std::system((std::string("command -v ") + program + " >/dev/null 2>&1").c_str()) == 0; }

// Runs a shell command; returns its exit status and output (stdout and stderr together).
std::pair<int, std::string> shell(const std::string& cmd, const fs::path& scratch) {
  const fs::path out = scratch / "shell.txt";
  const int status = std::system((cmd + " >" + shell_quote(out.string()) + " 2>&1").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out)};
}

std::map<std::string, std::string> read_tree(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& de : fs::recursive_directory_iterator(root))
    if (de.is_regular_file()) files[fs::relative(de.path(), root).generic_string()] = slurp(de.path());
  return files;
}

class Site : public ::testing::Test {
 protected:
  void SetUp() override {
    require_cli();
    dir = scratch_dir("site");
  }
  void TearDown() override { fs::remove_all(dir); }
  CliResult site(const fs::path& out, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"explain", "--site", out.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, dir);
  }
  std::pair<int, std::string> check(const fs::path& site_dir) {
    return shell("python3 " + shell_quote((kSource / "tests/site/check_site.py").string()) + " " + shell_quote(site_dir.string()), dir);
  }
  fs::path dir;
};

TEST_F(Site, EveryEntryHasAPageAndEveryLinkResolves) {
  if (!have("python3")) GTEST_SKIP() << "skipped: python3 not found (the site checker is a Python script)";
  const auto out = dir / "site";
  const auto r = site(out);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + std::to_string(Catalog::embedded().entries().size()) + " entry pages"), std::string::npos) << r.out;
  const auto [rc, text] = check(out);
  EXPECT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("site check OK: " + std::to_string(Catalog::embedded().entries().size()) + " entries"), std::string::npos) << text;
  for (const auto& e : Catalog::embedded().entries()) {
    ASSERT_TRUE(fs::exists(out / "e" / e.id / "index.html")) << e.id;
    ASSERT_TRUE(fs::exists(out / "s" / e.slug / "index.html")) << e.slug;
  }
  const json cat = json::parse(slurp(out / "catalog.json"));
  EXPECT_EQ(cat.at("entries").size(), Catalog::embedded().entries().size());
  EXPECT_EQ(json::parse(slurp(out / "search-index.json")), search_index_json(Catalog::embedded()));
}

TEST_F(Site, TheCheckerRejectsBrokenSites) {
  if (!have("python3")) GTEST_SKIP() << "skipped: python3 not found";
  const auto good = dir / "good";
  ASSERT_EQ(site(good).rc, 0);
  const std::string seed = "066bd06e9ab538bd";
  // Each breakage replaces every `from` in one file of a copy of the good site with `to`.
  struct Breakage {
    const char* what;
    std::string file, from, to;
    const char* expect;  // in the checker's output
  };
  const std::string page = "e/" + seed + "/index.html";
  const std::string slug_page = "s/" + Catalog::embedded().by_id(seed)->slug + "/index.html";
  const std::string first_slug = "\"slug\": \"" + Catalog::embedded().entries()[0].slug + "\"";
  const std::string second_slug = "\"slug\": \"" + Catalog::embedded().entries()[1].slug + "\"";
  const std::vector<Breakage> cases = {
      {"a missing entry page", page, "", "", "e/066bd06e9ab538bd/index.html: missing"},
      {"a dangling link", page, "../../index.html", "../../nowhere.html", "does not exist"},
      {"an unclosed element", "index.html", "</main>", "", "never closed"},
      {"a duplicate slug", "catalog.json", second_slug, first_slug, "duplicate slugs"},
      {"a wrong slug redirect", slug_page, seed, "5d9da259c68eb6c4", "forwards to"},
      {"a missing fragment target", page, "id=\"solutions\"", "id=\"solution5\"", "no element id 'solutions'"},
  };
  for (const auto& c : cases) {
    const auto broken = dir / "broken";
    fs::remove_all(broken);
    fs::copy(good, broken, fs::copy_options::recursive);
    if (c.from.empty()) {
      fs::remove(broken / c.file);
    } else {
      std::string text = slurp(broken / c.file);
      ASSERT_NE(text.find(c.from), std::string::npos) << c.what;
      for (std::size_t at; (at = text.find(c.from)) != std::string::npos;) text.replace(at, c.from.size(), c.to);
      std::ofstream(broken / c.file) << text;
    }
    const auto [rc, text] = check(broken);
    EXPECT_EQ(rc, 1) << c.what << "\n" << text;
    EXPECT_NE(text.find(c.expect), std::string::npos) << c.what << "\n" << text;
  }
}

TEST_F(Site, IsDeterministicAndReplacesAPreviousSite) {
  const auto out = dir / "site";
  ASSERT_EQ(site(out).rc, 0);
  const auto first = read_tree(out);
  std::ofstream(out / "stale.html") << "<p>from an older catalog</p>";
  const auto again = site(out);  // a previous site: replaced without --force
  ASSERT_EQ(again.rc, 0) << again.err;
  EXPECT_EQ(read_tree(out), first) << "same catalog, same bytes; the stale page is gone";
  EXPECT_EQ(render_site(Catalog::embedded()).size(), first.size());
  for (const auto& de : fs::directory_iterator(dir))
    EXPECT_EQ(de.path().filename().string().find(".kparity-"), std::string::npos) << "leftover " << de.path();
}

TEST_F(Site, RetiredEntriesKeepTheirPage) {
  const CatalogEntry* seed = Catalog::embedded().by_id("066bd06e9ab538bd");
  const auto cat = dir / "catalog";
  fs::create_directories(cat);
  std::ofstream(cat / "active.json") << seed->record.dump(2);
  json old = seed->record;
  old["id"] = "fedcba9876543210";
  old["slug"] = "kda-g-cache-dtype-v0";
  old["status"] = "retired";
  old["replacedBy"] = seed->id;
  old["note"] = "Split into a dtype and a device check.";
  old["deprecatedIds"] = {"0123456789abcdef"};
  std::ofstream(cat / "retired.json") << old.dump(2);
  const auto out = dir / "site";
  const auto r = site(out, {"--catalog", cat.string()});
  ASSERT_EQ(r.rc, 0) << r.err;
  const std::string page = slurp(out / "e/fedcba9876543210/index.html");
  EXPECT_NE(page.find("class=\"status-note\""), std::string::npos);
  EXPECT_NE(page.find("Retired."), std::string::npos);
  EXPECT_NE(page.find("Split into a dtype and a device check."), std::string::npos);
  EXPECT_NE(page.find("href=\"../../e/066bd06e9ab538bd/index.html\""), std::string::npos) << "links its successor";
  EXPECT_NE(slurp(out / "index.html").find("badge status status-retired"), std::string::npos);
  // The deprecated id keeps a permalink, forwarding to the entry that carries it.
  EXPECT_NE(slurp(out / "e/0123456789abcdef/index.html").find("url=../../e/fedcba9876543210/index.html"), std::string::npos);
  EXPECT_NE(slurp(out / "index.html").find(cat.string()), std::string::npos) << "the footer names the override";
  if (have("python3")) {
    const auto [rc, text] = check(out);
    EXPECT_EQ(rc, 0) << text;
  }
}

TEST_F(Site, MalformedOverrideWritesNothing) {
  const auto cat = dir / "bad";
  fs::create_directories(cat);
  json rec = Catalog::embedded().by_id("066bd06e9ab538bd")->record;
  rec["severity"] = "fatal";
  std::ofstream(cat / "kda-g-cache-dtype.json") << rec.dump(2);
  const auto fresh = dir / "fresh";
  auto r = site(fresh, {"--catalog", cat.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("kda-g-cache-dtype.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("field `severity`"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(fresh));
  // Over a previous site, the previous site stays as it was.
  const auto prev = dir / "prev";
  ASSERT_EQ(site(prev).rc, 0);
  const auto before = read_tree(prev);
  r = site(prev, {"--catalog", cat.string()});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(read_tree(prev), before);
  for (const auto& de : fs::directory_iterator(dir))
    EXPECT_EQ(de.path().filename().string().find(".kparity-"), std::string::npos) << "leftover " << de.path();
}

TEST_F(Site, RefusesAForeignFolderUnlessForced) {
  const auto foreign = dir / "docs";
  fs::create_directories(foreign);
  std::ofstream(foreign / "notes.txt") << "mine";
  auto r = site(foreign);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not a previous kparity site"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  EXPECT_EQ(slurp(foreign / "notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(foreign / "index.html"));
  r = site(foreign, {"--force"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_FALSE(fs::exists(foreign / "notes.txt"));
  EXPECT_TRUE(fs::exists(foreign / "index.html"));
  // An empty folder needs no --force.
  fs::create_directories(dir / "empty");
  EXPECT_EQ(site(dir / "empty").rc, 0);
}

TEST_F(Site, BadUsage) {
  std::ofstream(dir / "file") << "x";
  auto r = site(dir / "file");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("not a folder"), std::string::npos) << r.err;
  r = site(dir / "s", {"066bd06e9ab538bd"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("takes no query"), std::string::npos) << r.err;
  r = run_cli({"explain", "--force", "066bd06e9ab538bd"}, dir);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--force only applies to --site"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "s"));
}

TEST_F(Site, NeverReplacesTheWorkingDirectory) {
  const auto out = dir / "cwd";
  fs::create_directories(out);
  std::ofstream(out / "keep.txt") << "x";
  const auto old = fs::current_path();
  fs::current_path(out);
  EXPECT_THROW(write_site(Catalog::embedded(), ".", {.force = true}), SiteError);
  EXPECT_THROW(write_site(Catalog::embedded(), out.parent_path(), {.force = true}), SiteError);
  fs::current_path(old);
  EXPECT_TRUE(fs::exists(out / "keep.txt"));
  EXPECT_THROW(write_site(Catalog::embedded(), "/", {.force = true}), SiteError);
}

// Headless Chromium on the generated site: the seed searches, the query table, screenshots kept
// under <build>/tests/site-artefacts/. Skips visibly when Chromium is not installed.
TEST_F(Site, SearchesInHeadlessChromium) {
  if (!have("python3")) GTEST_SKIP() << "skipped: python3 not found";
  const auto out = dir / "site";
  ASSERT_EQ(site(out).rc, 0);
  const fs::path artefacts = fs::path(KPARITY_BINARY_DIR) / "tests" / "site-artefacts";
  const auto [rc, text] = shell("python3 " + shell_quote((kSource / "tests/site/browser_test.py").string()) + " " +
                                    shell_quote(out.string()) + " " + shell_quote(artefacts.string()) + " --queries " +
                                    shell_quote((kSource / "tests/diagnostics/search_queries.json").string()),
                                dir);
  if (rc == 77) GTEST_SKIP() << text;
  EXPECT_EQ(rc, 0) << text;
  std::cout << text;
  for (const char* shot : {"index.png", "index-search.png", "index-dark.png", "entry.png", "entry-dark.png"})
    EXPECT_GT(fs::exists(artefacts / shot) ? fs::file_size(artefacts / shot) : 0u, 10000u) << shot;
}

}  // namespace
}  // namespace kparity::test
