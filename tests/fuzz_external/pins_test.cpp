// Shape pins (fuzz/generators/pins.hpp): a JIT kernel's compile-relevant sizes and dtypes held to a
// few values while the rest of the call is drawn as usual, through the implementation properties
// (Python's pins= and the CLI's --pins build the same ShapePins).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kparity/fuzz/backends/findings.hpp"
#include "kparity/fuzz/backends/implementation.hpp"
#include "kparity/fuzz/backends/reference.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "fuzz_cli.hpp"
#include "kparity/fuzz/generators/pins.hpp"

namespace kparity::fuzz {
namespace {

using I = std::int64_t;

TEST(ShapePins, TextRoundTripsInAFixedKeyOrder) {
  const ShapePins p = parse_shape_pins("L=4|17, act=bfloat16,K=32,HV=2|4,H=2", "kda/replayssm_decode");
  EXPECT_EQ(p.family, "kda");
  EXPECT_EQ(p.text(), "H=2,HV=2|4,K=32,L=4|17,act=bf16");
  EXPECT_EQ(parse_shape_pins(p.text(), "kda/recurrent").text(), p.text());
  EXPECT_TRUE(parse_shape_pins("", "sparse/paged_decode").empty());
  EXPECT_EQ(parse_shape_pins("D=64|512,sink=f32,dtype=f16", "sparse/paged_prefill").text(), "D=64|512,dtype=f16,sink=f32");
  EXPECT_EQ(parse_shape_pins("layout=compact,K=16", "kda/chunk").text(), "K=16,layout=compact");
  EXPECT_TRUE(parse_shape_pins("layout=any", "kda/chunk").empty());
}

TEST(ShapePins, BadTextNamesTheKeyOrValue) {
  const auto why = [](const char* text, const char* op) {
    try {
      parse_shape_pins(text, op);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(why("Q=1", "kda/recurrent"),
            "pins: unknown key 'Q' for kda/* (known: H, HV, K, V, L, act, state, params, ring, layout)");
  EXPECT_EQ(why("K=32", "sparse/paged_decode"), "pins: unknown key 'K' for sparse/* (known: D, H, dtype, sink, layout)");
  EXPECT_EQ(why("dtype=f32", "sparse/paged_decode"), "pins: dtype=f32 is not one of bf16, f16");
  EXPECT_EQ(why("K=0", "kda/recurrent"), "pins: K=0 is not a size in [1, 4096]");
  EXPECT_EQ(why("K=3x", "kda/recurrent"), "pins: K=3x is not a size in [1, 4096]");
  EXPECT_EQ(why("K", "kda/recurrent"), "pins: 'K' is not key=value (e.g. K=32 or L=4|17)");
  EXPECT_EQ(why("K=16,K=32", "kda/recurrent"), "pins: K given twice");
  EXPECT_EQ(why("H=2,HV=3", "kda/recurrent"),
            "pins: no pinned HV is a multiple of H=2 (value heads come in groups of query heads)");
  EXPECT_EQ(why("H=1", "cache/write"), "pins: no pins for cache/write");
  EXPECT_EQ(why("layout=odd", "kda/recurrent"), "pins: layout=odd is not compact or any");
}

// Runs `cases` differential cases of `op` on the faithful reference with `pins`, calling `seen`
// with every call inside the domain.
PropertyFindings run_pinned(const std::string& op, const ShapePins& pins, int cases,
                            std::function<void(const Call&)> seen) {
  ImplPropertyOptions po;
  po.kinds = {"differential"};
  po.pins = &pins;
  po.ledgers = std::make_shared<std::map<std::string, std::shared_ptr<FindingLedger>>>();
  po.supports = [seen](const Call& c) {
    seen(c);
    return std::string();
  };
  const auto props = implementation_properties(faithful_backend({op}), {spec_for(op)}, po);
  EXPECT_EQ(props.size(), 1u);
  PropertyBudget budget;
  budget.cases = cases;
  return run_property_findings(props[0], *po.ledgers->at(props[0].name), budget, {}, "");
}

TEST(ShapePins, ReplaySsmCallsKeepThePinnedClassesAndVaryTheRest) {
  const ShapePins pins = parse_shape_pins("K=32,V=32,H=1,HV=2,act=bf16,state=f32,params=f32,ring=bf16,L=4|17",
                                          "kda/replayssm_decode");
  std::set<I> batches, lengths;
  std::set<std::tuple<bool, bool>> flags;
  const PropertyFindings r = run_pinned("kda/replayssm_decode", pins, 60, [&](const Call& c) {
    const TensorView state = c.at("initial_state").view(), d_cache = c.at("d_cache").view();
    EXPECT_EQ(state.dtype, DType::f32);
    EXPECT_EQ(state.size(1), 2);  // HV
    EXPECT_EQ(state.size(2), 32);  // V
    EXPECT_EQ(state.size(3), 32);  // K
    EXPECT_EQ(c.at("mixed_qkv").dtype(), DType::bf16);
    EXPECT_EQ(c.at("A_log").dtype(), DType::f32);
    EXPECT_EQ(d_cache.dtype, DType::bf16);
    EXPECT_EQ(c.at("k_cache").dtype(), DType::bf16);
    lengths.insert(d_cache.size(2));  // [slots, HV, L, V]
    batches.insert(c.at("mixed_qkv").view().size(0));
    flags.insert({c.flags.count("use_qk_l2norm_in_kernel") && c.flags.at("use_qk_l2norm_in_kernel"),
                  c.tensors.count("force_flush") != 0});
  });
  EXPECT_TRUE(r.outcome.passed) << r.outcome.message;
  EXPECT_EQ(lengths, (std::set<I>{4, 17}));
  EXPECT_GT(batches.size(), 2u);  // what is not pinned is still drawn
  EXPECT_GT(flags.size(), 2u);
}

TEST(ShapePins, SparseCallsKeepThePinnedClassesAndVaryTheRest) {
  const ShapePins pins = parse_shape_pins("D=32|64,H=2,dtype=bf16,sink=f32", "sparse/paged_decode");
  std::set<I> tokens, widths;
  const PropertyFindings r = run_pinned("sparse/paged_decode", pins, 60, [&](const Call& c) {
    const TensorView q = c.at("q").view();
    EXPECT_EQ(q.dtype, DType::bf16);
    EXPECT_EQ(q.size(1), 2);
    EXPECT_EQ(c.at("unified_kv").dtype(), DType::bf16);
    EXPECT_EQ(c.at("attn_sink").dtype(), DType::f32);
    widths.insert(q.size(2));
    tokens.insert(q.size(0));
  });
  EXPECT_TRUE(r.outcome.passed) << r.outcome.message;
  EXPECT_EQ(widths, (std::set<I>{32, 64}));
  EXPECT_GT(tokens.size(), 2u);
}

// Every tensor of every call contiguous at offset 0 (the layouts the generators draw otherwise make
// Triton compile again nearly every call).
bool compact(const Call& c) {
  for (const auto& [name, t] : c.tensors) {
    if (!t.view().is_contiguous() || t.storage_offset() != 0) return false;
  }
  return true;
}

TEST(ShapePins, CompactLayoutHoldsEveryTensorContiguous) {
  for (const char* op : {"sparse/paged_prefill", "sparse/paged_decode", "kda/recurrent", "kda/replayssm_decode",
                         "kda/chunk"}) {
    int calls = 0, loose = 0;
    const ShapePins pins = parse_shape_pins("layout=compact", op);
    const PropertyFindings r = run_pinned(op, pins, 40, [&](const Call& c) {
      ++calls;
      loose += compact(c) ? 0 : 1;
    });
    EXPECT_TRUE(r.outcome.passed) << op << ": " << r.outcome.message;
    EXPECT_GE(calls, 40) << op;
    EXPECT_EQ(loose, 0) << op;
    // Without the pin the same draws are mostly not all compact (the control: the check can fail).
    int free_loose = 0;
    run_pinned(op, ShapePins{.family = pins.family}, 40, [&](const Call& c) { free_loose += compact(c) ? 0 : 1; });
    EXPECT_GT(free_loose, 5) << op;
  }
}

TEST(ShapePins, PinsOfAnotherFamilyLeaveTheCallAlone) {
  const ShapePins kda = parse_shape_pins("K=32", "kda/recurrent");
  GenConfig cfg;
  cfg.pins = &kda;
  EXPECT_EQ(pins_for(cfg, "sparse"), nullptr);
  EXPECT_EQ(pins_for(cfg, "kda"), &kda);
}

#if defined(KPARITY_CLI_PATH) && defined(KPARITY_EXAMPLE_CPU_IMPL)
std::pair<int, std::string> cli(const std::string& args) { return test::fuzz_cli(args); }

TEST(FuzzImplCli, PinsHoldTheClassesOrSayWhatIsWrong) {
  const std::string impl = std::string("--impl ") + KPARITY_EXAMPLE_CPU_IMPL;
  auto [status, out] = cli(impl + " --pins 'kda:K=32,V=32,act=bf16' --op kda/packed_decode --cases 5");
  EXPECT_EQ(status, 0) << out;
  std::tie(status, out) = cli(impl + " --pins 'kda:Q=1' --op kda/packed_decode --cases 5");
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("error: --pins: unknown key 'Q' for kda/*"), std::string::npos) << out;
  std::tie(status, out) = cli(impl + " --pins K=32 --op kda/packed_decode --cases 5");
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("--pins takes FAMILY:key=value"), std::string::npos) << out;
  std::tie(status, out) = cli(impl + " --pins kda:K=32 --preset kimi-linear --op kda/packed_decode --cases 5");
  EXPECT_EQ(status, 2) << out;
}
#endif

}  // namespace
}  // namespace kparity::fuzz
