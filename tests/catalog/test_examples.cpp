// Every catalog entry's examples really behave as documented: the erroneous example raises exactly
// this entry (class, id, message) from check() and appears in validate(); the fixed example is
// clean. Parametrised over whatever the catalog holds, so new entries are covered automatically.
#include <regex>

#include <gtest/gtest.h>

#include "catalog/catalog_util.hpp"
#include "kparity/diagnostics/examples.hpp"

namespace kparity::test {
namespace {

std::string all_text(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.render_text();
  return s.empty() ? "(none)" : s;
}

bool has_placeholders(const std::string& tmpl) {
  const std::string t = std::regex_replace(tmpl, std::regex(R"(\{\{|\}\})"), "");
  return std::regex_search(t, std::regex(R"(\{[A-Za-z_]\w*\})"));
}

class EntryExamples : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ASSERT_TRUE(usable_param(GetParam()));
    entry_ = Catalog::embedded().by_id(GetParam());
    ASSERT_NE(entry_, nullptr);
    if (entry_->status != "active") GTEST_SKIP() << entry_->slug << " is " << entry_->status;
    op_ = find_op_contract(entry_->op);
    ASSERT_NE(op_, nullptr) << "no contract registered for op " << entry_->op;
  }

  BuiltExample build(const char* key) {
    EXPECT_TRUE(entry_->record.contains(key)) << entry_->slug << " has no " << key;
    BuiltExample ex;
    try {
      ex = build_example(entry_->record.value(key, nlohmann::json::object()));
    } catch (const std::exception& e) {
      ADD_FAILURE() << entry_->slug << "." << key << ": " << e.what();
    }
    EXPECT_EQ(ex.op, entry_->op) << entry_->slug << "." << key << " uses a fixture of another op";
    return ex;
  }

  const CatalogEntry* entry_ = nullptr;
  const OpContract* op_ = nullptr;
};

TEST_P(EntryExamples, CheckRaisesExactlyThisEntry) {
  const auto& e = *entry_;
  BuiltExample ex = build("erroneousExample");
  if (HasFailure()) return;
  if (e.severity != Severity::error) {
    // A warning never throws; check() hands it back.
    std::vector<Diagnostic> warnings;
    ASSERT_NO_THROW(warnings = op_->check(ex.bag, ex.options));
    ASSERT_FALSE(warnings.empty()) << e.slug << ": check() reported nothing";
    EXPECT_EQ(warnings.front().id, e.id) << all_text(warnings);
    return;
  }
  try {
    const auto w = op_->check(ex.bag, ex.options);
    FAIL() << e.slug << ": check() did not throw; it returned " << all_text(w);
  } catch (const Error& err) {
    const Diagnostic& d = err.diagnostic();
    EXPECT_EQ(err.id(), e.id) << "expected " << e.slug << ", got:\n" << err.full_text();
    EXPECT_TRUE(is_instance(err, e.error_class))
        << e.slug << ": expected kparity::" << error_class_name(e.error_class) << ", got class " << error_class_name(d.error_class);
    EXPECT_EQ(d.error_class, e.error_class);
    EXPECT_STREQ(err.what(), d.message.c_str());
    EXPECT_TRUE(std::regex_match(d.message, std::regex(e.message_pattern)))
        << e.slug << ": rendered message '" << d.message << "' does not match /" << e.message_pattern << "/";
    if (e.origin == "upstream" && !has_placeholders(e.message_template)) {
      EXPECT_EQ(d.message, e.error_message);
    }
    EXPECT_EQ(render_template(d.message_template, d.args), d.message);
    const std::string t = std::regex_replace(d.message_template, std::regex(R"(\{\{|\}\})"), "");
    static const std::regex ph(R"(\{([A-Za-z_]\w*)\})");
    for (std::sregex_iterator it(t.begin(), t.end(), ph), end; it != end; ++it) {
      const std::string name = (*it)[1];
      EXPECT_TRUE(std::any_of(d.args.begin(), d.args.end(), [&](const DiagArg& a) { return a.name == name; }))
          << e.slug << ": the contract passed no value for {" << name << "}";
    }
    EXPECT_EQ(d.location.rfind(e.op + "::", 0), 0u) << d.location;
  } catch (const std::exception& other) {
    FAIL() << e.slug << ": check() threw a non-diagnostic exception: " << other.what();
  }
}

TEST_P(EntryExamples, ValidateReportsThisEntry) {
  const auto& e = *entry_;
  BuiltExample ex = build("erroneousExample");
  if (HasFailure()) return;
  std::vector<Diagnostic> ds;
  try {
    ds = op_->validate(ex.bag, ex.options);
  } catch (const std::exception& err) {
    FAIL() << e.slug << ": validate() threw: " << err.what();
  }
  const bool found = std::any_of(ds.begin(), ds.end(), [&](const Diagnostic& d) { return d.id == e.id; });
  EXPECT_TRUE(found) << e.slug << " not reported by validate(); got:\n" << all_text(ds);
}

TEST_P(EntryExamples, FixedExampleIsClean) {
  const auto& e = *entry_;
  BuiltExample ex = build("fixedExample");
  if (HasFailure()) return;
  std::vector<Diagnostic> ds;
  try {
    ds = op_->validate(ex.bag, ex.options);
    EXPECT_NO_THROW(op_->check(ex.bag, ex.options));
  } catch (const std::exception& err) {
    FAIL() << e.slug << ": the fixed example threw: " << err.what();
  }
  EXPECT_TRUE(ds.empty()) << e.slug << ": the fixed example still reports:\n" << all_text(ds);
}

INSTANTIATE_TEST_SUITE_P(Catalog, EntryExamples, ::testing::ValuesIn(embedded_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return gtest_name(info.param); });

// Every base fixture is itself a clean input for its op, under the strictest options: the
// examples only make sense if the starting point raises nothing.
TEST(CatalogFixtures, EveryFixtureIsClean) {
  for (const auto& [name, fx] : embedded_fixtures().items()) {
    const OpContract* op = find_op_contract(fx.value("op", ""));
    ASSERT_NE(op, nullptr) << name << ": unknown op " << fx.value("op", "");
    BuiltExample ex = build_example({{"fixture", name}});
    std::vector<Diagnostic> ds;
    ASSERT_NO_THROW(ds = op->validate(ex.bag, ValidateOptions::strict())) << name;
    EXPECT_TRUE(ds.empty()) << name << ":\n" << all_text(ds);
  }
}

}  // namespace
}  // namespace kparity::test
