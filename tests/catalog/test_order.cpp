// Evaluation order (diagnostics guide 11 #9): for two checks i < j of one op, an input violating
// both reports i first from check(), and check()'s error is validate()'s first error.
#include <gtest/gtest.h>

#include "catalog/catalog_util.hpp"
#include "kparity/diagnostics/examples.hpp"

namespace kparity::test {
namespace {

// The two erroneous examples' overrides together, or nothing when they disagree on a key.
std::optional<nlohmann::json> combine(const CatalogEntry& a, const CatalogEntry& b) {
  const auto& ea = a.record.at("erroneousExample");
  const auto& eb = b.record.at("erroneousExample");
  if (ea.value("fixture", "") != eb.value("fixture", "")) return std::nullopt;
  nlohmann::json ex = ea;
  if (!ex.contains("set")) ex["set"] = nlohmann::json::object();
  if (!ex.contains("options")) ex["options"] = nlohmann::json::object();
  const nlohmann::json set_b = eb.value("set", nlohmann::json::object());
  const nlohmann::json options_b = eb.value("options", nlohmann::json::object());
  for (const auto& [k, v] : set_b.items()) {
    if (ex["set"].contains(k) && ex["set"][k] != v) return std::nullopt;
    ex["set"][k] = v;
  }
  for (const auto& [k, v] : options_b.items()) {
    if (ex["options"].contains(k) && ex["options"][k] != v && !v.is_boolean()) return std::nullopt;
    ex["options"][k] = v.is_boolean() ? nlohmann::json(ex["options"].value(k, false) || v.get<bool>()) : v;
  }
  return ex;
}

TEST(CatalogOrder, EarlierCheckReportedFirst) {
  const auto& c = Catalog::embedded();
  int pairs = 0;
  for (const auto& a : c.entries()) {
    for (const auto& b : c.entries()) {
      if (a.op != b.op || a.check_order >= b.check_order || a.status != "active" || b.status != "active" ||
          a.severity != Severity::error || b.severity != Severity::error)
        continue;
      const auto ex = combine(a, b);
      if (!ex) continue;
      const OpContract* op = find_op_contract(a.op);
      ASSERT_NE(op, nullptr) << a.op;
      BuiltExample built;
      try {
        built = build_example(*ex);
      } catch (const CatalogError&) {
        continue;  // the two overrides do not compose (e.g. a shape and values for the old shape)
      }
      std::vector<Diagnostic> all;
      try {
        all = op->validate(built.bag, built.options);
      } catch (const std::exception& err) {
        ADD_FAILURE() << a.slug << " + " << b.slug << ": validate() threw " << err.what();
        continue;
      }
      auto reported = [&](const std::string& id) {
        return std::any_of(all.begin(), all.end(), [&](const Diagnostic& d) { return d.id == id; });
      };
      if (!reported(a.id) || !reported(b.id)) continue;  // one guards the other, or they interact
      ++pairs;
      const auto first = std::find_if(all.begin(), all.end(), [](const Diagnostic& d) { return d.severity == Severity::error; });
      try {
        op->check(built.bag, built.options);
        ADD_FAILURE() << a.slug << " + " << b.slug << ": check() did not throw";
      } catch (const Error& err) {
        EXPECT_EQ(err.id(), first->id) << a.slug << " + " << b.slug << ": check() and validate() disagree on the first error";
        const CatalogEntry* got = c.by_id(err.id());
        ASSERT_NE(got, nullptr);
        EXPECT_LE(got->check_order, a.check_order)
            << a.slug << " (checkOrder " << a.check_order << ") and " << b.slug << " (" << b.check_order
            << ") both fail, but check() reports " << got->slug << " (" << got->check_order << ")";
      }
    }
  }
  RecordProperty("pairs", pairs);
}

}  // namespace
}  // namespace kparity::test
