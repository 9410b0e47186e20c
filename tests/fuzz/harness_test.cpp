// The fuzz harness itself: the shared differential rule, device-memory hygiene checks, the
// campaign's budgets, failure handling (repro, shrunk corpus dump), the JSON report and corpus
// replay. Uses its own small paged_decode spec (decode_spec.hpp), not the op generators.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "decode_spec.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/fuzz/backends/guard.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/campaign/report.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/properties/differential.hpp"

namespace {

using namespace kpt;
namespace fs = std::filesystem;

const std::string kOp = "sparse/paged_decode";

fs::path scratch(const std::string& name) {
  auto d = fs::temp_directory_path() / ("kparity_fuzz_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Call sample_call(bool lse = true) { return decode_call(2, 4, 5, {{0, 3, 3}, {}, {4, 1}}, 7, lse); }

// The faithful reference with one element of `out` moved by `delta` afterwards.
Backend perturbing_backend(double delta, std::int64_t flat = 2) {
  Backend faithful = faithful_backend({kOp});
  return Backend{"perturbed", {kOp}, [faithful, delta, flat](Call& c) {
                   faithful.run(c);
                   const TensorView out = c.at("out").view();
                   out.store_flat(flat, out.load_flat(flat) + delta);
                 }};
}

const TensorError& tensor_error(const DifferentialResult& r, const std::string& name) {
  for (const auto& e : r.tensors)
    if (e.name == name) return e;
  throw std::out_of_range(name);
}

// ---------------------------------------------------------------------------------------------
// The differential rule

TEST(DifferentialRule, FaithfulReferenceAsBackendPasses) {
  const OpFuzzSpec spec = decode_spec();
  const DifferentialResult r = differential(sample_call(), faithful_backend({kOp}), spec);
  EXPECT_TRUE(r.pass) << r.detail;
  ASSERT_EQ(r.tensors.size(), 2u);
  const TensorError& out = tensor_error(r, "out");
  // err_b == err_f by construction, and the oracle was kept in fp32, so the faithful model's bf16
  // rounding is visible as a non-zero error.
  EXPECT_EQ(out.backend, out.faithful);
  EXPECT_GT(out.faithful, 0.0);
  EXPECT_EQ(out.floor, 1e-2);
  // The bound reported is the rule's allowance at the worst element: the largest of 2 err_f, the
  // floor and the a-priori term there (since the ziggurat normal's draws of 2026-12-05, this call's
  // a-priori term is the largest; before, the floor was).
  EXPECT_EQ(out.bound, std::max({2 * out.faithful, out.floor, out.apriori}));
  EXPECT_GE(out.bound, std::max(2 * out.faithful, out.floor));
}

TEST(DifferentialRule, OneElementBeyondTheBoundFails) {
  const OpFuzzSpec spec = decode_spec();
  const DifferentialResult r = differential(sample_call(), perturbing_backend(0.5, 2), spec);
  EXPECT_FALSE(r.pass);
  EXPECT_FALSE(tensor_error(r, "out").pass);
  EXPECT_TRUE(tensor_error(r, "lse").pass);
  EXPECT_GT(tensor_error(r, "out").backend, 0.45);
  // Flat element 2 of out [3, 2, 4] is [0, 0, 2]; the detail names the tensor and the element.
  EXPECT_NE(r.detail.find("out: |b-o|"), std::string::npos) << r.detail;
  EXPECT_NE(r.detail.find("at [0, 0, 2]"), std::string::npos) << r.detail;
}

TEST(DifferentialRule, ADeviationWithinTheFloorPasses) {
  // Well inside the 1e-2 floor, which dominates 2 * err_f for these bf16 outputs.
  const DifferentialResult r = differential(sample_call(), perturbing_backend(1e-3, 5), decode_spec());
  EXPECT_TRUE(r.pass) << r.detail;
}

TEST(DifferentialRule, AnUnwrittenOutputFails) {
  const Backend lazy{"lazy", {kOp}, [](Call&) {}};  // leaves the NaN poison in place
  const DifferentialResult r = differential(sample_call(), lazy, decode_spec());
  EXPECT_FALSE(r.pass);
  EXPECT_TRUE(tensor_error(r, "out").mismatch);
  EXPECT_NE(r.detail.find("class mismatch"), std::string::npos) << r.detail;
}

TEST(DifferentialRule, ANaNInTheDenominatorGivesTheZeroHeadAndOnlyThatAgrees) {
  // Upstream's finalisation (docs/upstream_conventions.md, measured on sglang's prefill and decode):
  // a NaN logit makes the softmax's sum NaN, `Z > 0` fails and the head is written as zeros.
  Call c = sample_call();
  c.at("q").view().store_flat(0, std::nan(""));  // token 0, head 0: every logit NaN
  c.options.deep = false;                         // strict data checks refuse non-finite q
  const Call o = run_oracle(c);
  ASSERT_EQ(o.at("out").view().at({0, 0, 0}), 0.0);
  const DifferentialResult r = differential(c, faithful_backend({kOp}), decode_spec());
  EXPECT_TRUE(r.pass) << r.detail;
  // A backend that propagates the NaN instead (the spec's superseded C.3 row) disagrees.
  const Backend propagate{"propagate", {kOp}, [](Call& x) {
                            faithful_backend({kOp}).run(x);
                            x.at("out").view().store_flat(0, std::nan(""));
                          }};
  EXPECT_FALSE(differential(c, propagate, decode_spec()).pass);
}

// A one-tensor call "y" of n f32 elements with a 0.1 floor, for judge() on chosen values.
struct Synthetic {
  Call in;
  OpFuzzSpec spec;
  explicit Synthetic(std::int64_t n) {
    in.op = "synthetic";
    in.tensors["y"] = Tensor(DType::f32, {n});
    in.written = {"y"};
    spec.abs_floor = [](const Call&, std::string_view, const Call*) { return 0.1; };
  }
  Call operator()(const std::vector<double>& v) const {
    Call c = in;
    for (std::size_t i = 0; i < v.size(); ++i) c.at("y").view().store_flat(static_cast<std::int64_t>(i), v[i]);
    return c;
  }
};

TEST(DifferentialRule, JudgeTakesTheLargerOfTwiceFaithfulAndTheFloor) {
  const Synthetic with(4);
  const Call& in = with.in;
  const OpFuzzSpec& spec = with.spec;
  const Call o = with({1, 2, 3, 4});
  // Faithful exact: the floor decides.
  EXPECT_TRUE(judge(in, o, o, with({1, 2, 3.09, 4}), spec).pass);
  EXPECT_FALSE(judge(in, o, o, with({1, 2, 3.11, 4}), spec).pass);
  // Faithful 0.25 off: 2 * 0.25 decides.
  const Call f = with({1, 2.25, 3, 4});
  EXPECT_TRUE(judge(in, o, f, with({1.49, 2, 3, 4}), spec).pass);
  const DifferentialResult r = judge(in, o, f, with({1.51, 2, 3, 4}), spec);
  EXPECT_FALSE(r.pass);
  EXPECT_DOUBLE_EQ(r.tensors[0].bound, 0.5);
  EXPECT_NE(r.detail.find("at [0]"), std::string::npos) << r.detail;
  // Inf must match Inf of the same sign; -0 equals +0.
  const Call oi = with({INFINITY, -0.0, 3, 4});
  EXPECT_TRUE(judge(in, oi, oi, with({INFINITY, 0.0, 3, 4}), spec).pass);
  EXPECT_FALSE(judge(in, oi, oi, with({-INFINITY, 0.0, 3, 4}), spec).pass);
}

// The oracle as the rule runs it (run_oracle) sums exactly (reference/exact_sum.hpp): q = (1, 1, 1)
// against the key (2^100, 1, -2^100) has the logit 1, which fp64 in index order (2^100 + 1 rounds
// to 2^100) and fp32 both lose. One key and a -inf sink: lse is the logit itself.
TEST(Oracle, SumsCancellingProductsExactly) {
  Call c = decode_call(1, 3, 1, {{0}}, 1, true);
  const std::vector<double> key = {0x1p100, 1.0, -0x1p100};
  for (std::int64_t d = 0; d < 3; ++d) {
    c.at("q").view().store_flat(d, 1.0);
    c.at("unified_kv").view().store_flat(d, key[static_cast<std::size_t>(d)]);
  }
  c.at("attn_sink").view().store_flat(0, -INFINITY);
  c.scalars["softmax_scale"] = 1.0;
  const Call o = run_oracle(c), f = run_faithful(c);
  EXPECT_EQ(o.at("lse").view().load_flat(0), 1.0) << "the oracle's q.k is not the exact 1";
  EXPECT_EQ(f.at("lse").view().load_flat(0), 0.0) << "fp32 in index order loses the 1 (the case needs a cancellation)";
  for (std::int64_t d = 0; d < 3; ++d) EXPECT_EQ(o.at("out").view().load_flat(d), key[static_cast<std::size_t>(d)]);
}

TEST(DifferentialRule, NaNAgreesWithEitherInfinityButFiniteNeverAgreesWithNonFinite) {
  const Synthetic with(3);
  const Call& in = with.in;
  const OpFuzzSpec& spec = with.spec;
  // 0 * Inf is NaN in one association of a sum of products and Inf in another: agreement.
  const Call on = with({NAN, INFINITY, 1});
  EXPECT_TRUE(judge(in, on, on, with({INFINITY, NAN, 1}), spec).pass);
  EXPECT_TRUE(judge(in, on, on, with({-INFINITY, NAN, 1}), spec).pass);
  // The faithful model's class counts too: o finite, f overflowed to +Inf, b +Inf or NaN.
  const Call of = with({1, 2, 1}), ff = with({1, INFINITY, 1});
  EXPECT_TRUE(judge(in, of, ff, with({1, INFINITY, 1}), spec).pass);
  EXPECT_TRUE(judge(in, of, ff, with({1, NAN, 1}), spec).pass);
  EXPECT_FALSE(judge(in, of, ff, with({1, -INFINITY, 1}), spec).pass);
  // A finite backend value where both references are non-finite, or the reverse, fails.
  EXPECT_FALSE(judge(in, on, on, with({0, INFINITY, 1}), spec).pass);
  EXPECT_FALSE(judge(in, of, of, with({1, 2, NAN}), spec).pass);
}

// ---------------------------------------------------------------------------------------------
// Device-memory hygiene (the host half of the CUDA backend's guard bands)

TEST(GuardBands, AnIntactBandPassesAndAChangedByteIsNamed) {
  const auto pattern = guard_pattern(DType::f32);
  std::vector<std::byte> band(kGuardBytes);
  fill_guard(band, pattern);
  EXPECT_EQ(check_guard("out", "guard band after", band, pattern), "");
  band[17] = std::byte{0};
  band[40] = std::byte{1};
  EXPECT_EQ(check_guard("out", "guard band after", band, pattern),
            "guard band after of `out` overwritten: 2 of 256 bytes changed, first at byte 17");
}

TEST(GuardBands, FloatPatternsAreNaN) {
  for (DType t : {DType::f32, DType::f16, DType::bf16}) {
    auto p = guard_pattern(t);
    ASSERT_EQ(p.size(), dtype_size(t));
    Tensor x(t, {1});
    std::copy(p.begin(), p.end(), x.storage().begin());
    EXPECT_TRUE(std::isnan(x.view().load_flat(0))) << dtype_name(t);
  }
}

TEST(GuardBands, PaddingOfAWrittenTensorAndAnyByteOfAnInputAreChecked) {
  // [2, 3] f32 with row stride 4: one padding element per row, the span is 7 elements.
  Tensor t = Tensor::strided(DType::f32, {2, 3}, {4, 1});
  const TensorView v = t.view();
  std::vector<std::byte> before(7 * 4, std::byte{0x11}), after = before;
  after[4 * 4] = std::byte{0x22};  // element [1, 0] (offset 4)
  EXPECT_EQ(check_untouched("state", v, true, before, after), "");
  EXPECT_EQ(check_untouched("state", v, false, before, after),
            "`state`: 1 input bytes changed by the run, first at byte 16 of its memory span");
  after = before;
  after[3 * 4 + 1] = std::byte{0x22};  // offset 3: the padding after row 0
  EXPECT_EQ(check_untouched("state", v, true, before, after),
            "`state`: 1 padding (non-element) bytes changed by the run, first at byte 13 of its memory span");
}

// ---------------------------------------------------------------------------------------------
// Campaign: budgets, failures, report

Property differential_of(const Backend& b) { return differential_property(decode_spec(), b, false); }

Property sleeper(const std::string& name) {
  Property p;
  p.name = name;
  p.kind = "test";
  p.body = [] { std::this_thread::sleep_for(std::chrono::milliseconds(2)); };
  return p;
}

TEST(Campaign, TimeBudgetIsWallClock) {
  PropertyBudget b;
  b.seconds = 0.3;
  const PropertyOutcome o = run_property(sleeper("sleep"), b);
  EXPECT_TRUE(o.passed);
  EXPECT_GE(o.seconds, 0.3);
  EXPECT_LT(o.seconds, 0.45);  // about one case over, not one chunk (100 cases would be 0.2 s)
  EXPECT_GT(o.cases, 50);

  CampaignOptions c;
  c.seconds = 0.6;
  c.corpus_dir.clear();
  std::ostringstream log;
  const CampaignResult r = run_campaign({sleeper("a"), sleeper("b"), sleeper("c")}, c, {}, log);
  EXPECT_TRUE(r.passed());
  EXPECT_GE(r.seconds, 0.6);
  EXPECT_LT(r.seconds, 0.8);
  // Each property gets its share of what is left (0.2 s); 0.1 s of slack absorbs a loaded CI machine's
  // scheduling delays and still tells a shared budget from one property taking it all (0.6 s).
  for (const auto& p : r.properties) EXPECT_NEAR(p.seconds, 0.2, 0.1) << p.name;
}

TEST(Campaign, CasesBudgetIsExact) {
  PropertyBudget b;
  b.cases = 250;  // chunks of 100, 100, 50
  EXPECT_EQ(run_property(sleeper("s"), b).cases, 250);
}

TEST(Campaign, AFailureIsShrunkReproducedAndSavedToTheCorpus) {
  const fs::path dir = scratch("fail");
  // Wrong on every token after the first: the minimal counterexample has exactly two tokens.
  const Backend buggy{"buggy", {kOp}, [](Call& c) {
                        faithful_backend({kOp}).run(c);
                        const TensorView out = c.at("out").view();
                        if (out.size(0) >= 2) out.store(std::array<std::int64_t, 3>{1, 0, 0}, 100.0);
                      }};
  CampaignOptions opt;
  opt.cases = 200;
  opt.corpus_dir = dir.string();
  std::ostringstream log;
  const CampaignResult r = run_campaign({differential_of(faithful_backend({kOp})), differential_of(buggy)}, opt,
                                        {{"reference", true, ""}, {"cuda", false, "no CUDA device"}}, log);
  EXPECT_FALSE(r.passed());
  ASSERT_EQ(r.properties.size(), 2u);
  EXPECT_TRUE(r.properties[0].passed);
  const PropertyOutcome& o = r.properties[1];
  ASSERT_FALSE(o.passed);
  EXPECT_EQ(o.name, "sparse/paged_decode/differential/buggy");
  EXPECT_EQ(o.repro, "kparity fuzz --op sparse/paged_decode --property sparse/paged_decode/differential/buggy --seed " +
                         fmt::format("0x{:x}", o.seed) + " --cases " + std::to_string(o.repro_cases));
  const std::string text = log.str();
  EXPECT_NE(text.find("FAIL sparse/paged_decode/differential/buggy"), std::string::npos) << text;
  EXPECT_NE(text.find("  repro: " + o.repro), std::string::npos) << text;
  EXPECT_NE(text.find("cuda: skipped, no CUDA device"), std::string::npos) << text;
  EXPECT_NE(text.find("1 of 2 properties held"), std::string::npos) << text;

  // The saved call is the shrunk one: two tokens (RapidCheck re-ran the minimum last).
  ASSERT_TRUE(o.failing_call.has_value());
  EXPECT_EQ(o.failing_call->at("q").shape()[0], 2);
  ASSERT_TRUE(fs::exists(o.saved)) << o.saved;
  const Call saved = load_call(o.saved);
  EXPECT_EQ(saved.at("q").shape(), o.failing_call->at("q").shape());
  EXPECT_EQ(saved.at("q").storage(), o.failing_call->at("q").clone_contiguous().storage());

  // The repro line's seed and case count fail again, on the same minimal call.
  const PropertyOutcome again = run_property(differential_of(buggy), o.seed, o.repro_cases, 100, true);
  EXPECT_FALSE(again.passed);
  EXPECT_EQ(again.cases, o.cases % 100);
  ASSERT_TRUE(again.failing_call.has_value());
  EXPECT_EQ(again.failing_call->at("q").storage(), o.failing_call->at("q").storage());

  // As a regression case it replays cleanly on the correct reference, and the bug is caught again.
  EXPECT_TRUE(replay_file(o.saved, {}).passed);
  const ReplayOutcome bad = replay_file(o.saved, {buggy});
  EXPECT_FALSE(bad.passed);
  ASSERT_EQ(bad.problems.size(), 1u);
  EXPECT_NE(bad.problems[0].find("buggy breaks the differential rule: out:"), std::string::npos) << bad.problems[0];
  fs::remove_all(dir);
}

TEST(Campaign, SelectionByOpBackendAndName) {
  std::vector<Property> all{differential_of(faithful_backend({kOp})), sleeper("kda/packed_decode/x"), sleeper("catalog/y")};
  CampaignOptions o;
  o.ops = {"sparse"};
  EXPECT_EQ(select_properties(all, o).size(), 1u);
  o.ops = {"kda/packed_decode"};
  ASSERT_EQ(select_properties(all, o).size(), 1u);
  EXPECT_EQ(op_of(select_properties(all, o)[0]), "kda/packed_decode");
  o.ops = {};
  o.backend = "reference";
  EXPECT_EQ(select_properties(all, o).size(), 2u);
  o.backend = "all";
  o.property = "catalog/y";
  EXPECT_EQ(select_properties(all, o).size(), 1u);
  o.property = "nope";
  EXPECT_THROW(select_properties(all, o), std::invalid_argument);
  o.property.clear();
  o.ops = {"kda/recurrent"};
  EXPECT_THROW(select_properties(all, o), std::invalid_argument);
}

TEST(Report, HasEveryFieldAndZeroCountBuckets) {
  CampaignOptions opt;
  opt.cases = 30;
  opt.seed = 0x1234;
  opt.corpus_dir.clear();
  std::ostringstream log;
  const CampaignResult r = run_campaign({differential_of(faithful_backend({kOp}))}, opt,
                                        {{"reference", true, ""}, {"cuda", false, "no CUDA device"}}, log);
  ASSERT_TRUE(r.passed()) << log.str();
  const nlohmann::json j = report_json(r);
  EXPECT_EQ(j["seed"], "0x1234");
  EXPECT_EQ(j["budget"]["cases"], 30);
  EXPECT_EQ(j["budget"]["max_size"], 100);
  ASSERT_EQ(j["backends"].size(), 2u);
  EXPECT_EQ(j["backends"][1]["name"], "cuda");
  EXPECT_EQ(j["backends"][1]["available"], false);
  EXPECT_EQ(j["backends"][1]["reason"], "no CUDA device");
  EXPECT_EQ(j["totals"]["properties"], 1);
  EXPECT_EQ(j["totals"]["passed"], 1);
  EXPECT_EQ(j["totals"]["failed"], 0);
  EXPECT_EQ(j["totals"]["cases"], 30);
  ASSERT_EQ(j["properties"].size(), 1u);
  const auto& p = j["properties"][0];
  for (const char* key : {"name", "op", "kind", "backend", "cases", "discarded", "passed", "seed", "seconds",
                          "cases_per_minute", "buckets", "max_errors"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_EQ(p["name"], "sparse/paged_decode/differential/faithful");
  EXPECT_EQ(p["op"], kOp);
  EXPECT_EQ(p["kind"], "differential");
  EXPECT_EQ(p["backend"], "faithful");
  EXPECT_EQ(p["cases"], 30);
  EXPECT_GT(p["cases_per_minute"].get<double>(), 0.0);
  // Every bucket of the spec is listed: the one the generator never notes with a zero.
  EXPECT_EQ(p["buckets"].size(), decode_spec().buckets.size());
  EXPECT_EQ(p["buckets"]["never-drawn"], 0);
  EXPECT_GT(p["buckets"]["lse"].get<int>(), 0);
  for (const char* key : {"backend", "faithful", "bound", "ratio"}) EXPECT_TRUE(p["max_errors"]["out"].contains(key)) << key;
  // The faithful model used exactly its own error: at most half the bound.
  EXPECT_LE(p["max_errors"]["out"]["ratio"].get<double>(), 0.5);
  EXPECT_FALSE(p.contains("repro"));

  const fs::path dir = scratch("report");
  write_report(r, (dir / "r.json").string());
  std::ifstream f(dir / "r.json");
  EXPECT_EQ(nlohmann::json::parse(f), j);
  fs::remove_all(dir);
}

// ---------------------------------------------------------------------------------------------
// Corpus

TEST(Campaign, AFailureIsShrunkToTheMinimalValue) {
  // Fails from 1000 up: a shrinking runner reports exactly 1000, whatever value it first hit.
  Property p;
  p.name = "synthetic/fails-from-1000";
  p.body = [] {
    const int v = *rc::gen::inRange(0, 1000000);
    if (v >= 1000) RC_FAIL("v=" + std::to_string(v) + " ");
  };
  const PropertyOutcome r = run_property(p, 11, 100, 100, true);
  ASSERT_FALSE(r.passed);
  EXPECT_NE(r.message.find("v=1000 "), std::string::npos) << r.message;
}

TEST(Campaign, EarlyReturnsAndDiscardsAreCountedAndBounded) {
  // Case k of a chunk is unchecked when its drawn value is 0 mod 4 (early return) or 1 mod 4
  // (RC_DISCARD): about half the drawn cases, far past the default bound of 0.10.
  Property p;
  p.name = "synthetic/half-unchecked";
  p.body = [] {
    const int v = *rc::gen::inRange(0, 1000);
    if (v % 4 == 0) return note_early_return("v = 0 mod 4");
    RC_PRE(v % 4 != 1);
  };
  const PropertyOutcome r = run_property(p, 7, 200, 100, true);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.cases, 200);  // passing cases, early returns among them
  EXPECT_GT(r.early_returns, 20);
  EXPECT_GT(r.discarded - r.early_returns, 20);
  EXPECT_NEAR(r.discard_share(), 0.5, 0.15);
  EXPECT_NE(r.message.find("early returns): share"), std::string::npos) << r.message;
  // A bound that says why it allows more lets the same property pass.
  p.max_discard_share = 0.7;
  p.discard_why = "synthetic";
  const PropertyOutcome ok = run_property(p, 7, 200, 100, true);
  EXPECT_TRUE(ok.passed) << ok.message;
  EXPECT_EQ(ok.early_returns, r.early_returns);
}

TEST(Corpus, SaveLoadReplayRoundTrip) {
  const fs::path dir = scratch("corpus");
  Call c = sample_call();
  c.scalars["softmax_scale"] = 0.1;  // not a short decimal: must come back bit for bit
  c.description = "three tokens";
  const std::string path = save_call(c, dir.string(), "case", {{"property", "p"}});
  EXPECT_EQ(path, (dir / "case.safetensors").string());

  // The file follows `kparity run`'s convention.
  const SafetensorsFile f = read_safetensors(path);
  EXPECT_EQ(f.metadata.at("op"), kOp);
  EXPECT_EQ(f.metadata.at("return_lse"), "true");
  EXPECT_EQ(f.metadata.at("kparity.property"), "p");
  EXPECT_TRUE(f.tensors.count("expected.out"));
  EXPECT_TRUE(f.tensors.count("expected.lse"));
  EXPECT_EQ(f.tensors.at("expected.out").dtype(), DType::f32);  // the oracle, not rounded to bf16

  std::map<std::string, Tensor> expected;
  const Call back = load_call(path, &expected);
  EXPECT_EQ(back.op, c.op);
  EXPECT_EQ(back.scalars, c.scalars);
  EXPECT_EQ(back.flags, c.flags);
  EXPECT_EQ(back.written, c.written);
  EXPECT_EQ(back.pure_outputs, c.pure_outputs);
  EXPECT_EQ(back.description, "three tokens");
  ASSERT_EQ(back.tensors.size(), c.tensors.size());
  for (const auto& [name, t] : c.tensors) {
    EXPECT_EQ(back.at(name).dtype(), t.dtype()) << name;
    EXPECT_EQ(back.at(name).storage(), t.storage()) << name;
  }
  EXPECT_EQ(expected.size(), 2u);

  const ReplayOutcome ok = replay_file(path, {faithful_backend({kOp})});
  EXPECT_TRUE(ok.passed);
  EXPECT_EQ(ok.checks, (std::vector<std::string>{"validates", "deterministic", "expected", "differential/faithful"}));

  // A saved expected.* that today's oracle no longer reproduces is a regression.
  Call wrong = run_oracle(c);
  wrong.at("out").view().store_flat(3, wrong.at("out").view().load_flat(3) + 1.0);
  write_call(c, (dir / "moved.safetensors").string(), &wrong);
  const ReplayOutcome moved = replay_file((dir / "moved.safetensors").string(), {});
  EXPECT_FALSE(moved.passed);
  ASSERT_EQ(moved.problems.size(), 1u);
  // write_call without info says nothing of where expected.* came from: the finding names what was
  // compared and the rule, and does not presume the oracle moved (tests/fuzz_corpus/
  // expected_origin_test.cpp covers both origins).
  EXPECT_NE(moved.problems[0].find("the saved expected.* (b below) against today's oracle o, by the differential rule"),
            std::string::npos)
      << moved.problems[0];
  EXPECT_NE(moved.problems[0].find("): out:"), std::string::npos) << moved.problems[0];

  // A call its contract rejects is reported as such, and nothing else is run.
  Call invalid = c;
  invalid.at("kv_indices").view().store_flat(0, 99.0);
  write_call(invalid, (dir / "invalid.safetensors").string());
  const ReplayOutcome bad = replay_file((dir / "invalid.safetensors").string(), {});
  EXPECT_FALSE(bad.passed);
  ASSERT_FALSE(bad.problems.empty());
  EXPECT_EQ(bad.problems[0].rfind("does not validate: ", 0), 0u) << bad.problems[0];
  EXPECT_TRUE(bad.checks.empty());

  std::ostringstream out;
  EXPECT_EQ(replay_corpus(dir.string(), {}, out), 1);
  EXPECT_NE(out.str().find("1 of 3 corpus dumps replayed cleanly"), std::string::npos) << out.str();
  EXPECT_EQ(corpus_files(path), std::vector<std::string>{path});
  std::ostringstream none;
  EXPECT_EQ(replay_corpus((dir / "empty").string(), {}, none), 1);
  fs::remove_all(dir);
}

TEST(Corpus, LoadingAddsOnlyTheOutputsTheOpCannotRunWithout) {
  // kda/recurrent without final_state: `kparity run`'s loader allocates one, but the saved call
  // had none, and replaying it must not grow an output.
  Call c;
  c.op = "kda/recurrent";
  const std::int64_t T = 2, H = 1, K = 4, V = 4;
  for (const char* n : {"q", "k"}) c.tensors[n] = Tensor(DType::f32, {T, H, K}), c.tensors[n].fill_normal(3, 0.0, 0.5);
  c.tensors["v"] = Tensor(DType::f32, {T, H, V});
  c.tensors["v"].fill_normal(4, 0.0, 1.0);
  c.tensors["g"] = Tensor(DType::f32, {T, H, K});
  c.tensors["g"].fill_uniform(5, -0.5, 0.0);
  c.tensors["beta"] = Tensor(DType::f32, {T, H});
  c.tensors["beta"].fill_uniform(6, 0.1, 0.9);
  c.tensors["out"] = Tensor(DType::f32, {T, H, V});
  c.scalars["scale"] = 0.5;
  c.written = {"out"};
  c.pure_outputs = {"out"};
  const fs::path dir = scratch("optional");
  const std::string path = save_call(c, dir.string(), "recurrent");
  const Call back = load_call(path);
  EXPECT_EQ(back.tensors.count("final_state"), 0u);
  EXPECT_EQ(back.written, std::vector<std::string>{"out"});
  EXPECT_TRUE(replay_file(path, {}).passed);

  // A dump without `out` (upstream allocates it) gets one: the op cannot run without it.
  Call no_out = c;
  no_out.tensors.erase("out");
  write_call(no_out, (dir / "no_out.safetensors").string());
  const Call with_out = load_call((dir / "no_out.safetensors").string());
  EXPECT_EQ(with_out.tensors.count("out"), 1u);
  EXPECT_EQ(with_out.written, std::vector<std::string>{"out"});
  fs::remove_all(dir);
}

}  // namespace
