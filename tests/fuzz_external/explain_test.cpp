// The explain step after shrinking (fuzz/campaign/explain.hpp, issue 33), on backends made from the
// faithful reference with one slip planted each: every slip comes out as one finding whose needed
// set names what the slip depends on, and the first bad element's provenance says where it is.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <cmath>
#include <functional>
#include <set>
#include <span>
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <rapidcheck.h>

#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/campaign/explain.hpp"
#include "kparity/fuzz/corpus/corpus.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "fuzz_cli.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

// sparse/paged_decode run by the faithful model on a rewritten copy of the call, the outputs copied
// back: how a slip in what the kernel reads is planted.
Backend reading(const std::string& name, std::function<void(Call&)> rewrite) {
  Backend inner = faithful_backend({"sparse/paged_decode"});
  Backend b = inner;
  b.name = name;
  b.run = [run = inner.run, rewrite](Call& c) {
    Call m = c;
    rewrite(m);
    run(m);
    for (const auto& n : c.written) copy_convert(m.at(n).view(), c.at(n).view());
  };
  return b;
}

// `op` run by the faithful model, then its outputs changed by `slip`: how a slip in what the kernel
// writes is planted.
Backend writing(const std::string& op, const std::string& name, std::function<void(Call&)> slip) {
  Backend inner = faithful_backend({op});
  Backend b = inner;
  b.name = name;
  b.run = [run = inner.run, slip](Call& c) {
    run(c);
    slip(c);
  };
  return b;
}

// Leaves out the last selected key of every token with five or more keys.
Backend drops_fifth_key() {
  return reading("drops-fifth-key", [](Call& m) {
    const auto s = sparse_fuzz::sources_of(m.op).front();
    auto lists = sparse_fuzz::read_lists(m, s);
    for (auto& l : lists)
      if (l.size() >= 5) l.pop_back();
    sparse_fuzz::write_lists(m, s, lists);
  });
}

// Reads a +inf sink as -inf (no sink), where upstream's +inf sink zeroes the output.
Backend ignores_inf_sink() {
  return reading("ignores-inf-sink", [](Call& m) {
    const TensorView s = m.at("attn_sink").view();
    for (I h = 0; h < s.numel(); ++h)
      if (s.load(std::array<I, 1>{h}) == INFINITY) s.store(std::array<I, 1>{h}, -INFINITY);
  });
}

// Reads q's storage as if q were contiguous at offset 0: right for compact q only.
Backend ignores_q_strides() {
  return reading("ignores-q-strides", [](Call& m) {
    const Tensor& q = m.at("q");
    if (q.view().is_contiguous() && q.storage_offset() == 0) return;
    m.options.deep = false;  // the padding it reads is NaN: let it flow into the output
    Tensor flat(q.dtype(), q.shape());
    const std::size_t n = static_cast<std::size_t>(q.view().numel()) * q.view().element_size();
    std::copy_n(q.storage().data(), std::min(n, q.storage().size()), flat.storage().data());
    m.tensors["q"] = std::move(flat);
  });
}

PropertyFindings run(const Backend& b, int cases, FindingRunOptions fo = {}, const std::string& op = "sparse/paged_decode") {
  ImplPropertyOptions po;
  po.kinds = {"differential"};
  po.ledgers = std::make_shared<std::map<std::string, std::shared_ptr<FindingLedger>>>();
  const auto props = implementation_properties(b, {spec_for(op)}, po);
  PropertyBudget budget;
  budget.cases = cases;
  budget.seed = std::getenv("KPARITY_TEST_SEED") ? std::stoull(std::getenv("KPARITY_TEST_SEED"), nullptr, 0) : 41;
  return run_property_findings(props.at(0), *po.ledgers->at(props[0].name), budget, fo, "");
}

const KnobResult* knob(const Explanation& e, const std::string& name) {
  for (const auto& k : e.knobs)
    if (k.name == name) return &k;
  return nullptr;
}

std::string all_of(const PropertyFindings& r) {
  std::string s;
  for (const auto& f : r.findings) {
    s += f.signature.display() + "\n  " + f.explanation.line() + "\n  " + f.explanation.first_bad + "\n";
    if (std::getenv("KPARITY_TEST_VERBOSE")) s += f.explanation.to_json().dump() + "\n";
  }
  return s;
}

