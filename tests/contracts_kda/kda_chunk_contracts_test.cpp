// kda/chunk contract (fla chunk_kda @bc3b101d): upstream order, Python renderings, the implicit
// failures, which options make which arguments matter, the state layouts, and the guards that keep
// one cause from being reported twice.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/examples.hpp"
#include "contracts_kda/contract_examples.hpp"
#include "support/diagnostic_ids.hpp"

namespace kparity {
namespace {

using nlohmann::json;
using test::has;
using test::ids_of;

constexpr const char* kMin = "kda.chunk.minimal";  // varlen, raw gate, logits, K-first states
constexpr const char* kDense = "kda.chunk.dense";  // B = 2 x T = 3, precomputed g, no state
using namespace contract_test;

std::vector<std::string> want(std::initializer_list<std::string_view> ids) { return {ids.begin(), ids.end()}; }

// ---- renderings: Python's str() of ints, floats, lists and torch.Size ----

TEST(KdaChunkMessages, VarlenBatchKeepsUpstreamsMissingSpace) {
  auto d = first_error(build(kMin, {{"q.shape", {3, 5, 1, 16}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_varlen_batch_size);
  EXPECT_EQ(d->error_class, ErrorClass::ValueError);
  EXPECT_EQ(d->message,
            "The batch size is expected to be 1 rather than 3 when using `cu_seqlens`.Please flatten variable-length "
            "inputs before processing.");
  EXPECT_EQ(d->location, "kda/chunk::arg[q].shape[0]");
}

TEST(KdaChunkMessages, AssertsRenderTorchSizeAndLists) {
  auto d = first_error(build(kMin, {{"k.shape", json::array()}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->error_class, ErrorClass::AssertionError);
  EXPECT_EQ(d->message, "q and k must have the same shape, got q=torch.Size([1, 5, 1, 16]) vs k=torch.Size([])");
  d = first_error(build(kDense, {{"g.shape", {2, 3, 16}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->message, "g must have shape [B, T, HV, K]=[2, 3, 2, 16], got [2, 3, 16]");
  d = first_error(build(kDense, {{"beta.shape", json::array()}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->message, "beta must have shape [B, T, HV]=[2, 3, 2], got []");
  d = first_error(build(kDense, {{"q.shape", {2, 3, 4, 16}}, {"k.shape", {2, 3, 4, 16}}, {"v.shape", {2, 3, 6, 16}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->message,
            "For GVA, num_v_heads (HV=6) must be evenly divisible by num_qk_heads (H=4), but got HV % H = 2");
}

TEST(KdaChunkMessages, ScalarsAsPythonPrintsThem) {
  auto msg = [](json set) { return first_error(build(kMin, std::move(set)))->message; };
  EXPECT_EQ(msg({{"scalars.chunk_size", 128}}), "`chunk_size` must be either 32 or 64 for KDA, got 128.");
  EXPECT_EQ(msg({{"scalars.chunk_size", 48.5}}), "`chunk_size` must be either 32 or 64 for KDA, got 48.5.");
  EXPECT_EQ(msg({{"flags.safe_gate", true}, {"scalars.lower_bound", 0.0}}),
            "`lower_bound` must be in the safe range [-5, 0), got 0.0.");
  EXPECT_EQ(msg({{"flags.safe_gate", true}, {"scalars.lower_bound", "nan"}}),
            "`lower_bound` must be in the safe range [-5, 0), got nan.");
  EXPECT_EQ(msg({{"initial_state.shape", {1, 2, 16, 16}}}),
            "The number of initial states is expected to be equal to the number of input sequences, i.e., 2 rather "
            "than 1.");
  // The safe range's ends: -5 is in, 0 is out.
  EXPECT_FALSE(first_error(build(kMin, {{"flags.safe_gate", true}, {"scalars.lower_bound", -5.0}})));
}

// ---- order ----

TEST(KdaChunkOrder, WrapperOrderInCheckAndValidate) {
  auto e = build(kMin, {{"initial_state.dtype", "bf16"},
                        {"scalars.chunk_size", 16},
                        {"flags.allow_neg_eigval", true},
                        {"flags.use_beta_sigmoid_in_kernel", false},
                        {"g.shape", {1, 5, 2, 8}},
                        {"v.shape", {1, 4, 2, 16}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_initial_state_dtype);
  EXPECT_EQ(d->error_class, ErrorClass::AssertionError);
  EXPECT_EQ(ids_of(validate(e)), want({ids::kda_chunk_initial_state_dtype, ids::kda_chunk_chunk_size,
                                       ids::kda_chunk_allow_neg_eigval, ids::kda_chunk_g_shape, ids::kda_chunk_v_shape}));
}

TEST(KdaChunkOrder, ImplicitFailuresAtTheirUpstreamPosition) {
  // Line 407 reads v.shape[2] before it unpacks q.shape.
  auto d = first_error(build(kDense, {{"v.shape", {6, 32}}, {"q.shape", {6, 16}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_v_ndim);
  EXPECT_EQ(d->error_class, ErrorClass::IndexError);
  EXPECT_EQ(d->message, "`v` must have at least 3 dimensions: chunk_kda reads HV from v.shape[2] (got v.ndim=2).");
  d = first_error(build(kDense, {{"q.shape", {2, 3, 1, 1, 16}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_q_ndim);
  EXPECT_EQ(d->error_class, ErrorClass::ValueError);
  // Line 379 evaluates initial_state.shape[0] before len(cu_seqlens).
  d = first_error(build(kMin, {{"initial_state.shape", json::array()}, {"cu_seqlens.shape", json::array()}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_varlen_initial_state_dim);
  d = first_error(build(kMin, {{"cu_seqlens.shape", json::array()}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_cu_seqlens_0d);
  EXPECT_EQ(d->error_class, ErrorClass::TypeError);
  // The varlen batch checks run before the initial-state dtype assert.
  d = first_error(build(kMin, {{"q.shape", json::array()}, {"initial_state.dtype", "bf16"}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_varlen_batch_dim);
  EXPECT_EQ(d->error_class, ErrorClass::IndexError);
}

TEST(KdaChunkOrder, DivisionsByZero) {
  // H = 0: HV % H raises before the assert can print.
  auto e = build(kDense, {{"q.shape", {2, 3, 0, 16}}, {"k.shape", {2, 3, 0, 16}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_num_qk_heads_zero);
  EXPECT_EQ(d->error_class, ErrorClass::ZeroDivisionError);
  EXPECT_FALSE(has(validate(e), ids::kda_chunk_head_ratio));
  // K = 0: the default scale divides by zero; with a scale, kparity's head-dim check says why instead.
  const json k0 = {{"q.shape", {2, 3, 1, 0}}, {"k.shape", {2, 3, 1, 0}}, {"g.shape", {2, 3, 2, 0}}};
  auto ds = validate(build(kDense, k0));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_default_scale_k_zero}));
  json with_scale = k0;
  with_scale["scalars.scale"] = 0.5;
  ds = validate(build(kDense, with_scale));
  ASSERT_EQ(ids_of(ds), want({ids::kda_chunk_head_dims}));
  EXPECT_EQ(ds[0].message, "chunk_kda needs key and value head dims of at least 1 (got K=0, V=16).");
}

TEST(KdaChunkOrder, TheAssertAfterTheKernelsPrecedesKparitysStructuralChecks) {
  auto e = build(kMin, {{"flags.return_intermediate_states", true}, {"flags.disable_recompute", true},
                        {"out.shape", {1, 5, 2, 8}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_chunk_intermediate_states_recompute);
  EXPECT_EQ(ids_of(validate(e)), want({ids::kda_chunk_intermediate_states_recompute, ids::kda_chunk_out_shape}));
  // Either flag alone is fine.
  EXPECT_TRUE(validate(build(kMin, {{"flags.return_intermediate_states", true}}, kDeep)).empty());
  EXPECT_TRUE(validate(build(kMin, {{"flags.disable_recompute", true}}, kDeep)).empty());
}

// ---- which options make which arguments matter ----

TEST(KdaChunkOptions, GateParametersOnlyMatterWithTheInKernelGate) {
  // The wrapper drops A_log and dt_bias without use_gate_in_kernel: nothing about them is checked.
  auto e = build(kDense, {{"A_log", {{"shape", {7}}, {"dtype", "i32"}, {"device", "cpu"}}},
                          {"dt_bias", {{"shape", {3, 3}}, {"dtype", "bf16"}, {"device", "cuda:1"}}},
                          {"scalars.lower_bound", 9.0}},
                 kDeep);
  EXPECT_TRUE(validate(e).empty());
  // With it, each is checked.
  auto ds = validate(build(kMin, {{"A_log.shape", {3}}, {"dt_bias.shape", {2, 8}}, {"A_log.dtype", "i32"}}));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_a_log_shape, ids::kda_chunk_dt_bias_shape, ids::kda_chunk_float_dtype}));
  EXPECT_EQ(ds[1].message, "`dt_bias` must have shape (32,) or (2, 16) (got (2, 8)).");
  // dt_bias may be flat or split, and may be left out.
  EXPECT_TRUE(validate(build(kMin, {{"dt_bias.shape", {2, 16}}}, kDeep)).empty());
  EXPECT_TRUE(validate(build(kMin, {{"dt_bias", nullptr}}, kDeep)).empty());
}

TEST(KdaChunkOptions, ALogOptionalOnlyForTheBoundedGate) {
  EXPECT_EQ(first_error(build(kMin, {{"A_log", nullptr}}))->id, ids::kda_chunk_a_log_required);
  EXPECT_TRUE(validate(build(kMin, {{"A_log", nullptr}, {"scalars.lower_bound", -3.0}}, kDeep)).empty());
  EXPECT_TRUE(validate(build(kMin, {{"A_log", nullptr}, {"flags.use_gate_in_kernel", false}}, kDeep)).empty());
}

TEST(KdaChunkOptions, SafeGateRequirementsFollowTheGateForm) {
  // Precomputed g: safe_gate needs no lower_bound upstream; kparity warns about out-of-range gates.
  auto e = build(kDense, {{"flags.safe_gate", true}, {"g.fill", -7.5}}, kDeep);
  EXPECT_FALSE(first_error(e));
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_chunk_safe_gate_g_range);
  EXPECT_EQ(ds[0].severity, Severity::warning);
  EXPECT_EQ(ds[0].message,
            "safe_gate=True assumes log-decays in [-5, 0], but g[0, 0, 0, 0]=-7.5; the sub-chunk kernel may overflow.");
  EXPECT_TRUE(validate(build(kDense, {{"flags.safe_gate", true}, {"g.fill", -5.0}}, kDeep)).empty());
  EXPECT_TRUE(validate(build(kDense, {{"g.fill", -7.5}}, kDeep)).empty());  // no safe_gate, no warning
  // A NaN gate is the non-finite check's, not a range warning.
  ds = validate(build(kDense, {{"flags.safe_gate", true}, {"g.fill", "nan"}}, kDeep));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_non_finite}));
  // The bounded gate: upstream's range check covers lower_bound, so kparity's own stays quiet.
  ds = validate(build(kMin, {{"flags.safe_gate", true}, {"scalars.lower_bound", 3.0}}, kDeep));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_safe_gate_lower_bound_range}));
  ds = validate(build(kMin, {{"scalars.lower_bound", 3.0}}, kDeep));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_lower_bound_invalid}));
}

TEST(KdaChunkOptions, FinalStateOnlyMattersWhenWritten) {
  auto e = build(kMin, {{"flags.output_final_state", false}, {"final_state.shape", {9}}, {"final_state.dtype", "i32"}},
                 kDeep);
  EXPECT_TRUE(validate(e).empty());
  auto ds = validate(build(kMin, {{"final_state.shape", {2, 2, 8, 16}}}));
  ASSERT_EQ(ids_of(ds), want({ids::kda_chunk_final_state_shape}));
  EXPECT_EQ(ds[0].message, "`final_state` must have shape [N, HV, K, V]=(2, 2, 16, 16) (got (2, 2, 8, 16)).");
}

// ---- state layouts ----

TEST(KdaChunkLayout, KFirstByDefaultVFirstOnRequest) {
  // K = 16, V = 32, so the two layouts differ.
  const json kv = {{"v.shape", {1, 5, 2, 32}}, {"out.shape", {1, 5, 2, 32}}};
  auto with = [&](json extra) {
    json s = kv;
    for (auto& [k, v] : extra.items()) s[k] = v;
    return validate(build(kMin, s, kDeep));
  };
  EXPECT_TRUE(with({{"initial_state.shape", {2, 2, 16, 32}}, {"final_state.shape", {2, 2, 16, 32}}}).empty());
  auto ds = with({{"initial_state.shape", {2, 2, 32, 16}}, {"final_state.shape", {2, 2, 16, 32}}});
  ASSERT_EQ(ids_of(ds), want({ids::kda_chunk_initial_state_shape}));
  EXPECT_EQ(ds[0].message, "`initial_state` must have shape [N, HV, K, V]=(2, 2, 16, 32) (got (2, 2, 32, 16)).");
  const json vfirst = {{"initial_state.shape", {2, 2, 32, 16}}, {"final_state.shape", {2, 2, 32, 16}}};
  for (const char* flag : {"flags.state_v_first", "flags.transpose_state_layout"}) {
    json s = vfirst;
    s[flag] = true;
    EXPECT_TRUE(with(s).empty()) << flag;
  }
  // The deprecated spelling, passed as False, overrides nothing and conflicts with nothing.
  json s = vfirst;
  s["flags.transpose_state_layout"] = false;
  ds = with(s);
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_initial_state_shape, ids::kda_chunk_final_state_shape}));
  EXPECT_EQ(ds[0].message, "`initial_state` must have shape [N, HV, K, V]=(2, 2, 16, 32) (got (2, 2, 32, 16)).");
  // Both spellings: upstream's conflict, however the deprecated one is set.
  for (bool t : {true, false}) {
    auto d = first_error(build(kMin, {{"flags.state_v_first", true}, {"flags.transpose_state_layout", t}}));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->id, ids::kda_chunk_transpose_state_layout_conflict);
  }
}

TEST(KdaChunkLayout, StateCountReportedOnce) {
  // Varlen: upstream's count message, not a second shape diagnostic for the same cause.
  auto ds = validate(build(kMin, {{"initial_state.shape", {3, 2, 16, 16}}}));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_initial_state_count}));
  // A count and a layout problem are two causes.
  ds = validate(build(kMin, {{"initial_state.shape", {3, 2, 16, 8}}}));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_initial_state_count, ids::kda_chunk_initial_state_shape}));
  // Without cu_seqlens upstream does not count: kparity's shape check does.
  ds = validate(build(kDense, {{"initial_state", {{"shape", {3, 2, 16, 16}}, {"dtype", "f32"}, {"device", "cuda:0"}}}}));
  ASSERT_EQ(ids_of(ds), want({ids::kda_chunk_initial_state_shape}));
  EXPECT_EQ(ds[0].message, "`initial_state` must have shape [N, HV, K, V]=(2, 2, 16, 16) (got (3, 2, 16, 16)).");
  // A 0-D cu_seqlens is reported once: TypeError with an initial state, the shape check without.
  ds = validate(build(kMin, {{"cu_seqlens.shape", json::array()}}));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_cu_seqlens_0d}));
  ds = validate(build(kMin, {{"cu_seqlens.shape", json::array()}, {"initial_state", nullptr}}));
  EXPECT_EQ(ids_of(ds), want({ids::kda_chunk_cu_seqlens_shape}));
}

// ---- varlen data ----

TEST(KdaChunkVarlen, EmptySequencesAndAnEmptyBatch) {
  EXPECT_TRUE(validate(build(kMin, {{"cu_seqlens.values", {0, 0, 5}}}, kDeep)).empty());
  EXPECT_TRUE(validate(build(kMin, {{"cu_seqlens.shape", {4}}, {"cu_seqlens.values", {0, 2, 2, 5}},
                                    {"initial_state.shape", {3, 2, 16, 16}}, {"final_state.shape", {3, 2, 16, 16}}},
                               kDeep))
                  .empty());
  // No tokens at all: T = 0, N = 1 empty sequence.
  EXPECT_TRUE(validate(build(kMin, {{"q.shape", {1, 0, 1, 16}}, {"k.shape", {1, 0, 1, 16}}, {"v.shape", {1, 0, 2, 16}},
                                    {"g.shape", {1, 0, 2, 16}}, {"beta.shape", {1, 0, 2}}, {"out.shape", {1, 0, 2, 16}},
                                    {"cu_seqlens.shape", {2}}, {"cu_seqlens.values", {0, 0}},
                                    {"initial_state.shape", {1, 2, 16, 16}}, {"final_state.shape", {1, 2, 16, 16}}},
                               kDeep))
                  .empty());
  auto ds = validate(build(kMin, {{"cu_seqlens.values", {0, 2, 6}}}, kDeep));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message,
            "`cu_seqlens` must start at 0, never decrease and end at T=5, the packed length; cu_seqlens[2]=6 breaks this.");
}

TEST(KdaChunkVarlen, HostCopyOfTheOffsets) {
  auto cpu = [](json shape, json values, const char* dtype = "i64") {
    return json{{"shape", shape}, {"dtype", dtype}, {"device", "cpu"}, {"values", values}};
  };
  // On the host by design, so exempt from the one-device rule.
  EXPECT_TRUE(validate(build(kMin, {{"cu_seqlens_cpu", cpu({3}, {0, 2, 5})}}, kDeep)).empty());
  auto ds = validate(build(kMin, {{"cu_seqlens_cpu", cpu({2}, {0, 5})}}, kDeep));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`cu_seqlens_cpu` must hold the same offsets as `cu_seqlens`: its shape is (2,), cu_seqlens' (3,).");
  ds = validate(build(kMin, {{"cu_seqlens_cpu", cpu({3}, {0, 2, 5}, "f32")}}, kDeep));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_chunk_cu_seqlens_cpu_mismatch);
  // Without cu_seqlens upstream never reads it.
  EXPECT_TRUE(validate(build(kDense, {{"cu_seqlens_cpu", cpu({2}, {0, 9})}}, kDeep)).empty());
}

// ---- robustness, Status, dims, binding ----

TEST(KdaChunkGuards, LowRankEverythingNeverCrashes) {
  const char* names[] = {"q", "k", "v", "g", "beta", "A_log", "dt_bias", "initial_state", "final_state", "out", "cu_seqlens"};
  for (int rank = 0; rank <= 5; ++rank)
    for (bool varlen : {true, false}) {
      json set = json::object();
      for (const char* n : names) set[std::string(n) + ".shape"] = json(std::vector<int>(rank, 2));
      if (varlen) set["cu_seqlens.fill"] = 0;
      else set["cu_seqlens"] = nullptr, set.erase("cu_seqlens.shape");
      auto e = build(kMin, set, kDeep);
      std::vector<Diagnostic> ds;
      EXPECT_NO_THROW(ds = validate(e)) << "rank " << rank;
      EXPECT_FALSE(ds.empty()) << "rank " << rank;
      EXPECT_NO_THROW(first_error(e)) << "rank " << rank;
    }
}

TEST(KdaChunkStatus, ClassesReachCxx) {
  auto e = build(kMin, {{"initial_state.dtype", "f16"}});
  Status s = kda::try_check_chunk(kda::chunk_args(e.bag), e.options);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.first_error()->error_class, ErrorClass::AssertionError);
  EXPECT_THROW(s.raise_if_error(), AssertionError);
  auto z = build(kDense, {{"q.shape", {2, 3, 0, 16}}, {"k.shape", {2, 3, 0, 16}}});
  EXPECT_THROW(kda::check_chunk(kda::chunk_args(z.bag)), ZeroDivisionError);
  EXPECT_THROW(kda::check_chunk(kda::chunk_args(z.bag)), ContractError);
}

TEST(KdaChunkDims, FromValidArguments) {
  auto d = kda::chunk_dims(kda::chunk_args(build(kMin).bag));
  EXPECT_EQ(d.B, 1); EXPECT_EQ(d.T, 5); EXPECT_EQ(d.N, 2); EXPECT_EQ(d.H, 1); EXPECT_EQ(d.HV, 2);
  EXPECT_EQ(d.K, 16); EXPECT_EQ(d.V, 16); EXPECT_FALSE(d.state_v_first);
  d = kda::chunk_dims(kda::chunk_args(build(kDense, {{"flags.transpose_state_layout", true}}).bag));
  EXPECT_EQ(d.B, 2); EXPECT_EQ(d.T, 3); EXPECT_EQ(d.N, 2); EXPECT_TRUE(d.state_v_first);
  EXPECT_THROW(kda::chunk_dims(kda::chunk_args(build(kDense, {{"v.shape", {2, 3, 2}}}).bag)), std::invalid_argument);
}

TEST(KdaChunkBinding, NamesAndAliases) {
  auto e = build(kMin);
  ArgBag bag = e.bag;
  const TensorView out = bag.tensors.at("out");
  bag.tensors.erase("out");
  EXPECT_THROW(kda::chunk_args(bag), std::invalid_argument);
  bag.tensors.emplace("o", out);
  const auto a = kda::chunk_args(bag);
  EXPECT_EQ(a.out.data, out.data);
  EXPECT_FALSE(a.transpose_state_layout.has_value());
  EXPECT_FALSE(a.chunk_size.has_value());
  bag.flags["transpose_state_layout"] = false;
  bag.scalars["chunk_size"] = 32;
  const auto b = kda::chunk_args(bag);
  ASSERT_TRUE(b.transpose_state_layout.has_value());
  EXPECT_FALSE(*b.transpose_state_layout);
  EXPECT_EQ(b.chunk_size, 32.0);
  bag.tensors.erase("g");
  EXPECT_THROW(kda::chunk_args(bag), std::invalid_argument);
}

}  // namespace
}  // namespace kparity
