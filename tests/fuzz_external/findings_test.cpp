// Several findings per run, declared domains and shape presets of the implementation properties
// (fuzz/backends/findings.hpp, implementation.hpp, generators/presets.hpp), on backends made from
// the faithful reference with slips planted in C++: no plugin, no Python.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "fuzz_cli.hpp"
#include "kparity/fuzz/generators/presets.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

TEST(FindingSignature, MasksNumbersButNotWords) {
  EXPECT_EQ(mask_numbers("`write_pos` must have shape (3,)."), "`write_pos` must have shape (#,).");
  EXPECT_EQ(mask_numbers("got 1.5e-06 and -0x1f at 76:17"), "got # and -# at #:#");  // exponents, hex
  EXPECT_EQ(mask_numbers("must be int32 (got torch.float16), K=16"), "must be int32 (got torch.float16), K=#");
}

TEST(FindingSignature, TextRoundTripsAndTheIdNamesTheFailure) {
  FindingSignature s;
  s.cls = FailureClass::wrong_values;
  s.tensor = "out";
  s.kind = "values";
  s.edges = {"sentinel", "sink=-inf"};
  const auto back = FindingSignature::parse(s.text());
  ASSERT_TRUE(back);
  EXPECT_EQ(back->text(), s.text());
  EXPECT_EQ(s.text(), "wrong-values|out|values|sentinel,sink=-inf|");
  FindingSignature plain = s;
  plain.edges.clear();
  EXPECT_EQ(plain.id(), s.id());  // the id is the failure's, whatever its conditions
  FindingSignature lse = plain;
  lse.tensor = "lse";
  EXPECT_NE(lse.id(), s.id());
  EXPECT_FALSE(FindingSignature::parse("no such class|x|y||"));
  FindingSignature r;
  r.cls = FailureClass::rejected_valid_call;
  r.message = "ValueError: `q` must be contiguous | really";  // a bar in the message survives
  EXPECT_EQ(FindingSignature::parse(r.text())->message, r.message);
}

TEST(FindingSignature, CoversTheSameFailureWithAtLeastItsConditions) {
  FindingSignature known;
  known.cls = FailureClass::wrong_values;
  known.tensor = "out";
  known.kind = "values";
  known.edges = {"sentinel"};
  FindingSignature f = known;
  f.edges = {"T=0", "sentinel", "strided-q"};
  EXPECT_TRUE(known.covers(f));
  f.edges = {"strided-q"};
  EXPECT_FALSE(known.covers(f));  // without the sentinel: maybe another slip
  f.edges = {"sentinel"};
  f.tensor = "lse";
  EXPECT_FALSE(known.covers(f));
  EXPECT_TRUE(is_edge_bucket("sentinel"));
  EXPECT_TRUE(is_edge_bucket("T=0"));
  EXPECT_TRUE(is_edge_bucket("special:nan"));
  EXPECT_FALSE(is_edge_bucket("bf16"));
  EXPECT_FALSE(is_edge_bucket("K=64"));
  EXPECT_FALSE(is_edge_bucket("values=typical"));
  EXPECT_FALSE(is_edge_bucket("@drawn"));
}

// sparse/paged_decode from the faithful reference with two slips: `out` of every token after the
// first is the previous token's (T > 1), and lse is scaled by log2(e) (return_lse).
Backend two_slips() {
  Backend b = faithful_backend({"sparse/paged_decode"});
  b.name = "two-slips";
  b.run = [inner = b.run](Call& c) {
    inner(c);
    const TensorView out = c.at("out").view();
    for (I t = out.size(0) - 1; t >= 1; --t)
      for (I h = 0; h < out.size(1); ++h)
        for (I d = 0; d < out.size(2); ++d) out.store(std::array<I, 3>{t, h, d}, out.load(std::array<I, 3>{t - 1, h, d}));
    if (c.tensors.count("lse")) {
      const TensorView lse = c.at("lse").view();
      for_each_element(lse, [&](std::span<const I> i, I) { lse.store(i, lse.load(i) * 1.4426950408889634); });
    }
  };
  return b;
}

struct FindingsRun {
  PropertyFindings findings;
  std::shared_ptr<FindingLedger> ledger;
};

FindingsRun run_differential(const Backend& b, ImplPropertyOptions po, int cases, FindingRunOptions fo = {}) {
  po.kinds = {"differential"};
  po.ledgers = std::make_shared<std::map<std::string, std::shared_ptr<FindingLedger>>>();
  const auto props = implementation_properties(b, {spec_for(b.ops.front())}, po);
  EXPECT_EQ(props.size(), 1u);
  PropertyBudget budget;
  budget.cases = cases;
  FindingsRun r;
  r.ledger = po.ledgers->at(props[0].name);
  r.findings = run_property_findings(props[0], *r.ledger, budget, fo, "");
  return r;
}

TEST(SeveralFindings, TwoSlipsOnTwoTensorsAreBothFoundInOneRun) {
  const FindingsRun r = run_differential(two_slips(), {}, 150);
  const auto& f = r.findings.findings;
  ASSERT_EQ(f.size(), 2u) << r.findings.outcome.message;
  std::set<std::string> tensors;
  for (const auto& x : f) {
    EXPECT_EQ(x.signature.cls, FailureClass::wrong_values);
    tensors.insert(x.signature.tensor);
  }
  EXPECT_EQ(tensors, (std::set<std::string>{"out", "lse"}));
  EXPECT_FALSE(r.findings.outcome.passed);
  EXPECT_GE(r.findings.counters.judged, 150);  // the judged cases reach the budget after both
  EXPECT_GT(r.findings.counters.known_hits.at(f[0].signature.id()), 0);
  EXPECT_EQ(f[1].excluded_before.size(), 1u);  // its repro needs the first one excluded
}