TEST(Explain, KeyCountSlipIsOneFindingThatNeedsFiveKeys) {
  const PropertyFindings r = run(drops_fifth_key(), 300);
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  ASSERT_TRUE(e.ran);
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"keys"}) << e.line();
  const KnobResult* keys = knob(e, "keys");
  ASSERT_TRUE(keys);
  EXPECT_EQ(keys->nearest_pass, "4") << e.line();
  EXPECT_EQ(keys->says.rfind("keys >= 5 (passes with 4", 0), 0u) << keys->says;
  for (const char* free : {"H", "D", "T", "dtype"}) {
    const KnobResult* k = knob(e, free);
    ASSERT_TRUE(k) << free;
    EXPECT_EQ(k->verdict, "free") << free << ": " << e.line();
  }
  // The provenance: the bad token has five keys or more.
  ASSERT_TRUE(e.provenance.is_object()) << e.first_bad;
  EXPECT_GE(e.provenance.at("keys").at(0).at("keys").get<int>(), 5) << e.first_bad;
  EXPECT_NE(e.line().find("free: "), std::string::npos);
  // The readable message has no drawn values; the debug field keeps them.
  const std::string msg = readable_message(r.findings[0]);
  EXPECT_EQ(msg.rfind("[wrong-values] ", 0), 0u) << msg;
  EXPECT_EQ(msg.find("unsigned long"), std::string::npos) << msg;
  EXPECT_NE(msg.find("first bad "), std::string::npos) << msg;
  const auto j = r.to_json().at("findings").at(0);
  EXPECT_NE(j.at("debug").get<std::string>().find("RC_FAIL"), std::string::npos) << j.at("debug");
  EXPECT_EQ(j.at("explain").at("needed").at(0).at("name"), "keys");
}

TEST(Explain, InfSinkSlipNeedsTheSinkAndNoShape) {
  const PropertyFindings r = run(ignores_inf_sink(), 400);
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"sink"}) << e.line();
  EXPECT_EQ(knob(e, "sink")->value, "+inf");
  EXPECT_EQ(knob(e, "sink")->nearest_pass, "finite");
  for (const char* free : {"H", "D", "T"}) EXPECT_EQ(knob(e, free)->verdict, "free") << free << ": " << e.line();
  EXPECT_EQ(e.provenance.at("sink"), "inf") << e.first_bad;
}

TEST(Explain, StridedOnlySlipNeedsTheLayoutOfQ) {
  const PropertyFindings r = run(ignores_q_strides(), 300);
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  const auto needed = e.needed_names();
  EXPECT_NE(std::find(needed.begin(), needed.end(), "q layout"), needed.end()) << e.line();
  for (const char* free : {"keys", "H", "D", "dtype", "sink"}) EXPECT_NE(knob(e, free)->verdict, "needed") << free << ": " << e.line();
  EXPECT_EQ(knob(e, "q layout")->value, "strided");
  EXPECT_EQ(knob(e, "q layout")->nearest_pass, "contiguous");
}

TEST(Explain, CostsNoMoreThanTheShrinkItFollows) {
  for (const Backend& b : {drops_fifth_key(), ignores_inf_sink(), ignores_q_strides()}) {
  const PropertyFindings r = run(b, 400);
  ASSERT_FALSE(r.findings.empty()) << b.name;
  const Finding& f = r.findings[0];
  std::printf("%s: ", b.name.c_str());
  // The round's seconds include the search and the shrink; the explain step's are its own.
  std::printf("explain: %.4f s, %d trials, after a shrink of %.4f s (round: search + shrink %.4f s)\n",
              f.explanation.seconds, f.explanation.trials, f.outcome.shrink_seconds, f.outcome.seconds);
  EXPECT_GT(f.outcome.shrink_seconds, 0.0);
  EXPECT_LE(f.outcome.shrink_seconds, f.outcome.seconds);
  // Loose here (a loaded CI machine); bench/results/explain_2026-12-04.md has the measurement.
  EXPECT_LE(f.explanation.seconds, std::max(f.outcome.seconds, 0.5)) << f.explanation.trials << " trials";
  EXPECT_LE(f.explanation.trials, ExplainOptions{}.max_trials + 1);
  }
}

