// kparity::judge on its own (no RapidCheck, no generator): the one op -> launcher table, the floors
// looked up by op, the precision profile as an argument, and run_and_judge on real calls (the
// committed corpus dumps), where the faithful model passes and a wrong result fails naming its tensor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "kparity/judge/floors.hpp"
#include "kparity/judge/kernel_ops.hpp"
#ifdef KPARITY_JUDGE_KERNELS
#include "kparity/kernels/kda.hpp"
#endif
#include "kparity/judge/rule.hpp"
#include "kparity/judge/runs.hpp"
#include "kparity/ops/dump.hpp"
#include "kparity/reference/precision_profile.hpp"

namespace {

namespace fs = std::filesystem;
namespace j = kparity::judging;
using kparity::reference::PrecisionProfile;

// The committed corpus (fuzz/corpus/*.safetensors) as calls, sorted.
std::vector<j::Call> corpus_calls() {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(fs::path(KPARITY_SOURCE_DIR) / "fuzz" / "corpus"))
    if (e.path().extension() == ".safetensors") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<j::Call> out;
  for (const auto& f : files) {
    const kparity::ops::Dump d = kparity::ops::load_dump(f.string());
    j::Call c = j::call_of_bag(*d.op, d.bag);
    c.description = f.filename().string();
    // As the corpus replay reads them: a dump saved with the data checks off runs with them off.
    if (auto it = d.file.metadata.find("kparity.deep"); it != d.file.metadata.end()) c.options.deep = it->second != "false";
    out.push_back(std::move(c));
  }
  return out;
}

TEST(JudgeKernelTable, ListsTheOpsWithALauncher) {
  const std::vector<std::string> expected = {"kda/replayssm_decode", "kda/packed_decode", "kda/recurrent", "kda/chunk",
                                             "sparse/paged_prefill", "sparse/paged_decode"};
  EXPECT_EQ(j::kernel_ops(), expected);
  for (const auto& op : expected) EXPECT_TRUE(j::has_kernel(op)) << op;
  EXPECT_FALSE(j::has_kernel("kda/nonexistent"));
  EXPECT_EQ(&j::cuda_backend_ops(), &j::kernel_ops());
}

TEST(JudgeKernelTable, SaysWhichKernelsThisBuildLacks) {
  EXPECT_EQ(j::kernel_not_built("kda/nonexistent"), "");
#ifdef KPARITY_JUDGE_KERNELS
  for (const auto& op : j::kernel_ops())
    if (op != "kda/chunk") EXPECT_EQ(j::kernel_not_built(op), "") << op;
  // kda/chunk's kernel is compiled only with -DKPARITY_CHUNK_KERNEL=ON; its launcher says so then.
  EXPECT_EQ(j::kernel_not_built("kda/chunk").empty(), kparity::kernels::kda::chunk_kernel_built());
#else
  for (const auto& op : j::kernel_ops()) EXPECT_NE(j::kernel_not_built(op), "") << op;
#endif
}

TEST(JudgeFloors, LookedUpByOpAreTheFamilysFloors) {
  int seen = 0;
  for (const j::Call& c : corpus_calls()) {
    const j::Call o = j::run_oracle(c);
    for (const auto& name : c.written) {
      const double by_op = j::abs_floor(c, name, &o);
      const double family = c.op.rfind("sparse/", 0) == 0 ? j::sparse_abs_floor(c, name, &o) : j::kda_abs_floor(c, name, &o);
      EXPECT_EQ(by_op, family) << c.description << " " << name;
      EXPECT_GT(by_op, 0.0) << c.description << " " << name;
      // Without the oracle's result the floor runs the oracle itself: the same number.
      EXPECT_EQ(j::abs_floor(c, name), by_op) << c.description << " " << name;
      ++seen;
    }
  }
  EXPECT_GT(seen, 10);
  j::Call unknown;
  unknown.op = "no/such-op";
  EXPECT_EQ(j::abs_floor(unknown, "out"), 0.0);
}

TEST(JudgeRule, TheFaithfulModelPassesAndAWrongResultFailsNamingItsTensor) {
  for (const j::Call& c : corpus_calls()) {
    const j::DifferentialResult ok = j::run_and_judge(c, j::faithful_backend({c.op}));
    EXPECT_TRUE(ok.pass) << c.description << ": " << ok.detail;
    EXPECT_EQ(ok.tensors.size(), c.written.size()) << c.description;
    // The first written tensor moved by 1 + |value| at every finite element: far outside any bound
    // of these calls (the largest bound of the corpus's well-conditioned calls is below 1).
    const std::string victim = c.written.front();
    const j::Backend wrong{"wrong", {c.op}, [&](j::Call& call) {
                             j::faithful_backend({c.op}).run(call);
                             const kparity::TensorView v = call.at(victim).view();
                             for (std::int64_t i = 0; i < v.numel(); ++i)
                               if (std::isfinite(v.load_flat(i))) v.store_flat(i, 2.0 * v.load_flat(i) + 1e35);
                           }};
    const j::DifferentialResult bad = j::run_and_judge(c, wrong);
    EXPECT_FALSE(bad.pass) << c.description;
    EXPECT_EQ(bad.detail.rfind(victim + ":", 0), 0u) << c.description << ": " << bad.detail;
  }
}

TEST(JudgeProfile, AnArgumentIsTheScopeItReplaces) {
  for (const j::Call& c : corpus_calls()) {
    if (c.op != "kda/replayssm_decode") continue;
    for (const PrecisionProfile p : {PrecisionProfile::faithful, PrecisionProfile::tf32_dot}) {
      const j::Call by_argument = j::run_faithful(c, p);
      EXPECT_EQ(kparity::reference::precision_profile(), PrecisionProfile::faithful);  // restored
      const kparity::reference::PrecisionProfileScope scope(p);
      const j::Call by_scope = j::run_faithful(c);
      for (const auto& name : c.written)
        EXPECT_EQ(by_argument.at(name).storage(), by_scope.at(name).storage()) << c.description << " " << name;
    }
  }
}

}  // namespace
