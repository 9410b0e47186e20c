// The Checker engine and the three entry-point forms, on a toy contract over the synthetic catalog.
#include <gtest/gtest.h>

#include "diagnostics/synthetic_catalog.hpp"
#include "kparity/diagnostics/checker.hpp"

namespace kparity::test {
namespace {

constexpr std::string_view kOp = "kda/replayssm_decode";

struct ToyArgs {
  bool bad_dtype = false, odd_index = false, bad_shape = false;
};

// Upstream order: dtype, then a warning, then shape (guarded: skipped when dtype failed).
void toy_contract(const ToyArgs& a, Checker& c) {
  if (a.bad_dtype && c.fail("aaaaaaaaaaaaaaa1", arg_loc("g_cache", "dtype"), {}, {"got torch.bfloat16"})) return;
  if (a.odd_index && c.fail("aaaaaaaaaaaaaaa4", arg_loc("write_pos", "[1]"), {{"arg", "write_pos"}, {"index", "3"}})) return;
  if (a.bad_shape && !a.bad_dtype && c.fail("aaaaaaaaaaaaaaa2", arg_loc("write_pos", ".shape[0]"), {{"shape", "(2,)"}})) return;
}

std::vector<std::string> ids(const std::vector<Diagnostic>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) out.push_back(d.id);
  return out;
}

TEST(Checker, FailBuildsLocationAndContextFrame) {
  ScopedCatalog scope;
  Checker c(kOp, Checker::Mode::all, {});
  EXPECT_FALSE(c.fail("aaaaaaaaaaaaaaa1", "arg[g_cache].dtype"));
  ASSERT_EQ(c.diagnostics().size(), 1u);
  const Diagnostic& d = c.diagnostics()[0];
  EXPECT_EQ(d.location, "kda/replayssm_decode::arg[g_cache].dtype");
  EXPECT_EQ(d.context, std::vector<std::string>{"while validating the inputs of kda/replayssm_decode"});
  EXPECT_TRUE(c.has_error());
  EXPECT_FALSE(c.stopped());
}

TEST(Checker, FirstErrorStopsButWarningsDoNot) {
  ScopedCatalog scope;
  Checker c(kOp, Checker::Mode::first_error, {});
  EXPECT_FALSE(c.fail("aaaaaaaaaaaaaaa4", "arg[write_pos][1]", {{"arg", "write_pos"}, {"index", "3"}}));
  EXPECT_FALSE(c.stopped());
  EXPECT_FALSE(c.has_error());
  EXPECT_TRUE(c.fail("aaaaaaaaaaaaaaa1", "arg[g_cache].dtype"));
  EXPECT_TRUE(c.stopped());
  EXPECT_TRUE(c.fail("aaaaaaaaaaaaaaa2", "arg[write_pos]", {{"shape", "(2,)"}})) << "still stopped";
  EXPECT_EQ(ids(c.diagnostics()), (std::vector<std::string>{"aaaaaaaaaaaaaaa4", "aaaaaaaaaaaaaaa1"}));
}

TEST(Checker, WarningsDroppedWhenDisabled) {
  ScopedCatalog scope;
  ValidateOptions o;
  o.warnings = false;
  Checker c(kOp, Checker::Mode::all, o);
  EXPECT_FALSE(c.fail("aaaaaaaaaaaaaaa4", "arg[write_pos][1]", {{"arg", "write_pos"}, {"index", "3"}}));
  EXPECT_TRUE(c.diagnostics().empty());
}

TEST(Checker, WaivedIdsCountAsPasses) {
  ScopedCatalog scope;
  const std::string_view waived[] = {"aaaaaaaaaaaaaaa1"};
  ValidateOptions o;
  o.waived = waived;
  Checker c(kOp, Checker::Mode::first_error, o);
  EXPECT_FALSE(c.fail("aaaaaaaaaaaaaaa1", "arg[g_cache].dtype")) << "a waived error neither stops nor is reported";
  EXPECT_FALSE(c.stopped());
  EXPECT_TRUE(c.diagnostics().empty());
  EXPECT_TRUE(c.fail("aaaaaaaaaaaaaaa2", "arg[write_pos]", {{"shape", "(2,)"}})) << "other ids still fail";
  // Through the entry points: the checks after a waived failure still run (the warning is reported),
  // and check() throws only for what is not waived.
  std::vector<Diagnostic> w;
  EXPECT_NO_THROW(w = run_check<ToyArgs>(kOp, &toy_contract, {true, true, false}, o));
  EXPECT_EQ(ids(w), (std::vector<std::string>{"aaaaaaaaaaaaaaa4"}));
  EXPECT_EQ(ids(run_validate<ToyArgs>(kOp, &toy_contract, {true, true, false}, {})),
            (std::vector<std::string>{"aaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaa4"})) << "without the waiver";
}

TEST(Checker, OptionsAccessors) {
  Checker c(kOp, Checker::Mode::all, ValidateOptions::strict(Entry::reference));
  EXPECT_TRUE(c.extra());
  EXPECT_TRUE(c.deep());
  EXPECT_TRUE(c.reference());
  EXPECT_EQ(c.op(), kOp);
  Checker u(kOp, Checker::Mode::all, ValidateOptions::upstream());
  EXPECT_FALSE(u.extra());
  EXPECT_FALSE(u.deep());
  EXPECT_FALSE(u.reference());
}

TEST(EntryPoints, ValidateCollectsAllInOrder) {
  ScopedCatalog scope;
  auto ds = run_validate<ToyArgs>(kOp, &toy_contract, {false, true, true}, {});
  EXPECT_EQ(ids(ds), (std::vector<std::string>{"aaaaaaaaaaaaaaa4", "aaaaaaaaaaaaaaa2"}));
  ds = run_validate<ToyArgs>(kOp, &toy_contract, {true, true, true}, {});
  EXPECT_EQ(ids(ds), (std::vector<std::string>{"aaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaa4"})) << "guarded check skipped";
  EXPECT_TRUE(run_validate<ToyArgs>(kOp, &toy_contract, {}, {}).empty());
}

TEST(EntryPoints, CheckThrowsTheFirstErrorAndReturnsWarnings) {
  ScopedCatalog scope;
  try {
    run_check<ToyArgs>(kOp, &toy_contract, {true, true, true}, {});
    FAIL();
  } catch (const ValueError& e) {
    EXPECT_EQ(e.id(), "aaaaaaaaaaaaaaa1");
    EXPECT_STREQ(e.what(), "`g_cache` must have dtype torch.float32.");
  }
  auto w = run_check<ToyArgs>(kOp, &toy_contract, {false, true, false}, {});
  EXPECT_EQ(ids(w), std::vector<std::string>{"aaaaaaaaaaaaaaa4"});
}

TEST(EntryPoints, StatusNeverThrows) {
  ScopedCatalog scope;
  Status s = run_status<ToyArgs>(kOp, &toy_contract, {false, false, true}, {});
  EXPECT_FALSE(s.ok());
  ASSERT_NE(s.first_error(), nullptr);
  EXPECT_EQ(s.first_error()->id, "aaaaaaaaaaaaaaa2");
  EXPECT_TRUE(run_status<ToyArgs>(kOp, &toy_contract, {}, {}).ok());
  // A contract naming an id the catalog lacks is a kparity bug: InternalError, still no throw.
  auto broken = +[](const ToyArgs&, Checker& c) { c.fail("ffffffffffffffff", "arg[x]"); };
  Status b = run_status<ToyArgs>(kOp, broken, {}, {});
  ASSERT_NE(b.first_error(), nullptr);
  EXPECT_EQ(b.first_error()->error_class, ErrorClass::InternalError);
}

TEST(ArgBag, Accessors) {
  ArgBag bag;
  bag.tensors["q"] = TensorView();
  bag.scalars["scale"] = 0.25;
  bag.flags["return_lse"] = true;
  EXPECT_NE(bag.tensor("q"), nullptr);
  EXPECT_EQ(bag.tensor("k"), nullptr);
  EXPECT_EQ(bag.scalar("scale"), 0.25);
  EXPECT_FALSE(bag.scalar("lower_bound").has_value());
  EXPECT_TRUE(bag.flag("return_lse"));
  EXPECT_FALSE(bag.flag("missing"));
  EXPECT_TRUE(bag.flag("missing", true));
  EXPECT_NO_THROW(bag.required("q"));
  try {
    bag.required("kv");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kv"), std::string::npos);
  }
}

TEST(ArgLoc, Forms) {
  EXPECT_EQ(arg_loc("g_cache"), "arg[g_cache]");
  EXPECT_EQ(arg_loc("g_cache", "dtype"), "arg[g_cache].dtype");
  EXPECT_EQ(arg_loc("g_cache", ".dtype"), "arg[g_cache].dtype");
  EXPECT_EQ(arg_loc("a", "shape[1]"), "arg[a].shape[1]");
  EXPECT_EQ(arg_loc("write_pos", "[3]"), "arg[write_pos][3]");
  EXPECT_EQ(arg_loc("x", ""), "arg[x]");
}

}  // namespace
}  // namespace kparity::test