TEST(Explain, ABudgetThatRunsOutSaysWhatItDidNotReach) {
  FindingRunOptions fo;
  fo.explain.max_trials = 3;
  const PropertyFindings r = run(drops_fifth_key(), 300, fo);
  ASSERT_FALSE(r.findings.empty());
  const Explanation& e = r.findings[0].explanation;
  EXPECT_TRUE(e.out_of_budget);
  EXPECT_FALSE(e.to_json().at("unreached").empty());
  EXPECT_NE(e.line().find("budget ran out before"), std::string::npos) << e.line();
}

TEST(Explain, IsDeterministicForASeed) {
  const PropertyFindings a = run(drops_fifth_key(), 300), b = run(drops_fifth_key(), 300);
  ASSERT_FALSE(a.findings.empty());
  ASSERT_EQ(a.findings.size(), b.findings.size());
  auto strip = [](nlohmann::json j) {
    j.erase("seconds");
    j.erase("provenance_seconds");
    return j;
  };
  EXPECT_EQ(strip(a.findings[0].explanation.to_json()), strip(b.findings[0].explanation.to_json()));
}

// The first bad element is found wherever it lies: a backend wrong only in the last element of
// `out`, on drawn calls where a scan from the front runs out of judgements before it (97..128
// elements judged one by one; 97..128 token-heads judged a row of D at a time). Such a call came
// out of a plain --impl run as a second finding of one slip: no provenance, so no first bad head
// for the explain step's H and T knobs to keep.
TEST(Explain, ProvenanceFindsALateFirstBadElement) {
  const Backend b = writing("sparse/paged_decode", "last-element", [](Call& c) {
    const TensorView out = c.at("out").view();
    out.store_flat(out.numel() - 1, out.load_flat(out.numel() - 1) + 1.0);
  });
  const OpFuzzSpec& spec = spec_for("sparse/paged_decode");
  const CallCheck check = implementation_check(spec, b, "differential", std::nullopt, {}, {});
  bool one_by_one = false, in_blocks = false;
  for (int k = 0; k < 3000 && !(one_by_one && in_blocks); ++k) {
    GenConfig cfg;
    cfg.large = k % 2 == 1;
    const auto gen = rc::gen::exec([&] { return spec.draw(cfg); });
    const Call c = gen(rc::Random(static_cast<std::uint64_t>(k) * 7919u + 1u), 100).value();
    take_buckets();
    const TensorView out = c.at("out").view();
    const I n = out.numel(), rows = out.rank > 1 ? out.size(0) * out.size(1) : 0;
    const bool small = n > 96 && n <= 128 && !one_by_one, blocks = n > 128 && rows > 96 && rows <= 128 && !in_blocks;
    if (!small && !blocks) continue;
    const CallVerdict v = check(c);
    if (!v.failed || v.tensor != "out") continue;  // +1 can hide under a large bound
    std::string line;
    const nlohmann::json p = provenance(c, v, line);
    ASSERT_TRUE(p.is_object()) << c.description;
    std::vector<I> last;
    for (int a = 0; a < out.rank; ++a) last.push_back(out.size(a) - 1);
    EXPECT_EQ(p.at("index").get<std::vector<I>>(), last) << c.description << ": " << line;
    EXPECT_EQ(p.at("bad").get<I>(), 1) << line;
    (small ? one_by_one : in_blocks) = true;
  }
  EXPECT_TRUE(one_by_one) << "no drawn call with 97..128 elements of out failed";
  EXPECT_TRUE(in_blocks) << "no drawn call with 97..128 token-heads and D > 1 failed";
}

