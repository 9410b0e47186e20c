// The parameter list of the catalog-wide suites cannot hide an unusable catalog: a catalog that
// throws, or holds no contract entry, becomes one parameter whose case fails (issue 19 item 3).
#include <gtest/gtest.h>

#include "catalog/catalog_util.hpp"

namespace kparity::test {
namespace {

TEST(CatalogParams, EmbeddedCatalogGivesOneParameterPerContractEntry) {
  const auto ids = embedded_ids();
  ASSERT_FALSE(ids.empty());
  std::size_t contract_entries = 0;
  for (const auto& e : Catalog::embedded().entries())
    contract_entries += e.record.value("emittedBy", "contracts") != "kernels";
  EXPECT_EQ(ids.size(), contract_entries);
  for (const auto& id : ids) EXPECT_TRUE(usable_param(id)) << id;
}

TEST(CatalogParams, ACatalogThatThrowsBecomesAFailingParameter) {
  const auto ids = contract_entry_ids([]() -> const Catalog& { throw CatalogError("catalog/x.json: bad field"); });
  ASSERT_EQ(ids.size(), 1u);
  const auto r = usable_param(ids[0]);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("did not load: catalog/x.json: bad field"), std::string::npos) << r.message();
  EXPECT_EQ(gtest_name(ids[0]), "CatalogUnusable");
}

TEST(CatalogParams, AMalformedRecordBecomesAFailingParameter) {
  const auto ids = contract_entry_ids([]() -> const Catalog& {
    static const Catalog c = Catalog::from_texts({{"broken.json", "{\"id\": "}});
    return c;
  });
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_FALSE(usable_param(ids[0]));
  EXPECT_NE(ids[0].find("broken.json"), std::string::npos) << ids[0];
}

TEST(CatalogParams, AnEmptyCatalogBecomesAFailingParameter) {
  const auto ids = contract_entry_ids([]() -> const Catalog& {
    static const Catalog c = Catalog::from_texts({});
    return c;
  });
  ASSERT_EQ(ids.size(), 1u);
  const auto r = usable_param(ids[0]);
  EXPECT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("no entry that a contract emits"), std::string::npos) << r.message();
}

}  // namespace
}  // namespace kparity::test