TEST(SeveralFindings, KnownFindingsAreCountedNotReported) {
  const FindingsRun first = run_differential(two_slips(), {}, 150);
  ASSERT_EQ(first.findings.findings.size(), 2u);
  FindingRunOptions fo;
  fo.known = {first.findings.findings[0].signature.id(), first.findings.findings[1].signature.text()};
  const FindingsRun again = run_differential(two_slips(), {}, 100, fo);
  EXPECT_TRUE(again.findings.findings.empty());
  EXPECT_TRUE(again.findings.outcome.passed);
  EXPECT_GE(again.findings.counters.judged, 100);
  EXPECT_EQ(again.findings.counters.known_hits.size(), 2u);
}

TEST(DeclaredDomain, CallsOutsideAreNeverRunAndCounted) {
  Backend b = faithful_backend({"sparse/paged_decode"});
  auto ran = std::make_shared<std::int64_t>(0);
  b.run = [inner = b.run, ran](Call& c) {
    if (c.at("q").view().size(2) < 16) throw std::runtime_error("planted crash below D = 16");
    ++*ran;
    inner(c);
  };
  ImplPropertyOptions po;
  po.supports = [](const Call& c) { return c.at("q").view().size(2) >= 16 ? std::string() : std::string("D < 16"); };
  const FindingsRun r = run_differential(b, po, 100);
  EXPECT_TRUE(r.findings.outcome.passed) << r.findings.outcome.message;
  EXPECT_EQ(r.findings.counters.judged, 100);
  EXPECT_EQ(*ran, 100);
  const FindingCounters& c = r.findings.counters;
  EXPECT_GT(c.outside.at("D < 16"), 0);
  EXPECT_LT(c.coverage(), 1.0);
  EXPECT_EQ(c.drawn, 100 + c.outside_total());
}

TEST(ShapePresets, DrawTheModelsShapes) {
  const ShapePreset* v4 = find_shape_preset("deepseek-v4");
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(preset_mismatch(*v4, "sparse/paged_prefill"), "");
  EXPECT_NE(preset_mismatch(*v4, "kda/recurrent"), "");
  EXPECT_EQ(find_shape_preset("gpt"), nullptr);
  Backend b = faithful_backend({"sparse/paged_decode"});
  auto shapes = std::make_shared<std::set<std::array<I, 3>>>();
  ImplPropertyOptions po;
  po.preset = v4;
  po.supports = [shapes](const Call& c) {
    const TensorView q = c.at("q").view();
    shapes->insert({q.size(0), q.size(1), q.size(2)});
    EXPECT_EQ(q.dtype, DType::bf16);
    EXPECT_EQ(c.at("attn_sink").dtype(), DType::f32);
    return std::string();
  };
  const FindingsRun r = run_differential(b, po, 3);
  EXPECT_TRUE(r.findings.outcome.passed) << r.findings.outcome.message;
  for (const auto& s : *shapes) {
    EXPECT_LE(s[0], 2);
    EXPECT_TRUE(s[1] == 64 || s[1] == 128) << s[1];
    EXPECT_EQ(s[2], 512);
  }
  // Every token selects its top-k rows and the window.
  std::vector<I> idx, ptr;
  preset_index_lists(*v4->sparse, PresetList::decode, 512, 2, 650, 7, idx, ptr);
  ASSERT_EQ(ptr.size(), 3u);
  EXPECT_EQ(ptr[1] - ptr[0], 512 + 128);
  EXPECT_EQ(std::set<I>(idx.begin(), idx.begin() + ptr[1]).size(), static_cast<std::size_t>(640));  // distinct rows
}

#if defined(KPARITY_CLI_PATH) && defined(KPARITY_EXAMPLE_CPU_IMPL)
std::pair<int, std::string> cli(const std::string& args) { return test::fuzz_cli(args); }

TEST(FuzzImplCli, PresetsAndSeveralFindings) {
  const auto corpus = std::filesystem::temp_directory_path() / "kparity-fuzz-findings-cli";
  std::filesystem::remove_all(corpus);
  const std::string impl = std::string("--impl ") + KPARITY_EXAMPLE_CPU_IMPL + " --corpus " + corpus.string();
  auto [status, out] = cli(impl + " --preset deepseek-v4 --cases 2");  // the plugin has KDA ops too
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("preset deepseek-v4 has shapes for sparse/* only, not kda/recurrent"), std::string::npos) << out;
  std::tie(status, out) = cli(impl + " --preset kimi-linear --op kda/packed_decode --cases 3");
  EXPECT_EQ(status, 0) << out;
  const std::map<std::string, std::string> plugins = KPARITY_TEST_PLANTED_PLUGINS;
  const auto report = corpus / "report.json";
  std::tie(status, out) = cli("--impl " + plugins.at("wrong-values") + " --op kda/packed_decode --cases 40 " +
                              "--max-findings 2 --corpus " + corpus.string() + " --report " + report.string());
  EXPECT_EQ(status, 1) << out;
  EXPECT_NE(out.find("finding 1 ["), std::string::npos) << out;
  EXPECT_NE(out.find("coverage 100% of"), std::string::npos) << out;
  std::ifstream f(report);
  const auto j = nlohmann::json::parse(f);
  EXPECT_FALSE(j.at("properties").at(0).at("findings").empty());
  std::filesystem::remove_all(corpus);
}
#endif

}  // namespace
}  // namespace kparity::fuzz