// kda/chunk: a chunk kernel that gets the last chunk of each sequence wrong (its outputs 1/16 too
// large), on captured calls whose sequences span several chunks.
TEST(Explain, KdaLastChunkSlipIsLocatedInTheProvenance) {
  const Backend b = writing("kda/chunk", "last-chunk", [](Call& c) {
    const TensorView out = c.at("out").view();  // [B, T, HV, V]
    const I cs = c.scalars.count("chunk_size") && c.scalars.at("chunk_size") > 0 ? static_cast<I>(c.scalars.at("chunk_size")) : 64;
    std::vector<std::pair<I, I>> seqs;  // [begin, end) per sequence, in tokens of batch 0
    if (c.tensors.count("cu_seqlens")) {
      const TensorView cu = c.at("cu_seqlens").view();
      for (I n = 0; n + 1 < cu.numel(); ++n) seqs.emplace_back(cu.load_int_flat(n), cu.load_int_flat(n + 1));
    }
    for_each_element(out, [&](std::span<const I> i, I) {
      const I t = i[1];
      I b0 = 0, len = out.size(1);
      for (const auto& [s, e] : seqs)
        if (t >= s && t < e) b0 = s, len = e - s;
      if ((t - b0) / cs == (len - 1) / cs) out.store(i, out.load(i) * (1.0 + 1.0 / 16));
    });
  });
  const CallCheck check = implementation_check(spec_for("kda/chunk"), b, "differential",
                                               reference::PrecisionProfile::fla_chunk, {}, {});
  int located = 0;
  for (const auto& file : corpus_files(std::string(KPARITY_SOURCE_DIR) + "/tests/data/fla_chunk_kda")) {
    Call c = load_call(file);
    const I T = c.at("q").view().size(1);
    const I cs = c.scalars.count("chunk_size") && c.scalars.at("chunk_size") > 0 ? static_cast<I>(c.scalars.at("chunk_size")) : 64;
    if (T <= cs) continue;  // one chunk: nothing to tell apart
    const CallVerdict v = check(c);
    if (!v.failed || v.tensor != "out") continue;
    std::string line;
    const nlohmann::json p = provenance(c, v, line);
    ASSERT_TRUE(p.is_object()) << file;
    EXPECT_TRUE(p.at("only_last_chunk").get<bool>()) << file << ": " << line;
    EXPECT_TRUE(p.at("last_chunk").get<bool>()) << line;
    EXPECT_NE(line.find("only the last chunk of each sequence"), std::string::npos) << line;
    EXPECT_GT(p.at("chunk").get<I>(), 0) << line;
    ++located;
  }
  EXPECT_GE(located, 1) << "no captured call with several chunks failed the planted slip";
}

// ---- KDA slips (the KDA knobs: H, HV, K, V, the dtypes, rows, seqlens) --------------------------

// `out` made wrong where `when` holds: 1/16 too large plus 1/4, so that no variant's zero outputs or
// wide bound hide it.
void off(Call& c, const std::function<bool(std::span<const I>)>& where = {}) {
  const TensorView out = c.at("out").view();
  for_each_element(out, [&](std::span<const I> i, I) {
    if (!where || where(i)) out.store(i, out.load(i) * (1.0 + 1.0 / 16) + 0.25);
  });
}

std::set<std::string> verdicts(const Explanation& e, const std::string& verdict) {
  std::set<std::string> s;
  for (const auto& k : e.knobs)
    if (k.verdict == verdict) s.insert(k.name);
  return s;
}

// Every finding names what it needs or what is free (issue 33's done-when).
void expect_named(const PropertyFindings& r) {
  for (const auto& f : r.findings)
    EXPECT_FALSE(verdicts(f.explanation, "needed").empty() && verdicts(f.explanation, "free").empty()) << f.explanation.line();
}

// kda/recurrent whose grouped value heads (HV > H) come out wrong: needs HV > H, any H, K, V, dtype.
TEST(ExplainKda, GqaOnlySlipNeedsHVAboveH) {
  const Backend b = writing("kda/recurrent", "gqa-only", [](Call& c) {
    if (c.at("v").view().size(1) > c.at("q").view().size(1)) off(c);
  });
  const PropertyFindings r = run(b, 300, {}, "kda/recurrent");
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  ASSERT_TRUE(e.ran);
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"HV"}) << e.line();
  const KnobResult* hv = knob(e, "HV");
  ASSERT_TRUE(hv);
  const KnobResult* h = knob(e, "H");
  ASSERT_TRUE(h);
  EXPECT_EQ(hv->nearest_pass, h->value) << e.line();  // passes with HV = H: no grouping
  EXPECT_NE(hv->says.find("HV >= "), std::string::npos) << hv->says;
  const auto free = verdicts(e, "free");
  for (const char* k : {"H", "K", "V", "act"}) EXPECT_TRUE(free.count(k)) << k << ": " << e.line();
  expect_named(r);
  // The readable message names the call by its description.
  const std::string msg = readable_message(r.findings[0]);
  EXPECT_NE(msg.find("call: kda/recurrent H="), std::string::npos) << msg;
}

