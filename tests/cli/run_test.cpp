// `kparity run` on small dumps written with kparity::write_safetensors: one KDA op (ReplaySSM)
// and one sparse op (paged prefill), outputs, violations and expected.* comparisons.
#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "cli/cli_runner.hpp"
#include "kparity/core/safetensors.hpp"
#include "kparity/core/tensor.hpp"

namespace kparity::test {
namespace {

namespace fs = std::filesystem;

struct DumpSpec {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::string> metadata;
  void write(const fs::path& p) const {
    std::map<std::string, TensorView> views;
    for (const auto& [n, t] : tensors) views[n] = t.view();
    write_safetensors(p, views, metadata);
  }
};

Tensor ints(DType t, Shape shape, std::initializer_list<std::int64_t> values) {
  Tensor x(t, std::move(shape));
  std::int64_t i = 0;
  for (auto v : values) x.view().store_flat(i++, static_cast<double>(v));
  return x;
}

// catalog fixture kda.replayssm.minimal: B = 2, H = 1, HV = 2, K = V = 16, L = 4, three slots.
DumpSpec replayssm_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["mixed_qkv"] = Tensor(DType::bf16, {2, 64});
  t["mixed_qkv"].fill_normal(1, 0.0, 0.5);
  t["a"] = Tensor(DType::bf16, {2, 2, 16});
  t["a"].fill_normal(2, 0.0, 0.5);
  t["b"] = Tensor(DType::bf16, {2, 2});
  t["b"].fill_normal(3, 0.0, 0.5);
  t["A_log"] = Tensor(DType::f32, {2});
  t["A_log"].fill_normal(4, 0.0, 0.3);
  t["dt_bias"] = Tensor(DType::f32, {2, 16});
  t["dt_bias"].fill_normal(5, 0.0, 0.1);
  t["initial_state"] = Tensor(DType::f32, {3, 2, 16, 16});
  t["initial_state"].fill_normal(6, 0.0, 0.05);
  t["d_cache"] = Tensor(DType::bf16, {3, 2, 4, 16});
  t["d_cache"].fill_normal(7, 0.0, 0.05);
  t["k_cache"] = Tensor(DType::bf16, {3, 1, 4, 16});
  t["k_cache"].fill_normal(8, 0.0, 0.3);
  t["g_cache"] = Tensor(DType::f32, {3, 2, 4, 16});
  t["g_cache"].fill_uniform(9, -0.1, 0.0);
  t["out"] = Tensor(DType::bf16, {2, 1, 2, 16});
  t["ssm_state_indices"] = ints(DType::i32, {2}, {2, 0});
  t["write_pos"] = ints(DType::i32, {2}, {1, 3});
  t["force_flush"] = ints(DType::i32, {2}, {0, 0});
  d.metadata = {{"op", "kda/replayssm_decode"},
                {"scale", "0.25"},
                {"lower_bound", "-5.0"},
                {"use_qk_l2norm_in_kernel", "true"}};
  return d;
}

// catalog fixture sparse.prefill.minimal: T = 2, H = 2, D = 64; `out` and `lse` left to the CLI.
DumpSpec prefill_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["q"] = Tensor(DType::bf16, {2, 2, 64});
  t["q"].fill_normal(11, 0.0, 0.5);
  t["unified_kv"] = Tensor(DType::bf16, {8, 64});
  t["unified_kv"].fill_normal(12, 0.0, 0.5);
  t["kv_indices_prefix"] = ints(DType::i32, {4}, {5, -1, 0, 7});
  t["kv_indptr_prefix"] = ints(DType::i32, {3}, {0, 2, 4});
  t["kv"] = Tensor(DType::bf16, {3, 64});
  t["kv"].fill_normal(13, 0.0, 0.5);
  t["kv_indices_extend"] = ints(DType::i32, {3}, {0, 0, 1});
  t["kv_indptr_extend"] = ints(DType::i32, {3}, {0, 1, 3});
  t["attn_sink"] = Tensor(DType::f32, {2});
  t["attn_sink"].fill_normal(14, 0.0, 0.5);
  d.metadata = {{"op", "sparse/paged_prefill"},
                {"softmax_scale", "0.125"},
                {"replicated_logit_shift", "0.0"},
                {"return_lse", "true"}};
  return d;
}

