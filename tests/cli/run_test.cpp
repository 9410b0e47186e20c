// `kparity run` on small dumps written with kparity::write_safetensors: one KDA op (ReplaySSM)
// and one sparse op (paged prefill), outputs, violations and expected.* comparisons.
#include <fstream>

#include "cli/run_dumps.hpp"

namespace kparity::test {
namespace {

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
  for (const char* precision : {"oracle", "faithful"}) {
    auto r = run(replayssm_dump(), {"--precision", precision, "--out-dtype", "f64"});
    ASSERT_EQ(r.rc, 0) << precision << r.out << r.err;
    auto res = read_safetensors(result());
    for (const char* n : {"out", "initial_state", "d_cache", "k_cache", "g_cache"})
      EXPECT_EQ(res.tensors[n].dtype(), DType::f64) << n;
  }
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