// kda/packed_decode wrong in fp16 activations only: needs act = f16; heads, sizes and rows free.
TEST(ExplainKda, Fp16OnlySlipNeedsTheActDtype) {
  const Backend b = writing("kda/packed_decode", "fp16-only", [](Call& c) {
    if (c.at("mixed_qkv").dtype() == DType::f16) off(c);
  });
  const PropertyFindings r = run(b, 300, {}, "kda/packed_decode");
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"act"}) << e.line();
  EXPECT_EQ(knob(e, "act")->value, "f16");
  EXPECT_EQ(knob(e, "act")->says, "act = f16 (passes with f32, bf16)");
  const auto free = verdicts(e, "free");
  for (const char* k : {"H", "HV", "K", "V", "B", "state"}) EXPECT_TRUE(free.count(k)) << k << ": " << e.line();
  expect_named(r);
}

// kda/chunk wrong in the last chunk of each sequence only, through the whole explain step: the
// shrunk call's sequences fit one chunk, the seqlens variant spans two, and its provenance ("at")
// says only the last chunk is bad.
TEST(ExplainKda, LastChunkSlipSaysSoInTheProvenance) {
  const Backend b = writing("kda/chunk", "last-chunk-only", [](Call& c) {
    const I cs = c.scalars.count("chunk_size") && c.scalars.at("chunk_size") > 0 ? static_cast<I>(c.scalars.at("chunk_size")) : 64;
    std::vector<std::pair<I, I>> seqs;  // [begin, end) per sequence (varlen)
    if (c.tensors.count("cu_seqlens")) {
      const TensorView cu = c.at("cu_seqlens").view();
      for (I n = 0; n + 1 < cu.numel(); ++n) seqs.emplace_back(cu.load_int_flat(n), cu.load_int_flat(n + 1));
    }
    const I T = c.at("out").view().size(1);
    off(c, [&](std::span<const I> i) {
      I b0 = 0, len = T;
      for (const auto& [s, e] : seqs)
        if (i[1] >= s && i[1] < e) b0 = s, len = e - s;
      return (i[1] - b0) / cs == (len - 1) / cs;
    });
  });
  const PropertyFindings r = run(b, 200, {}, "kda/chunk");
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  ASSERT_TRUE(e.provenance.is_object()) << e.first_bad;
  ASSERT_TRUE(e.provenance.contains("at")) << e.provenance.dump(1);
  const auto& at = e.provenance.at("at");
  EXPECT_EQ(at.at("knob"), "seqlens");
  EXPECT_TRUE(at.at("provenance").at("only_last_chunk").get<bool>()) << at.dump(1);
  EXPECT_NE(e.first_bad.find("only the last chunk of each sequence"), std::string::npos) << e.first_bad;
  const auto free = verdicts(e, "free");
  for (const char* k : {"seqlens", "H", "HV", "K", "V", "act"}) EXPECT_TRUE(free.count(k)) << k << ": " << e.line();
  expect_named(r);
}

// kda/recurrent wrong whenever q is not compact: needs the layout (KDA ops have one layout knob,
// compact or scrambled, as their call description has).
TEST(ExplainKda, StridedOnlySlipNeedsTheLayout) {
  const Backend b = writing("kda/recurrent", "strided-only", [](Call& c) {
    const Tensor& q = c.at("q");
    if (!(q.view().is_contiguous() && q.storage_offset() == 0)) off(c);
  });
  const PropertyFindings r = run(b, 300, {}, "kda/recurrent");
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"layout"}) << e.line();
  EXPECT_EQ(knob(e, "layout")->value, "scrambled");
  EXPECT_EQ(knob(e, "layout")->nearest_pass, "compact");
  expect_named(r);
}

// kda/recurrent wrong in every sequence after the first (a varlen kernel whose later sequences
// start from a stale offset): needs N >= 2, passes with the bad sequence alone.
TEST(ExplainKda, LaterSequencesSlipNeedsN) {
  const Backend b = writing("kda/recurrent", "later-sequences", [](Call& c) {
    if (!c.tensors.count("cu_seqlens")) return;
    const TensorView cu = c.at("cu_seqlens").view();
    const I first_end = cu.numel() > 1 ? cu.load_int_flat(1) : 0;
    off(c, [&](std::span<const I> i) { return i[0] >= first_end; });
  });
  const PropertyFindings r = run(b, 300, {}, "kda/recurrent");
  if (std::getenv("KPARITY_TEST_VERBOSE")) std::printf("%s", all_of(r).c_str());
  ASSERT_EQ(r.findings.size(), 1u) << all_of(r);
  const Explanation& e = r.findings[0].explanation;
  EXPECT_EQ(e.needed_names(), std::vector<std::string>{"N"}) << e.line();
  EXPECT_EQ(knob(e, "N")->nearest_pass, "1") << e.line();
  const auto free = verdicts(e, "free");
  for (const char* k : {"H", "HV", "K", "V"}) EXPECT_TRUE(free.count(k)) << k << ": " << e.line();
  expect_named(r);
}