// catalog fixture kda.recurrent.minimal in the issue-3 spelling: beta as logits under `b`, flag
// `use_qk_l2norm`, no `out` or `final_state` (the CLI allocates them).
DumpSpec recurrent_dump() {
  DumpSpec d;
  auto& t = d.tensors;
  t["q"] = Tensor(DType::bf16, {5, 1, 16});
  t["q"].fill_normal(21, 0.0, 0.5);
  t["k"] = Tensor(DType::bf16, {5, 1, 16});
  t["k"].fill_normal(22, 0.0, 0.5);
  t["v"] = Tensor(DType::bf16, {5, 2, 16});
  t["v"].fill_normal(23, 0.0, 0.5);
  t["a"] = Tensor(DType::bf16, {5, 2, 16});
  t["a"].fill_normal(24, 0.0, 0.5);
  t["dt_bias"] = Tensor(DType::f32, {2, 16});
  t["dt_bias"].fill_normal(25, 0.0, 0.1);
  t["A_log"] = Tensor(DType::f32, {2});
  t["A_log"].fill_normal(26, 0.0, 0.3);
  t["b"] = Tensor(DType::bf16, {5, 2});
  t["b"].fill_normal(27, 0.0, 0.5);
  t["initial_state"] = Tensor(DType::f32, {2, 2, 16, 16});
  t["initial_state"].fill_normal(28, 0.0, 0.05);
  t["cu_seqlens"] = ints(DType::i32, {3}, {0, 2, 5});
  d.metadata = {{"op", "kda/recurrent"}, {"scale", "0.25"}, {"use_qk_l2norm", "true"}};
  return d;
}

double sum_abs(const TensorView& v) {
  double s = 0;
  for (std::int64_t i = 0; i < v.numel(); ++i) s += std::fabs(v.load_flat(i));
  return s;
}

class RunCli : public ::testing::Test {
 protected:
  void SetUp() override { dir = scratch_dir("run"); }
  void TearDown() override { fs::remove_all(dir); }
  CliResult run(const DumpSpec& d, std::vector<std::string> extra = {}) {
    d.write(dir / "dump.safetensors");
    std::vector<std::string> args = {"run", (dir / "dump.safetensors").string(), "-o", result().string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args, dir);
  }
  fs::path result() const { return dir / "result.safetensors"; }
  fs::path dir;
};

TEST_F(RunCli, ReplaySsmWritesOutputsAndInPlaceTensors) {
  auto r = run(replayssm_dump());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto res = read_safetensors(result());
  for (const char* n : {"out", "initial_state", "d_cache", "k_cache", "g_cache"}) ASSERT_TRUE(res.tensors.count(n)) << n;
  EXPECT_EQ(res.tensors.size(), 5u);
  EXPECT_EQ(res.tensors["out"].shape(), (Shape{2, 1, 2, 16}));
  EXPECT_EQ(res.tensors["out"].dtype(), DType::bf16);
  EXPECT_GT(sum_abs(res.tensors["out"].view()), 0.0);
  EXPECT_EQ(res.metadata["op"], "kda/replayssm_decode");
}

TEST_F(RunCli, OutDtypeF32WidensOutputs) {
  for (const char* precision : {"oracle", "faithful"}) {
    auto r = run(replayssm_dump(), {"--precision", precision, "--out-dtype", "f32"});
    ASSERT_EQ(r.rc, 0) << precision << r.out << r.err;
    auto res = read_safetensors(result());
    for (const char* n : {"out", "d_cache", "k_cache"}) EXPECT_EQ(res.tensors[n].dtype(), DType::f32) << n;
  }
  auto r = run(replayssm_dump(), {"--out-dtype", "f64"});
  EXPECT_EQ(r.rc, 2);
}

TEST_F(RunCli, ViolationExitsTwoAndWritesNothing) {
  DumpSpec d = replayssm_dump();
  d.tensors["g_cache"] = Tensor(DType::bf16, {3, 2, 4, 16});
  auto r = run(d);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("066bd06e9ab538bd"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("`g_cache` must have dtype torch.float32."), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(result()));
}

