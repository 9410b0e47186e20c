// Every catalog record validates against catalog/schema.json.
#include <gtest/gtest.h>

#include "catalog/catalog_util.hpp"
#include "catalog/schema_validator.hpp"

namespace kparity::detail {
const std::vector<std::pair<std::string_view, std::string_view>>& catalog_texts();
}

namespace kparity::test {
namespace {

const SchemaValidator& validator() {
  static const SchemaValidator v(nlohmann::json::parse(read_source("catalog/schema.json")));
  return v;
}

std::string joined(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += "  " + e + "\n";
  return s;
}

TEST(CatalogSchema, IsADraft202012Schema) {
  const auto s = nlohmann::json::parse(read_source("catalog/schema.json"));
  EXPECT_EQ(s.at("$schema"), "https://json-schema.org/draft/2020-12/schema");
  EXPECT_EQ(s.at("additionalProperties"), false);
}

TEST(CatalogSchema, EveryEmbeddedFileValidates) {
  // The raw files, not the parsed catalog: a record the loader would reject still gets its
  // schema errors listed here.
  for (const auto& [name, text] : kparity::detail::catalog_texts()) {
    nlohmann::json rec;
    ASSERT_NO_THROW(rec = nlohmann::json::parse(text)) << name;
    const auto errors = validator().validate(rec);
    EXPECT_TRUE(errors.empty()) << "catalog/" << name << " does not match catalog/schema.json:\n" << joined(errors);
  }
}

// The validator is not vacuous: it rejects each kind of mistake the schema is there to catch.
class SchemaRejects : public ::testing::Test {
 protected:
  nlohmann::json good() const {
    return nlohmann::json::parse(R"({
      "id": "0123456789abcdef", "repo": "kparity", "slug": "kda-example", "errorMessage": "m.",
      "messagePattern": "m\\.", "errorClass": "ValueError", "filePath": null, "lineNumber": null,
      "analyzedSha": null, "helpUri": null, "documentation": "d", "triggerScenarios": "",
      "commonSituations": "", "solutions": ["s"], "exampleFix": "", "handlingStrategy": "fix-the-caller",
      "preventionTips": [], "tags": ["shape"], "schemaVersion": 1, "op": "kda/recurrent", "argument": "q",
      "checkOrder": 40, "checkRef": "kda.md C.3 O1", "severity": "error", "origin": "kparity",
      "status": "active", "since": "0.1.0", "summary": "s", "messageTemplate": "m.", "args": [],
      "dataDependent": false, "defaultEnabled": false,
      "erroneousExample": {"fixture": "kda.recurrent.minimal", "set": {"q.dtype": "i32"}, "options": {"extra": true}},
      "fixedExample": {"fixture": "kda.recurrent.minimal", "set": {}, "options": {"extra": true}}})");
  }
};

TEST_F(SchemaRejects, NothingInAGoodRecord) { EXPECT_EQ(validator().validate(good()), std::vector<std::string>{}); }

TEST_F(SchemaRejects, MissingRequiredField) {
  auto r = good();
  r.erase("documentation");
  EXPECT_FALSE(validator().validate(r).empty());
}

TEST_F(SchemaRejects, UnknownField) {
  auto r = good();
  r["sourceCode"] = "raise ValueError()";
  EXPECT_FALSE(validator().validate(r).empty());
}

TEST_F(SchemaRejects, BadIdSlugEnumAndTypes) {
  for (auto [key, value] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"id", "066BD06E9AB538BD"}, {"id", "066bd06e9ab538b"}, {"slug", "g-cache-dtype"},
           {"errorClass", "KeyError"}, {"severity", "fatal"}, {"origin", "both"}, {"lineNumber", 0},
           {"lineNumber", "744"}, {"solutions", nlohmann::json::array()}, {"schemaVersion", 2},
           {"checkOrder", -1}, {"op", "kda/unknown"}}) {
    auto r = good();
    r[key] = value;
    EXPECT_FALSE(validator().validate(r).empty()) << key << " = " << value.dump();
  }
}

TEST_F(SchemaRejects, BadExampleShape) {
  auto r = good();
  r["erroneousExample"]["base"] = "kda.recurrent.minimal";
  EXPECT_FALSE(validator().validate(r).empty());
  r = good();
  r["fixedExample"]["options"]["entry"] = "gpu";
  EXPECT_FALSE(validator().validate(r).empty());
  r = good();
  r["args"] = nlohmann::json::array({{{"name", "batch"}}});
  EXPECT_FALSE(validator().validate(r).empty());
}

}  // namespace
}  // namespace kparity::test
