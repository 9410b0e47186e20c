// Contracts of the KDA ops: upstream order, verbatim messages, guarded skipping, deep checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/examples.hpp"
#include "contracts_kda/contract_examples.hpp"
#include "support/diagnostic_ids.hpp"

namespace kparity {
namespace {

using nlohmann::json;

using namespace contract_test;

using test::has;
using test::ids_of;

// ---- rendered examples of the spec (C.1, C.2) ----

TEST(KdaMessages, WritePosShapeRendersOneElementTuple) {
  auto e = build("kda.replayssm.minimal", {{"mixed_qkv.shape", {3, 64}}, {"a.shape", {3, 2, 16}}, {"b.shape", {3, 2}},
                                           {"out.shape", {3, 1, 2, 16}}, {"ssm_state_indices.shape", {3}},
                                           {"ssm_state_indices.values", {2, 0, 1}}, {"force_flush.shape", {3}},
                                           {"force_flush.values", {0, 0, 0}}, {"write_pos.shape", {4}},
                                           {"write_pos.values", {0, 0, 0, 0}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_write_pos_shape);
  EXPECT_EQ(d->message, "`write_pos` must have shape (3,).");
  EXPECT_EQ(d->error_class, ErrorClass::ValueError);
}

TEST(KdaMessages, StateIndicesShape) {
  auto e = build("kda.packed.minimal", {{"ssm_state_indices.shape", {4}}, {"ssm_state_indices.values", {1, -1, 3, 0}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_ssm_state_indices_shape);
  EXPECT_EQ(d->message, "`ssm_state_indices` must have shape [B] (got (4,); expected (3,)).");
}

TEST(KdaMessages, OutShapeStartsWithPythonTuple) {
  auto e = build("kda.packed.minimal", {{"mixed_qkv.shape", {3, 544}}, {"a.shape", {3, 64}}, {"b.shape", {3, 4}},
                                        {"A_log.shape", {4}}, {"dt_bias.shape", {64}},
                                        {"initial_state.shape", {4, 4, 128, 16}}, {"out.shape", {3, 4, 128}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_out_shape);
  EXPECT_EQ(d->message.rfind("`out` must have shape (3, 1, 4, 128) (got out.shape=", 0), 0u) << d->message;
  EXPECT_EQ(d->message, "`out` must have shape (3, 1, 4, 128) (got out.shape=(3, 4, 128)).");
}

TEST(KdaMessages, GCacheDtypeCarriesTheOperandAsANote) {
  auto d = first_error(build("kda.replayssm.minimal", {{"g_cache.dtype", "bf16"}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, "066bd06e9ab538bd");
  EXPECT_EQ(d->message, "`g_cache` must have dtype torch.float32.");
  ASSERT_FALSE(d->notes.empty());
  EXPECT_NE(d->notes[0].find("torch.bfloat16"), std::string::npos);
  EXPECT_EQ(d->location, "kda/replayssm_decode::arg[g_cache].dtype");
}

TEST(KdaMessages, ForceFlushDeviceSeed) {
  auto d = first_error(build("kda.replayssm.minimal", {{"force_flush.device", "cpu"}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, "b62325e96d849b25");
  EXPECT_EQ(d->message, "`force_flush` must be on the same device as the inputs.");
}

TEST(KdaMessages, ForceFlushNoneIsValid) {
  auto e = build("kda.replayssm.minimal", {{"force_flush", nullptr}}, kDeep);
  EXPECT_TRUE(validate(e).empty());
}

// ---- order: check() reports the earliest, validate() all ----

TEST(KdaOrder, PackedFirstErrorWinsAndValidateReportsAll) {
  auto e = build("kda.packed.minimal", {{"mixed_qkv.strides", {128, 2}}, {"initial_state.shape", {4, 2, 256}}, {"b.shape", {3, 2, 1}}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_mixed_qkv_last_dim_stride);
  auto all = ids_of(validate(e));
  std::vector<std::string> want = {std::string(ids::kda_mixed_qkv_last_dim_stride), std::string(ids::kda_a_b_ndim),
                                   std::string(ids::kda_initial_state_ndim)};
  EXPECT_EQ(all, want);
}

TEST(KdaOrder, ReplayC2RunsBeforeCursorChecks) {
  auto e = build("kda.replayssm.minimal", {{"b.shape", {2, 3}}, {"write_pos.dtype", "i64"}, {"g_cache.dtype", "bf16"}});
  auto d = first_error(e);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_b_shape);
  EXPECT_EQ(d->message, "`b` must have shape [B, HV] with HV=2 (got b.shape=(2, 3)).");
  // Shared C.2 entries keep their id but the location names the op that ran them.
  EXPECT_EQ(d->location.rfind("kda/replayssm_decode::", 0), 0u);
  auto all = ids_of(validate(e));
  std::vector<std::string> want = {std::string(ids::kda_b_shape), std::string(ids::kda_write_pos_dtype),
                                   std::string(ids::kda_g_cache_dtype)};
  EXPECT_EQ(all, want);
}

TEST(KdaOrder, ImplicitFailuresAtTheirUpstreamPosition) {
  // #0 before #1.
  auto d = first_error(build("kda.replayssm.minimal", {{"mixed_qkv.shape", json::array()}, {"a.shape", {2, 2, 4, 4}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_replayssm_batch_dim);
  EXPECT_EQ(d->error_class, ErrorClass::IndexError);
  // #3 before C.2.
  d = first_error(build("kda.replayssm.minimal", {{"a.shape", {1, 1, 15}}, {"b.shape", {2, 5}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_replayssm_a_view);
  EXPECT_EQ(d->error_class, ErrorClass::RuntimeError);
  EXPECT_EQ(d->message, "KDA `a` of shape (1, 1, 15) cannot be viewed as [batch, -1] with batch=2.");
  // #8: IndexError before the L >= 1 check and after force_flush.
  d = first_error(build("kda.replayssm.minimal", {{"d_cache.shape", {3, 2}}, {"g_cache.dtype", "bf16"}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_d_cache_ndim);
  EXPECT_EQ(d->error_class, ErrorClass::IndexError);
}

TEST(KdaOrder, EmptyBatchIsAViewErrorUpstreamAndItsOwnEntryWithExtra) {
  auto d = first_error(build("kda.replayssm.minimal", {{"mixed_qkv.shape", {0, 64}}}));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_replayssm_a_view);
  d = first_error(build("kda.replayssm.minimal", {{"mixed_qkv.shape", {0, 64}}}, kExtra));
  ASSERT_TRUE(d);
  EXPECT_EQ(d->id, ids::kda_replayssm_batch_zero);
  EXPECT_EQ(d->error_class, ErrorClass::RuntimeError);
  auto all = validate(build("kda.replayssm.minimal", {{"mixed_qkv.shape", {0, 64}}}, kExtra));
  EXPECT_FALSE(has(all, ids::kda_replayssm_a_view));
}

TEST(KdaOrder, ExtrasOffByDefault) {
  auto e = build("kda.packed.minimal", {{"ssm_state_indices.values", {1, 1, 9}}, {"scalars.lower_bound", 3.0}});
  EXPECT_TRUE(validate(e).empty());
}

// ---- guarded skipping in validate() ----

TEST(KdaGuards, TwoDimStateSkipsDependentChecks) {
  auto e = build("kda.replayssm.minimal", {{"initial_state.shape", {3, 512}}, {"g_cache.dtype", "f16"}}, kDeep);
  std::vector<Diagnostic> ds;
  ASSERT_NO_THROW(ds = validate(e));
  EXPECT_TRUE(has(ds, ids::kda_initial_state_ndim));
  EXPECT_TRUE(has(ds, ids::kda_g_cache_dtype));
  for (auto id : {ids::kda_head_dims_power_of_two, ids::kda_a_shape, ids::kda_out_shape, ids::kda_d_cache_shape,
                  ids::kda_k_cache_shape, ids::kda_g_cache_shape})
    EXPECT_FALSE(has(ds, id)) << id;
}

TEST(KdaGuards, LowRankEverythingNeverCrashes) {
  const char* names[] = {"mixed_qkv", "a", "b", "A_log", "dt_bias", "initial_state", "d_cache", "k_cache",
                         "g_cache", "out", "ssm_state_indices", "write_pos", "force_flush"};
  for (int rank = 0; rank <= 5; ++rank) {
    json set = json::object();
    for (const char* n : names) set[std::string(n) + ".shape"] = json(std::vector<int>(rank, 2));
    for (const char* n : {"ssm_state_indices", "write_pos", "force_flush"}) set[std::string(n) + ".fill"] = 0;
    auto e = build("kda.replayssm.minimal", set, kDeep);
    EXPECT_NO_THROW(validate(e)) << "rank " << rank;
    EXPECT_NO_THROW(first_error(e)) << "rank " << rank;
    auto p = build("kda.packed.minimal", {{"initial_state.shape", std::vector<int>(rank, 2)},
                                          {"mixed_qkv.shape", std::vector<int>(rank, 3)}}, kDeep);
    EXPECT_NO_THROW(validate(p));
  }
  auto r = build("kda.recurrent.minimal", {{"q.shape", {5}}, {"v.shape", json::array()}, {"cu_seqlens.shape", {1, 3}},
                                           {"cu_seqlens.fill", 0}}, kDeep);
  std::vector<Diagnostic> ds;
  ASSERT_NO_THROW(ds = validate(r));
  EXPECT_TRUE(has(ds, ids::kda_recurrent_q_shape));
  EXPECT_TRUE(has(ds, ids::kda_recurrent_cu_seqlens_shape));
}

// ---- the C++ power-of-two trap (C.0 item 7) ----

TEST(KdaPowerOfTwo, KeyDims) {
  struct Case { int K; bool pow2; };
  for (auto [K, pow2] : {Case{0, false}, Case{1, true}, Case{3, false}, Case{16, true}, Case{24, false}, Case{128, true}}) {
    auto e = build("kda.packed.minimal", {{"initial_state.shape", {4, 2, 16, K}}, {"a.shape", {3, 2 * K}},
                                          {"dt_bias.shape", {2 * K}}, {"mixed_qkv.shape", {3, 2 * K + 32}}});
    auto ds = validate(e);
    EXPECT_EQ(has(ds, ids::kda_head_dims_power_of_two), !pow2) << "K=" << K;
    if (pow2) EXPECT_TRUE(ds.empty()) << "K=" << K;
    if (!pow2) EXPECT_EQ(ds.front().message, "Helion KDA decode requires power-of-two key and value head dimensions (got K=" +
                                                 std::to_string(K) + ", V=16).");
  }
}

// ---- deep checks, boundary values ----

TEST(KdaDeep, WritePosBoundaries) {
  auto run = [](json values) { return validate(build("kda.replayssm.minimal", {{"write_pos.values", values}}, kDeep)); };
  EXPECT_TRUE(run({0, 3}).empty());  // L - 1 = 3 is the natural flush position
  auto ds = run({1, 4});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_write_pos_out_of_range);
  EXPECT_EQ(ds[0].message, "write_pos[1]=4 is outside [0, 3] for ring length L=4.");
  EXPECT_EQ(ds[0].error_class, ErrorClass::IndexError);
  ds = run({-1, 0});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "write_pos[0]=-1 is outside [0, 3] for ring length L=4.");
  // A padding row's cursor is never read.
  EXPECT_TRUE(validate(build("kda.replayssm.minimal", {{"ssm_state_indices.values", {-1, 0}}, {"write_pos.values", {9, 1}}},
                             kDeep)).empty());
}

TEST(KdaDeep, SlotBoundariesAndPadding) {
  auto run = [](json values) { return validate(build("kda.packed.minimal", {{"ssm_state_indices.values", values}}, kDeep)); };
  EXPECT_TRUE(run({3, -1, 0}).empty());   // slots - 1 is the last valid slot
  EXPECT_TRUE(run({-1, -1, -5}).empty()); // padding rows may repeat
  auto ds = run({4, -1, 0});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_state_slot_out_of_range);
  EXPECT_EQ(ds[0].message, "ssm_state_indices[0]=4 is out of range for a state pool of 4 slots.");
  ds = run({2, 0, 2});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "Rows 0 and 2 share state slot 2; each row needs its own slot.");
}

TEST(KdaDeep, RingSlots) {
  // Rings smaller than the pool: an error without slot data, precise with it.
  auto ds = validate(build("kda.replayssm.minimal", {{"k_cache.shape", {2, 1, 4, 16}}}, kExtra));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_ring_slots_fewer);
  ds = validate(build("kda.replayssm.minimal", {{"k_cache.shape", {2, 1, 4, 16}}, {"ssm_state_indices.values", {1, 0}}}, kDeep));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_ring_slots_differ);
  EXPECT_EQ(ds[0].severity, Severity::warning);
  ds = validate(build("kda.replayssm.minimal", {{"k_cache.shape", {2, 1, 4, 16}}}, kDeep));
  ASSERT_EQ(ds.size(), 2u);
  EXPECT_EQ(ds[1].message, "ssm_state_indices[0]=2 is out of range for k_cache with 2 slots.");
  // A launcher's shape pass before its deep pass (found by the device mode of
  // rejected-call-never-launches): the deep pass decides, so the stand-in error stays quiet.
  ds = validate(build("kda.replayssm.minimal", {{"k_cache.shape", {2, 1, 4, 16}}, {"ssm_state_indices.values", {1, 0}}},
                      {{"extra", true}, {"deep_pass_follows", true}}));
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_ring_slots_differ);
  EXPECT_EQ(ds[0].severity, Severity::warning);
}

TEST(KdaDeep, ForceFlushValueIsAWarning) {
  auto e = build("kda.replayssm.minimal", {{"force_flush.values", {0, 7}}}, kDeep);
  EXPECT_FALSE(first_error(e));
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].severity, Severity::warning);
  EXPECT_EQ(ds[0].message, "force_flush[1]=7; expected 0 or 1.");
}

TEST(KdaDeep, NonFiniteOnlyWhereTheKernelReads) {
  // Padding row 1 of the packed fixture is never read.
  auto e = build("kda.packed.minimal", {{"mixed_qkv.fill", 0.0}}, kDeep);
  TensorView q = e.bag.tensors.at("mixed_qkv").with_device(Device::cpu());
  q.store(std::vector<std::int64_t>{1, 5}, std::nan(""));
  EXPECT_TRUE(validate(e).empty());
  q.store(std::vector<std::int64_t>{2, 5}, INFINITY);
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`mixed_qkv` contains a non-finite value at [2, 5].");
  // An unreferenced state slot (0, 2) may hold anything; a referenced one may not.
  auto s = build("kda.packed.minimal", {{"initial_state.fill", 0.0}}, kDeep);
  TensorView st = s.bag.tensors.at("initial_state").with_device(Device::cpu());
  st.store(std::vector<std::int64_t>{0, 1, 2, 3}, std::nan(""));
  EXPECT_TRUE(validate(s).empty());
  st.store(std::vector<std::int64_t>{3, 1, 2, 3}, std::nan(""));
  ds = validate(s);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`initial_state` contains a non-finite value at [3, 1, 2, 3].");
}

TEST(KdaDeep, RingEntriesAtOrPastTheCursorAreIgnored) {
  // Row 0 uses slot 2 with cursor 1: only ring position 0 is valid.
  auto e = build("kda.replayssm.minimal", {{"g_cache.fill", 0.0}}, kDeep);
  TensorView g = e.bag.tensors.at("g_cache").with_device(Device::cpu());
  g.store(std::vector<std::int64_t>{2, 1, 1, 0}, std::nan(""));
  EXPECT_TRUE(validate(e).empty());
  g.store(std::vector<std::int64_t>{2, 1, 0, 4}, std::nan(""));
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_non_finite);
  EXPECT_EQ(ds[0].message, "`g_cache` contains a non-finite value at [2, 1, 0, 4].");
}

TEST(KdaDeep, CuSeqlens) {
  auto run = [](json values) { return validate(build("kda.recurrent.minimal", {{"cu_seqlens.values", values}}, kDeep)); };
  EXPECT_TRUE(run({0, 5, 5}).empty());  // an empty sequence is fine
  EXPECT_TRUE(run({0, 0, 5}).empty());
  auto ds = run({1, 2, 5});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`cu_seqlens` must start at 0, never decrease and end at T=5; cu_seqlens[0]=1 breaks this.");
  ds = run({0, 3, 2});
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`cu_seqlens` must start at 0, never decrease and end at T=5; cu_seqlens[2]=2 breaks this.");
  EXPECT_EQ(run({0, 2, 6}).size(), 1u);
}

// ---- memory overlap (needs real aliasing, which fixtures cannot express) ----

TEST(KdaExtra, OutOverlap) {
  auto e = build("kda.packed.minimal", {}, kExtra);
  TensorView out = e.bag.tensors.at("out");
  const TensorView& qkv = e.bag.tensors.at("mixed_qkv");
  out.data = qkv.data;
  e.bag.tensors["out"] = out;
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].id, ids::kda_out_overlap);
  EXPECT_EQ(ds[0].message, "`out` overlaps `mixed_qkv`.");

  auto r = build("kda.recurrent.minimal", {}, kExtra);
  TensorView rout = r.bag.tensors.at("out");
  rout.data = r.bag.tensors.at("v").data;
  r.bag.tensors["out"] = rout;
  ds = validate(r);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "`out` overlaps `v`.");
}

TEST(KdaExtra, NonFiniteScalars) {
  auto e = build("kda.packed.minimal", {}, kExtra);
  e.bag.scalars["scale"] = INFINITY;
  auto ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "scale=inf must be finite and positive.");
  e.bag.scalars["scale"] = 0.25;
  e.bag.scalars["lower_bound"] = -INFINITY;
  ds = validate(e);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "lower_bound=-inf must be finite and non-positive.");
  auto r = build("kda.recurrent.minimal", {}, kExtra);
  r.bag.scalars["scale"] = NAN;
  ds = validate(r);
  ASSERT_EQ(ds.size(), 1u);
  EXPECT_EQ(ds[0].message, "scale=nan must be finite.");
}

// ---- Status form ----

TEST(KdaStatus, NonThrowingForm) {
  auto bad = build("kda.replayssm.minimal", {{"g_cache.dtype", "bf16"}, {"write_pos.dtype", "i64"}});
  Status s = kda::try_check_replayssm_decode(kda::replayssm_decode_args(bad.bag), bad.options);
  EXPECT_FALSE(s.ok());
  ASSERT_NE(s.first_error(), nullptr);
  EXPECT_EQ(s.first_error()->id, ids::kda_write_pos_dtype);
  EXPECT_THROW(s.raise_if_error(), ValueError);

  auto good = build("kda.packed.minimal", {}, kDeep);
  EXPECT_TRUE(kda::try_check_packed_decode(kda::packed_decode_args(good.bag), good.options).ok());
  auto rec = build("kda.recurrent.minimal", {{"v.shape", {5, 3, 16}}});
  Status rs = kda::try_check_recurrent(kda::recurrent_args(rec.bag), rec.options);
  EXPECT_FALSE(rs.ok());
  // Warnings alone keep the status ok.
  auto warn = build("kda.packed.minimal", {{"scalars.scale", -1.0}}, kExtra);
  Status ws = kda::try_check_packed_decode(kda::packed_decode_args(warn.bag), warn.options);
  EXPECT_TRUE(ws.ok());
  EXPECT_EQ(ws.diagnostics.size(), 1u);
}

TEST(KdaDims, FromValidArguments) {
  auto r = build("kda.replayssm.minimal");
  auto d = kda::replayssm_dims(kda::replayssm_decode_args(r.bag));
  EXPECT_EQ(d.B, 2); EXPECT_EQ(d.H, 1); EXPECT_EQ(d.HV, 2); EXPECT_EQ(d.K, 16); EXPECT_EQ(d.V, 16); EXPECT_EQ(d.L, 4);
  auto p = build("kda.packed.minimal");
  auto pd = kda::packed_decode_dims(kda::packed_decode_args(p.bag));
  EXPECT_EQ(pd.B, 3);
  auto c = build("kda.recurrent.minimal");
  auto cd = kda::recurrent_dims(kda::recurrent_args(c.bag));
  EXPECT_EQ(cd.T, 5); EXPECT_EQ(cd.N, 2); EXPECT_EQ(cd.HV, 2);
  EXPECT_THROW(kda::packed_decode_dims(kda::packed_decode_args(build("kda.packed.minimal", {{"b.shape", {3, 3}}}).bag)),
               std::invalid_argument);
}

// ---- every KDA catalog entry: its examples behave (the generic catalog test does this too) ----

TEST(KdaCatalog, EveryEntryExampleFiresItsId) {
  int n = 0;
  for (const auto& entry : Catalog::embedded().entries()) {
    if (entry.op.rfind("kda/", 0) != 0 || entry.record.value("emittedBy", "contracts") == "kernels") continue;
    ++n;
    SCOPED_TRACE(entry.slug);
    BuiltExample err, fix;
    try {
      err = build_example(entry.record.at("erroneousExample"));
      fix = build_example(entry.record.at("fixedExample"));
    } catch (const std::exception& ex) {
      // Non-finite scalars and aliased tensors need two example-builder features that are proposed
      // but not there yet ("inf" strings for scalars, `<tensor>.alias`); KdaExtra covers these checks.
      const std::string what = ex.what();
      if (what.find("`alias`") != std::string::npos ||
          (what.find("scalars.") != std::string::npos && what.find("expected a number") != std::string::npos)) {
        std::printf("pending example-builder feature for %s: %s\n", entry.slug.c_str(), what.c_str());
        continue;
      }
      ADD_FAILURE() << "example does not build: " << what;
      continue;
    }
    EXPECT_TRUE(validate(fix).empty()) << (validate(fix).empty() ? "" : validate(fix).front().message);
    if (entry.severity == Severity::error) {
      auto d = first_error(err);
      ASSERT_TRUE(d);
      EXPECT_EQ(d->id, entry.id) << d->message;
      EXPECT_EQ(d->error_class, entry.error_class);
      EXPECT_EQ(d->message, entry.error_message);
    } else {
      EXPECT_FALSE(first_error(err));
      auto ds = validate(err);
      ASSERT_FALSE(ds.empty());
      EXPECT_EQ(ds.front().id, entry.id);
      EXPECT_EQ(ds.front().message, entry.error_message);
    }
  }
  EXPECT_EQ(n, 118);  // 78 of the recurrent and decode ops, 40 of kda/chunk
}

}  // namespace
}  // namespace kparity
