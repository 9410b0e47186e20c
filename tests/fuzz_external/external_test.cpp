// `kparity fuzz --impl`: implementation plugins as fuzz backends (fuzz/backends/external.hpp). The
// example CPU plugin holds every implementation property on all five ops; each planted-bug variant
// (plugins/planted_impl.cpp) is caught with its own failure class within a bounded number of cases;
// the example without checks accepts a hostile call; the CUDA example (forwarding to kparity's
// kernels) holds them on a GPU and skips visibly without one; the CLI's answers and repro lines.
#if __has_include("kparity/abi/plugin.hpp")  // built with DLPack (abi/CMakeLists.txt)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "kparity/fuzz/backends/backend.hpp"
#include "kparity/fuzz/backends/external.hpp"
#include "kparity/fuzz/campaign/runner.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"

namespace kparity::fuzz {
namespace {

constexpr std::uint64_t kSeed = 0x6b70617269747931ull;

Backend load(const std::string& path, double timeout = 30.0) {
  ExternalOptions o;
  o.case_timeout = timeout;
  return plugin_backend(abi::Plugin::load(path), o);
}

PropertyOutcome run(const Property& p, int cases) { return run_property(p, kSeed, cases, 100, true); }

TEST(ExternalBackend, ExampleCpuPluginHoldsEveryPropertyOnEveryOp) {
  const Backend b = load(KPARITY_EXAMPLE_CPU_IMPL);
  const auto props = implementation_properties(b, op_specs());
  ASSERT_EQ(props.size(), 15u);  // five ops, three kinds
  for (const auto& p : props) {
    const PropertyOutcome o = run(p, 60);
    EXPECT_TRUE(o.passed) << p.name << ": " << o.message;
    EXPECT_GE(o.cases, 60) << p.name;
  }
}

// Each planted bug in kda/packed_decode, caught by the property that sees it, with its class.
TEST(ExternalBackend, PlantedBugsAreCaughtWithTheirClass) {
  const std::map<std::string, std::string> plugins = KPARITY_TEST_PLANTED_PLUGINS;
  ASSERT_EQ(plugins.size(), 6u);
  for (const auto& [bug, path] : plugins) {
    SCOPED_TRACE(bug);
    const Backend b = load(path, 1.0);
    ImplPropertyOptions po;
    po.kinds = {bug == "not-deterministic" ? "deterministic" : "differential"};
    const auto props = implementation_properties(b, {spec_for("kda/packed_decode")}, po);
    ASSERT_EQ(props.size(), 1u);
    const PropertyOutcome o = run(props[0], 200);
    ASSERT_FALSE(o.passed) << "not caught in 200 cases";
    const auto cls = failure_class_of(o.message);
    ASSERT_TRUE(cls.has_value()) << o.message;
    EXPECT_EQ(failure_class_name(*cls), bug) << o.message;
    EXPECT_LT(o.cases, 200);
    EXPECT_TRUE(o.failing_call.has_value());
  }
}

TEST(ExternalBackend, UncheckedPluginAcceptsAHostileCall) {
  const Backend b = load(KPARITY_EXAMPLE_CPU_IMPL);
  ImplPropertyOptions po;
  po.kinds = {"contract"};
  const auto props = implementation_properties(b, {spec_for("sparse/paged_prefill")}, po);
  ASSERT_EQ(props.size(), 1u);
  EXPECT_EQ(props[0].name, "sparse/paged_prefill/rejects-hostile-calls/example-cpu");
  const PropertyOutcome o = run(props[0], 200);
  ASSERT_FALSE(o.passed);
  EXPECT_EQ(failure_class_of(o.message), FailureClass::accepted_hostile_call) << o.message;
  EXPECT_NE(o.message.find("upstream raises RuntimeError: "), std::string::npos) << o.message;
}

TEST(ExternalBackend, ExampleCudaPluginHoldsEveryPropertyOnAGpu) {
#ifndef KPARITY_EXAMPLE_CUDA_IMPL
  GTEST_SKIP() << "skipped: kparity built without its CUDA kernels";
#else
  std::string why;
  if (cuda_backends(why).empty()) GTEST_SKIP() << "skipped: " << why;
  const Backend b = load(KPARITY_EXAMPLE_CUDA_IMPL);
  ImplPropertyOptions po;
  po.large = po.on_device = true;
  po.kinds.push_back("contract");  // it forwards to the launchers, which run upstream's checks
  for (const auto& p : implementation_properties(b, op_specs(), po)) {
    const PropertyOutcome o = run(p, 40);
    EXPECT_TRUE(o.passed) << p.name << ": " << o.message;
  }
#endif
}

TEST(FailureClasses, NamesRoundTripAndTagsParse) {
  for (FailureClass c : all_failure_classes()) EXPECT_EQ(parse_failure_class(failure_class_name(c)), c);
  EXPECT_EQ(failure_class_of("file.cpp:12:\nRC_FAIL(x)\n\n[timed-out] slow"), FailureClass::timed_out);
  EXPECT_EQ(failure_class_of("out[0] differs [not-a-class] then [crashed] x"), FailureClass::crashed);
  EXPECT_FALSE(failure_class_of("no tag here").has_value());
}

TEST(RunWithTimeout, FinishesOrAbandons) {
  int x = 0;
  EXPECT_TRUE(run_with_timeout([&] { x = 1; }, 5.0));
  EXPECT_EQ(x, 1);
  auto flag = std::make_shared<std::atomic<bool>>(false);
  EXPECT_FALSE(run_with_timeout([flag] { while (!*flag) std::this_thread::yield(); }, 0.05, flag));
  *flag = true;  // lets the abandoned worker end
}

#ifdef KPARITY_CLI_PATH
struct Cli {
  int status;
  std::string out;
};

Cli cli(const std::string& args) {
  const std::string cmd = std::string(KPARITY_CLI_PATH) + " fuzz " + args + " 2>&1";
  Cli r{0, ""};
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) r.out += buf;
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(FuzzImplCli, AnswersBadPathsWithStatus2) {
  const Cli r = cli("--impl /nonexistent/lib.so --cases 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("error: cannot load implementation plugin '/nonexistent/lib.so'"), std::string::npos) << r.out;
}

TEST(FuzzImplCli, RunsAPluginAndPrintsReprosWithTheImpl) {
  const auto corpus = std::filesystem::temp_directory_path() / "kparity-fuzz-impl-cli";
  std::filesystem::remove_all(corpus);
  const Cli ok = cli(std::string("--impl ") + KPARITY_EXAMPLE_CPU_IMPL + " --op kda/packed_decode --cases 20 --corpus " +
                     corpus.string());
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("3 of 3 properties held"), std::string::npos) << ok.out;
  const std::map<std::string, std::string> plugins = KPARITY_TEST_PLANTED_PLUGINS;
  const std::string bad = plugins.at("wrong-values");
  const Cli fail = cli("--impl " + bad + " --op kda/packed_decode --cases 50 --corpus " + corpus.string());
  EXPECT_EQ(fail.status, 1) << fail.out;
  EXPECT_NE(fail.out.find("[wrong-values]"), std::string::npos) << fail.out;
  EXPECT_NE(fail.out.find("--property kda/packed_decode/differential/planted-wrong-values --seed"), std::string::npos);
  EXPECT_NE(fail.out.find("--impl " + bad), std::string::npos) << fail.out;
  std::filesystem::remove_all(corpus);
}
#endif

}  // namespace
}  // namespace kparity::fuzz
#endif
