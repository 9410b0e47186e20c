// `kparity run --backend reference|cuda|all` on the CPU side: option parsing, the clear refusal of
// `cuda` where it cannot run, and `all` reporting cuda as skipped with the reason. On a machine
// where the kernels can run (a CUDA build with a device), the same tests check the cuda block
// instead; tests/gpu_cli runs it on every corpus dump.
#include "cli/run_dumps.hpp"

namespace kparity::test {
namespace {

class RunBackend : public RunCli {
 protected:
  // Whether `kparity run --backend cuda` can run on this machine, and the reason when not.
  static std::pair<bool, std::string> cuda_here() {
    static const std::pair<bool, std::string> answer = [] {
      const fs::path d = scratch_dir("run_probe");
      replayssm_dump().write(d / "probe.safetensors");
      const CliResult r = run_cli({"run", (d / "probe.safetensors").string(), "--backend", "cuda", "-o",
                                   (d / "probe.result.safetensors").string()}, d);
      fs::remove_all(d);
      const std::string prefix = "error: --backend cuda cannot run here: ";
      const auto at = r.err.find(prefix);
      if (r.rc == 2 && at != std::string::npos) {
        std::string why = r.err.substr(at + prefix.size());
        return std::pair<bool, std::string>{false, why.substr(0, why.find('\n'))};
      }
      return std::pair<bool, std::string>{true, ""};
    }();
    return answer;
  }
};

TEST_F(RunBackend, UnknownOptionValuesAreUsageErrors) {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{
           {"--backend", "gpu"}, {"--backend", ""}, {"--out-dtype", "f16"}, {"--out-dtype", "bf16"},
           {"--precision", "fp64"}, {"--atol", "1e-3"}}) {
    auto r = run(replayssm_dump(), extra);
    EXPECT_EQ(r.rc, 2) << extra[0] << " " << extra[1] << "\n" << r.out << r.err;
    EXPECT_FALSE(r.err.empty()) << extra[0];
    EXPECT_FALSE(fs::exists(result())) << extra[0];
  }
  auto help = run_cli({"run", "--help"}, dir);
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("reference (scalar host reference), cuda"), std::string::npos) << help.out;
}

TEST_F(RunBackend, ReferenceIsTheDefaultAndWritesOneFile) {
  for (const std::vector<std::string>& extra : std::vector<std::vector<std::string>>{{}, {"--backend", "reference"}}) {
    auto r = run(replayssm_dump(), extra);
    ASSERT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_EQ(r.out.rfind("reference (oracle):\n", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find("cuda"), std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(result()));
    EXPECT_EQ(read_safetensors(result()).metadata.at("backend"), "reference");
    fs::remove(result());
  }
}

TEST_F(RunBackend, CudaWhereItCannotRunExitsTwo) {
  const auto [available, why] = cuda_here();
  if (available) GTEST_SKIP() << "the kernels run here; tests/gpu_cli covers --backend cuda";
  auto r = run(replayssm_dump(), {"--backend", "cuda"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  // One line saying why: kernels not built or no device (the CUDA backend and the rule are
  // kparity::judge's, in every build: tests/cli_nofuzz runs these tests on a CLI without RapidCheck).
  EXPECT_EQ(r.err, "error: --backend cuda cannot run here: " + why + "\n");
  EXPECT_TRUE(why == "no CUDA device" || why.rfind("no CUDA device (", 0) == 0 ||
              why == "kernels not built (configure with -DKPARITY_CUDA=ON)")
      << why;
  EXPECT_FALSE(fs::exists(result()));
  EXPECT_FALSE(fs::exists(dir / "result.cuda.safetensors"));
}

TEST_F(RunBackend, AllRunsTheReferenceAndReportsCudaSkipped) {
  const auto [available, why] = cuda_here();
  if (available) GTEST_SKIP() << "the kernels run here; tests/gpu_cli covers --backend all with cuda";
  DumpSpec d = replayssm_dump();
  auto first = run(d);
  ASSERT_EQ(first.rc, 0);
  d.tensors["expected.out"] = read_safetensors(result()).tensors.at("out");
  fs::remove(result());

  auto r = run(d, {"--backend", "all"});
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  // One block per backend, in order: the reference's lines, then cuda's skip with its reason.
  const auto ref = r.out.find("reference (oracle):\n");
  const auto cuda = r.out.find("cuda: skipped, " + why + "\n");
  ASSERT_NE(ref, std::string::npos) << r.out;
  ASSERT_NE(cuda, std::string::npos) << r.out;
  EXPECT_LT(ref, cuda);
  EXPECT_NE(r.out.find("    out            max_abs 0.000e+00"), std::string::npos) << r.out;
  // With several backends each writes its own file; a skipped one writes none.
  EXPECT_TRUE(fs::exists(dir / "result.reference.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "result.cuda.safetensors"));
  EXPECT_FALSE(fs::exists(result()));
}

TEST_F(RunBackend, AllStillFailsOnAReferenceMismatch) {
  const auto [available, why] = cuda_here();
  if (available) GTEST_SKIP() << "the kernels run here";
  DumpSpec d = replayssm_dump();
  d.tensors["expected.out"] = Tensor(DType::bf16, {2, 1, 2, 16}).fill(100.0);
  auto r = run(d, {"--backend", "all"});
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("cuda: skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst at ("), std::string::npos) << r.out;
}

TEST_F(RunBackend, BadDumpIsReportedBeforeAnyBackendRuns) {
  DumpSpec d = replayssm_dump();
  d.tensors["g_cache"] = Tensor(DType::bf16, {3, 2, 4, 16});
  auto r = run(d, {"--backend", "all"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("066bd06e9ab538bd"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("reference ("), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "result.reference.safetensors"));
}

}  // namespace
}  // namespace kparity::test
