// kparity::ops: the op table against the contracts and the specs' signatures, dump save → load
// round trips and refusals, output allocation, the reference dispatch and the tolerance comparison.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "kparity/ops/compare.hpp"
#include "kparity/ops/dump.hpp"
#include "kparity/ops/op_table.hpp"

namespace {

using namespace kparity;
namespace fs = std::filesystem;
using Names = std::vector<std::string_view>;

fs::path scratch(const std::string& name) {
  auto d = fs::temp_directory_path() / ("kparity_ops_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Tensor ints(std::vector<std::int64_t> v) {
  Tensor t(DType::i32, {static_cast<std::int64_t>(v.size())});
  for (std::size_t i = 0; i < v.size(); ++i) t.view().store_flat(static_cast<std::int64_t>(i), static_cast<double>(v[i]));
  return t;
}

// A valid sparse/paged_decode call: T = 2 tokens, H = 2 heads, D = 4, a pool of 3 rows.
struct DecodeCall {
  std::map<std::string, Tensor> owned;
  ArgBag bag;
  DecodeCall() {
    owned["q"] = Tensor(DType::bf16, {2, 2, 4});
    owned["q"].fill_normal(1, 0.0, 1.0);
    owned["unified_kv"] = Tensor(DType::bf16, {3, 4});
    owned["unified_kv"].fill_normal(2, 0.0, 1.0);
    owned["kv_indices"] = ints({0, 2, 1});
    owned["kv_indptr"] = ints({0, 2, 3});
    owned["attn_sink"] = Tensor(DType::f32, {2});
    owned["attn_sink"].fill_normal(3, 0.0, 1.0);
    for (auto& [name, t] : owned) bag.tensors[name] = t.view();
    bag.scalars["softmax_scale"] = 0.1;  // not exactly representable: the dump must keep its bits
    bag.flags["return_lse"] = true;
  }
};

TEST(OpTable, EveryContractHasARowAndEveryRowAContract) {
  for (const auto& c : op_contracts()) EXPECT_NE(ops::find_op(c.op), nullptr) << c.op;
  for (const auto& r : ops::op_table()) EXPECT_NE(find_op_contract(r.op), nullptr) << r.op;
  EXPECT_EQ(ops::op_table().size(), op_contracts().size());
}

TEST(OpTable, RowsAreConsistent) {
  for (const auto& r : ops::op_table()) {
    SCOPED_TRACE(std::string(r.op));
    const Names tensors = r.tensors();
    for (auto w : r.written_names()) EXPECT_NE(std::find(tensors.begin(), tensors.end(), w), tensors.end()) << w;
    for (const auto& w : r.written)
      if (!w.only_if.empty()) EXPECT_NE(r.param(w.only_if), nullptr) << w.only_if;
    for (const auto& a : r.aliases) {
      EXPECT_NE(r.param(a.name), nullptr) << a.name;
      if (!a.sets_flag.empty()) EXPECT_NE(r.param(a.sets_flag), nullptr) << a.sets_flag;
    }
    // Positional parameters come first: nothing positional after a keyword-only one.
    bool keywords = false;
    for (const auto& p : r.params) {
      if (p.keyword_only) keywords = true;
      else EXPECT_FALSE(keywords) << p.name << " is positional after a keyword-only parameter";
    }
    // Names are unique.
    for (std::size_t i = 0; i < r.params.size(); ++i)
      for (std::size_t j = i + 1; j < r.params.size(); ++j) EXPECT_NE(r.params[i].name, r.params[j].name);
  }
}

TEST(OpTable, PositionalOrdersAreTheSpecsSignatures) {
  // kda.md B.2.1, verbatim.
  EXPECT_EQ(ops::op_info("kda/replayssm_decode").positional(),
            (Names{"mixed_qkv", "a", "b", "A_log", "dt_bias", "scale", "initial_state", "d_cache", "k_cache", "g_cache",
                   "out", "ssm_state_indices", "write_pos", "force_flush", "use_qk_l2norm_in_kernel", "lower_bound"}));
  EXPECT_EQ(ops::op_info("kda/packed_decode").positional(),
            (Names{"mixed_qkv", "a", "b", "A_log", "dt_bias", "scale", "initial_state", "out", "ssm_state_indices",
                   "use_qk_l2norm_in_kernel", "lower_bound"}));
  // sparse_attention.md A.2 (V-base positional, V-lse keywords) and F.0.
  EXPECT_EQ(ops::op_info("sparse/paged_prefill").positional(),
            (Names{"q", "unified_kv", "kv_indices_prefix", "kv_indptr_prefix", "kv", "kv_indices_extend",
                   "kv_indptr_extend", "attn_sink", "softmax_scale"}));
  EXPECT_EQ(ops::op_info("sparse/paged_decode").positional(),
            (Names{"q", "unified_kv", "kv_indices", "kv_indptr", "attn_sink", "softmax_scale"}));
  EXPECT_EQ(ops::op_info("kda/recurrent").positional(),
            (Names{"q", "k", "v", "g", "beta", "scale", "initial_state", "output_final_state", "use_qk_l2norm_in_kernel",
                   "cu_seqlens"}));
  const ops::OpInfo& replay = ops::op_info("kda/replayssm_decode");
  EXPECT_EQ(replay.param("force_flush")->default_value, "None");
  EXPECT_EQ(replay.param("use_qk_l2norm_in_kernel")->default_value, "False");
  EXPECT_TRUE(replay.param("out")->default_value.empty());  // required upstream
  EXPECT_EQ(replay.scalars(), (Names{"scale", "lower_bound"}));
  EXPECT_EQ(replay.flags(), (Names{"use_qk_l2norm_in_kernel", "beta_in_fp32"}));
  EXPECT_EQ(replay.written_names(), (Names{"out", "initial_state", "d_cache", "k_cache", "g_cache"}));
  EXPECT_EQ(replay.pure_outputs(), (Names{"out"}));
}

TEST(OpTable, UnknownOpsAreNamedWithTheKnownOnes) {
  EXPECT_EQ(ops::find_op("kda/prefill"), nullptr);
  try {
    ops::op_info("kda/prefill");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("kda/replayssm_decode"), std::string::npos) << e.what();
  }
  ArgBag bag;
  EXPECT_THROW(ops::run_reference("kda/prefill", bag, reference::Precision::oracle, {}), std::invalid_argument);
}

TEST(OpTable, WrittenByHonoursOnlyIfFlags) {
  DecodeCall c;
  std::map<std::string, Tensor> owned;
  ops::allocate_outputs("sparse/paged_decode", c.bag, owned);
  ASSERT_TRUE(c.bag.tensors.count("lse"));
  EXPECT_EQ(c.bag.tensors.at("lse").shape(), (Shape{2, 2}));
  EXPECT_EQ(c.bag.tensors.at("lse").dtype, DType::f32);
  EXPECT_EQ(c.bag.tensors.at("out").dtype, DType::bf16);
  const ops::OpInfo& op = ops::op_info("sparse/paged_decode");
  EXPECT_EQ(op.written_by(c.bag), (std::vector<std::string>{"out", "lse"}));
  c.bag.flags["return_lse"] = false;
  EXPECT_EQ(op.written_by(c.bag), (std::vector<std::string>{"out"}));
}

// output_views: the allocate path's shapes and dtypes without storage (kparity.check's upstream calls,
// issue 23 defect 5), equal to what allocate_outputs allocates, the bag left as it was.
TEST(OpTable, OutputViewsAreTheAllocatedOutputsWithoutStorage) {
  DecodeCall c;
  const ArgBag before = c.bag;
  const std::map<std::string, TensorView> views = ops::output_views("sparse/paged_decode", c.bag);
  EXPECT_EQ(c.bag.tensors.size(), before.tensors.size());
  std::map<std::string, Tensor> owned;
  ops::allocate_outputs("sparse/paged_decode", c.bag, owned);
  ASSERT_EQ(views.size(), owned.size());
  for (const auto& [name, t] : owned) {
    ASSERT_TRUE(views.count(name)) << name;
    const TensorView& v = views.at(name);
    EXPECT_EQ(v.data, nullptr) << name;
    EXPECT_EQ(v.shape(), t.shape()) << name;
    EXPECT_EQ(v.stride_vec(), t.view().stride_vec()) << name;
    EXPECT_EQ(v.dtype, t.dtype()) << name;
  }
  EXPECT_TRUE(ops::output_views("sparse/paged_decode", c.bag).empty());  // nothing left to allocate
  owned.clear();  // the next allocation is a real one again: the views-only mode ended with the call
  ArgBag again = before;
  ops::allocate_outputs("sparse/paged_decode", again, owned);
  EXPECT_NE(again.tensors.at("out").data, nullptr);
}

TEST(OpTable, TheReferenceRunsThroughTheTable) {
  DecodeCall c;
  std::map<std::string, Tensor> owned;
  ops::allocate_outputs("sparse/paged_decode", c.bag, owned);
  owned.at("out").poison();
  ops::run_reference("sparse/paged_decode", c.bag, reference::Precision::oracle,
                     ValidateOptions::strict(Entry::reference));
  for (std::int64_t i = 0; i < owned.at("out").numel(); ++i) EXPECT_TRUE(std::isfinite(owned.at("out").view().load_flat(i)));
}

TEST(Dump, SaveThenLoadGivesTheSameCall) {
  const fs::path dir = scratch("roundtrip");
  DecodeCall c;
  c.bag.scalars["softmax_scale"] = 0.1;
  Tensor expected_out(DType::f32, {2, 2, 4});
  expected_out.fill(0.5);
  std::map<std::string, Tensor> owned;
  ops::allocate_outputs("sparse/paged_decode", c.bag, owned);
  const fs::path path = dir / "call.safetensors";
  ops::save_dump(path, "sparse/paged_decode", c.bag, {{"out", expected_out.view()}}, {{"note", "hello"}});

  const ops::Dump d = ops::load_dump(path);
  ASSERT_NE(d.op, nullptr);
  EXPECT_EQ(d.op->op, "sparse/paged_decode");
  EXPECT_TRUE(d.warnings.empty());
  EXPECT_TRUE(d.allocated.empty());  // out and lse were saved
  EXPECT_EQ(d.file.metadata.at("kparity.note"), "hello");
  const double scale = d.bag.scalars.at("softmax_scale");
  EXPECT_EQ(std::memcmp(&scale, &c.bag.scalars.at("softmax_scale"), sizeof scale), 0);
  EXPECT_TRUE(d.bag.flags.at("return_lse"));
  for (const auto& [name, v] : c.bag.tensors) {
    ASSERT_TRUE(d.bag.tensors.count(name)) << name;
    const TensorView& back = d.bag.tensors.at(name);
    EXPECT_EQ(back.dtype, v.dtype) << name;
    EXPECT_EQ(back.shape(), v.shape()) << name;
    for (std::int64_t i = 0; i < v.numel(); ++i) EXPECT_EQ(back.load_flat(i), v.load_flat(i)) << name;
  }
  ASSERT_TRUE(d.expected.count("out"));
  EXPECT_EQ(d.expected.at("out")->view().load_flat(3), 0.5);
  fs::remove_all(dir);
}

TEST(Dump, NonFiniteScalarsRoundTrip) {
  const fs::path dir = scratch("nonfinite");
  DecodeCall c;
  c.bag.scalars["softmax_scale"] = std::numeric_limits<double>::infinity();
  ops::save_dump(dir / "inf.safetensors", "sparse/paged_decode", c.bag);
  EXPECT_EQ(ops::load_dump(dir / "inf.safetensors").bag.scalars.at("softmax_scale"), c.bag.scalars.at("softmax_scale"));
  c.bag.scalars["softmax_scale"] = std::nan("");
  ops::save_dump(dir / "nan.safetensors", "sparse/paged_decode", c.bag);
  EXPECT_TRUE(std::isnan(ops::load_dump(dir / "nan.safetensors").bag.scalars.at("softmax_scale")));
  fs::remove_all(dir);
}

TEST(Dump, SaveRefusesWhatLoadWouldRefuse) {
  const fs::path dir = scratch("refuse");
  DecodeCall c;
  EXPECT_THROW(ops::save_dump(dir / "a.safetensors", "kda/prefill", c.bag), ops::DumpError);
  Tensor t(DType::f32, {2});
  EXPECT_THROW(ops::save_dump(dir / "b.safetensors", "sparse/paged_decode", c.bag, {{"q", t.view()}}), ops::DumpError);
  EXPECT_FALSE(fs::exists(dir / "a.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "b.safetensors"));
  fs::remove_all(dir);
}

TEST(Dump, MissingOutputsAreAllocatedAndAliasesRead) {
  const fs::path dir = scratch("alias");
  // kda/recurrent spelled the dump way: `b` for logit beta, `o` for the output, `use_qk_l2norm`.
  std::map<std::string, TensorView> tensors;
  Tensor q(DType::f32, {3, 1, 4}), k(DType::f32, {3, 1, 4}), v(DType::f32, {3, 1, 4}), g(DType::f32, {3, 1, 4}),
      b(DType::f32, {3, 1}), o(DType::f32, {3, 1, 4});
  tensors = {{"q", q.view()}, {"k", k.view()}, {"v", v.view()}, {"g", g.view()}, {"b", b.view()}, {"o", o.view()}};
  write_safetensors(dir / "rec.safetensors", tensors, {{"op", "kda/recurrent"}, {"use_qk_l2norm", "true"}});
  const ops::Dump d = ops::load_dump(dir / "rec.safetensors");
  EXPECT_TRUE(d.bag.tensors.count("beta"));
  EXPECT_TRUE(d.bag.tensors.count("out"));
  EXPECT_TRUE(d.bag.flags.at("beta_is_logits"));
  EXPECT_TRUE(d.bag.flags.at("use_qk_l2norm_in_kernel"));
  ASSERT_TRUE(d.allocated.count("final_state"));  // [N = 1, HV, V, K], fp32 without an initial state
  EXPECT_EQ(d.allocated.at("final_state").shape(), (Shape{1, 1, 4, 4}));
  // Both spellings of beta: refused, naming both.
  tensors["beta"] = b.view();
  write_safetensors(dir / "both.safetensors", tensors, {{"op", "kda/recurrent"}});
  try {
    ops::load_dump(dir / "both.safetensors");
    FAIL() << "no throw";
  } catch (const ops::DumpError& e) {
    EXPECT_STREQ(e.what(), "kda/recurrent: the dump has both `beta` (probabilities) and `b` (logits); keep one");
  }
  fs::remove_all(dir);
}

TEST(Compare, TheRuleAndTheWorstElement) {
  Tensor got(DType::f32, {2, 2}), want(DType::f32, {2, 2});
  for (std::int64_t i = 0; i < 4; ++i) want.view().store_flat(i, 1.0);
  got.fill(1.0);
  got.view().store_flat(1, 1.05);  // 0.05 beyond a 0.01 bound: 5x
  got.view().store_flat(2, 1.5);   // 50x: the worst
  const ops::Comparison c = ops::compare(got.view(), want.view(), {0.01, 0.0});
  EXPECT_FALSE(c.pass());
  EXPECT_EQ(c.mismatched, 2);
  EXPECT_EQ(c.count, 4);
  EXPECT_NEAR(c.max_abs, 0.5, 1e-12);
  EXPECT_NE(c.worst.find("at (1, 0): actual 1.5, expected 1"), std::string::npos) << c.worst;

  // NaN matches NaN, infinities must match exactly, -0 equals +0, a finite expectation needs a finite result.
  Tensor a(DType::f32, {4}), e(DType::f32, {4});
  const double nan = std::nan(""), inf = INFINITY;
  for (auto [i, x, y] : {std::tuple{0, nan, nan}, {1, inf, inf}, {2, -0.0, 0.0}, {3, 2.0, 2.0}})
    a.view().store_flat(i, x), e.view().store_flat(i, y);
  EXPECT_TRUE(ops::compare(a.view(), e.view(), {}).pass());
  a.view().store_flat(1, -inf);
  EXPECT_EQ(ops::compare(a.view(), e.view(), {}).mismatched, 1);
  a.view().store_flat(1, inf);
  a.view().store_flat(3, inf);
  EXPECT_EQ(ops::compare(a.view(), e.view(), {1e9, 1e9}).mismatched, 1);

  Tensor other(DType::f32, {4, 1});
  const ops::Comparison s = ops::compare(other.view(), e.view(), {});
  EXPECT_FALSE(s.pass());
  EXPECT_TRUE(s.shape_mismatch);
  EXPECT_EQ(s.problem, "shape (4, 1) but expected (4,)");
}

TEST(Compare, DocumentedTolerancesTakeTheLooserTorchDefault) {
  const ops::Tolerance out = ops::documented_tolerance("kda/packed_decode", "out", DType::bf16, DType::bf16);
  EXPECT_EQ(out.atol, 1e-4);   // the spec's 1e-4 beats torch's bf16 atol 1e-5
  EXPECT_EQ(out.rtol, 1.6e-2);  // torch's bf16 rtol beats the spec's 1e-4
  const ops::Tolerance idx = ops::documented_tolerance("kda/packed_decode", "out", DType::i32, DType::i32);
  EXPECT_EQ(idx.atol, 0.0);
  EXPECT_EQ(idx.rtol, 0.0);
}

}  // namespace