TEST_F(RunCli, ExpectedComparisonPassesAndFails) {
  ASSERT_EQ(run(replayssm_dump()).rc, 0);
  auto first = read_safetensors(result());
  fs::remove(result());

  DumpSpec same = replayssm_dump();
  same.tensors["expected.out"] = first.tensors["out"].clone_contiguous();
  same.tensors["expected.initial_state"] = first.tensors["initial_state"].clone_contiguous();
  auto ok = run(same);
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("PASS"), std::string::npos) << ok.out;
  EXPECT_EQ(ok.out.find("FAIL"), std::string::npos) << ok.out;

  DumpSpec off = replayssm_dump();
  Tensor wrong = first.tensors["out"].clone_contiguous();
  wrong.view().store_flat(3, wrong.view().load_flat(3) + 1.0);
  off.tensors["expected.out"] = std::move(wrong);
  auto bad = run(off);
  EXPECT_EQ(bad.rc, 1) << bad.out << bad.err;
  EXPECT_NE(bad.out.find("FAIL"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("mismatched 1/64"), std::string::npos) << bad.out;
  EXPECT_TRUE(fs::exists(result()));  // a mismatch still leaves the outputs for inspection
}

TEST_F(RunCli, RecurrentIssueSpellingAndAllocatedOutputs) {
  auto r = run(recurrent_dump());
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto res = read_safetensors(result());
  EXPECT_EQ(res.tensors.size(), 2u);
  EXPECT_EQ(res.tensors["out"].shape(), (Shape{5, 2, 16}));
  EXPECT_EQ(res.tensors["final_state"].shape(), (Shape{2, 2, 16, 16}));
  EXPECT_EQ(res.tensors["final_state"].dtype(), DType::f32);
  EXPECT_GT(sum_abs(res.tensors["out"].view()), 0.0);

  DumpSpec both = recurrent_dump();  // beta given twice, as probabilities and as logits
  both.tensors["beta"] = Tensor(DType::bf16, {5, 2});
  EXPECT_EQ(run(both).rc, 2);
}

TEST_F(RunCli, SparsePrefillAllocatesOutAndLse) {
  auto r = run(prefill_dump(), {"--precision", "faithful"});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  auto res = read_safetensors(result());
  ASSERT_TRUE(res.tensors.count("out"));
  ASSERT_TRUE(res.tensors.count("lse"));
  EXPECT_EQ(res.tensors["out"].shape(), (Shape{2, 2, 64}));
  EXPECT_EQ(res.tensors["out"].dtype(), DType::bf16);
  EXPECT_EQ(res.tensors["lse"].shape(), (Shape{2, 2}));
  EXPECT_EQ(res.tensors["lse"].dtype(), DType::f32);
  EXPECT_GT(sum_abs(res.tensors["out"].view()), 0.0);
}

TEST_F(RunCli, SparseExpectedComparison) {
  ASSERT_EQ(run(prefill_dump(), {"--out-dtype", "f32"}).rc, 0);
  auto oracle = read_safetensors(result());
  DumpSpec d = prefill_dump();
  d.tensors["expected.out"] = oracle.tensors["out"].clone_contiguous();
  d.tensors["expected.lse"] = oracle.tensors["lse"].clone_contiguous();
  auto r = run(d, {"--precision", "faithful"});  // faithful bf16 within the documented tolerance of the oracle
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("lse"), std::string::npos);
}

TEST_F(RunCli, SparseViolationExitsTwo) {
  DumpSpec d = prefill_dump();
  d.tensors["q"] = Tensor(DType::bf16, {2, 128});  // not [T, H, D]
  auto r = run(d);
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("error["), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(result()));
}

TEST_F(RunCli, MalformedDumps) {
  DumpSpec no_op = replayssm_dump();
  no_op.metadata.erase("op");
  auto r = run(no_op);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("\"op\""), std::string::npos) << r.err;

  DumpSpec bad_scalar = replayssm_dump();
  bad_scalar.metadata["scale"] = "a quarter";
  r = run(bad_scalar);
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("scale"), std::string::npos) << r.err;

  DumpSpec bad_expected = replayssm_dump();
  bad_expected.tensors["expected.mixed_qkv"] = Tensor(DType::bf16, {2, 64});
  r = run(bad_expected);
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(fs::exists(result()));

  std::ofstream(dir / "junk.safetensors") << "not a safetensors file";
  r = run_cli({"run", (dir / "junk.safetensors").string()}, dir);
  EXPECT_EQ(r.rc, 2);
}

}  // namespace
}  // namespace kparity::test