// Every KDA variant is a call the faithful model runs and the rule passes (a variant built wrong,
// e.g. a state row out of step with its sequence, would fail it) or one the contract refuses; on
// drawn calls of every KDA op (seven small, one kernel-sized).
TEST(ExplainKda, EveryVariantOfTheFaithfulModelPasses) {
  for (const char* op : {"kda/recurrent", "kda/chunk", "kda/packed_decode", "kda/replayssm_decode"}) {
    const OpFuzzSpec& spec = spec_for(op);
    const CallCheck check = implementation_check(spec, faithful_backend({op}), "differential", std::nullopt, {}, {});
    std::map<std::string, int> ran, refused;
    for (int n = 0; n < 8; ++n) {
      GenConfig cfg;
      cfg.large = n == 7;
      const auto gen = rc::gen::exec([&] { return spec.draw(cfg); });
      const Call c = gen(rc::Random(static_cast<std::uint64_t>(n) * 7919u + 11u), 30).value();
      take_buckets();
      for (const Knob& k : knobs_for(c, 1234, nullptr)) {
        for (const Trial& t : k.trials) {
          const std::optional<Call> v = t.make();
          if (!v) continue;
          const CallVerdict r = check(*v);
          if (!r.skipped.empty()) {
            ++refused[k.name];
            continue;
          }
          ++ran[k.name];
          EXPECT_FALSE(r.failed) << op << " " << k.name << " = " << t.value << " of " << c.description << ": " << r.detail;
        }
      }
    }
    std::string s;
    for (const auto& [k, n] : ran) s += fmt::format(" {}:{}/{}", k, n, refused[k]);
    std::printf("%s ran/refused:%s\n", op, s.c_str());
    for (const char* k : {"H", "HV", "K", "V", "act", "layout"}) EXPECT_GT(ran[k], 0) << op << " " << k;
  }
}

TEST(ExplainKda, CostsNoMoreThanTheShrinkItFollows) {
  const Backend gqa = writing("kda/recurrent", "gqa-only", [](Call& c) {
    if (c.at("v").view().size(1) > c.at("q").view().size(1)) off(c);
  });
  const Backend fp16 = writing("kda/packed_decode", "fp16-only", [](Call& c) {
    if (c.at("mixed_qkv").dtype() == DType::f16) off(c);
  });
  for (const auto& [b, op] : {std::pair{gqa, std::string("kda/recurrent")}, std::pair{fp16, std::string("kda/packed_decode")}}) {
    const PropertyFindings r = run(b, 300, {}, op);
    ASSERT_FALSE(r.findings.empty()) << b.name;
    const Finding& f = r.findings[0];
    std::printf("%s: explain %.4f s, %d trials, after a shrink of %.4f s (round %.4f s)\n", b.name.c_str(),
                f.explanation.seconds, f.explanation.trials, f.outcome.shrink_seconds, f.outcome.seconds);
    // Loose here (a loaded CI machine); bench/results/explain_cost_2026-12-05.md has the measurement.
    EXPECT_LE(f.explanation.seconds, std::max(f.outcome.seconds, 0.5)) << f.explanation.trials << " trials";
    EXPECT_FALSE(f.explanation.out_of_budget) << f.explanation.line();
  }
}

#if defined(KPARITY_CLI_PATH) && defined(KPARITY_TEST_EXPLAIN_PLUGINS)
// Through the C ABI: `kparity fuzz --impl` on the example CPU plugin with one slip planted
// (tests/fuzz_external/plugins/planted_impl.cpp, bugs 7-10), each in a child process per call.
struct CliRun {
  int status = 0;
  std::string out;
  nlohmann::json findings;  // the property's findings in the JSON report
};

CliRun run_plugin(const std::string& bug, const std::string& op, int cases) {
  const std::map<std::string, std::string> plugins = KPARITY_TEST_EXPLAIN_PLUGINS;
  const auto dir = std::filesystem::temp_directory_path() / ("kparity-explain-cli-" + bug);
  std::filesystem::remove_all(dir);
  const auto report = dir / "report.json";
  CliRun r;
  std::tie(r.status, r.out) = test::fuzz_cli("--impl " + plugins.at(bug) + " --op " + op + " --property " + op +
                                             "/differential/planted-" + bug + " --cases " + std::to_string(cases) +
                                             " --seed 41 --explain-seconds 5 --corpus " + dir.string() +
                                             " --report " + report.string());
  std::ifstream f(report);
  if (f) r.findings = nlohmann::json::parse(f).at("properties").at(0).at("findings");
  std::filesystem::remove_all(dir);
  return r;
}

std::set<std::string> names(const nlohmann::json& knobs) {
  std::set<std::string> s;
  for (const auto& k : knobs) s.insert(k.at("name").get<std::string>());
  return s;
}

TEST(ExplainCli, APluginsKeySlipIsOneFindingThatNeedsFiveKeys) {
  const CliRun r = run_plugin("drops-fifth-key", "sparse/paged_decode", 300);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("explain: needs keys >= 5 (passes with 4"), std::string::npos) << r.out;
  ASSERT_EQ(r.findings.size(), 1u) << r.out;
  const auto& needed = r.findings.at(0).at("explain").at("needed");
  ASSERT_EQ(needed.size(), 1u) << r.out;
  EXPECT_EQ(needed.at(0).at("name"), "keys");
  EXPECT_EQ(needed.at(0).at("nearest_pass"), "4");
  for (const char* free : {"H", "D", "T", "dtype"})
    EXPECT_TRUE(names(r.findings.at(0).at("explain").at("free")).count(free)) << free << "\n" << r.out;
  EXPECT_EQ(r.findings.at(0).at("message").get<std::string>().find("unsigned long"), std::string::npos);
}

TEST(ExplainCli, APluginsInfSinkSlipNeedsTheSinkAndNoShape) {
  const CliRun r = run_plugin("ignores-inf-sink", "sparse/paged_decode", 400);
  EXPECT_EQ(r.status, 1) << r.out;
  ASSERT_EQ(r.findings.size(), 1u) << r.out;
  const auto& e = r.findings.at(0).at("explain");
  EXPECT_EQ(names(e.at("needed")), std::set<std::string>{"sink"}) << r.out;
  EXPECT_EQ(e.at("needed").at(0).at("value"), "+inf");
  for (const char* free : {"H", "D", "T"}) EXPECT_TRUE(names(e.at("free")).count(free)) << free << "\n" << r.out;
}

TEST(ExplainCli, APluginsStridedOnlySlipNeedsTheLayoutOfQ) {
  const CliRun r = run_plugin("ignores-q-strides", "sparse/paged_decode", 300);
  EXPECT_EQ(r.status, 1) << r.out;
  ASSERT_EQ(r.findings.size(), 1u) << r.out;
  const auto needed = names(r.findings.at(0).at("explain").at("needed"));
  EXPECT_TRUE(needed.count("q layout")) << r.out;
  for (const char* free : {"keys", "H", "D", "dtype", "sink"}) EXPECT_FALSE(needed.count(free)) << free << "\n" << r.out;
}

// kda/recurrent whose last 64-token chunk of each sequence is wrong: the shrunk call has one token
// (its own last chunk); the explain step lengthens the sequences and locates the bad elements there.
TEST(ExplainCli, APluginsLastChunkSlipIsLocatedInTheLastChunk) {
  const CliRun r = run_plugin("wrong-last-chunk", "kda/recurrent", 30);
  EXPECT_EQ(r.status, 1) << r.out;
  ASSERT_EQ(r.findings.size(), 1u) << r.out;
  const auto& e = r.findings.at(0).at("explain");
  ASSERT_TRUE(e.at("provenance").contains("at")) << e.dump(1);
  const auto& at = e.at("provenance").at("at");
  EXPECT_EQ(at.at("knob"), "seqlens");
  EXPECT_TRUE(at.at("provenance").at("only_last_chunk").get<bool>()) << at.dump(1);
  EXPECT_NE(e.at("first_bad").get<std::string>().find("only the last chunk of each sequence"), std::string::npos)
      << e.at("first_bad");
  EXPECT_TRUE(names(e.at("free")).count("seqlens")) << r.out;
}
#endif

}  // namespace
}  // namespace kparity::fuzz
