// `kparity run --out-dtype f64|f32`: the oracle's results stored once in the wide dtype (unrounded
// in f64), checked against the other output dtypes on the corpus dumps and on bf16 dumps; f64
// tensors in a dump, rejected with torch's spelling where the contract wants another dtype.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "cli/run_dumps.hpp"

namespace kparity::test {
namespace {

// Same value: equal bits after widening, or both NaN.
bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

struct Runs {
  SafetensorsFile f64, f32, own;  // --out-dtype f64, f32, and the dump's dtypes
};

class RunOutDtype : public RunCli {
 protected:
  Runs run_three(const fs::path& dump) {
    Runs r;
    const std::pair<const char*, SafetensorsFile*> modes[] = {{"f64", &r.f64}, {"f32", &r.f32}, {"", &r.own}};
    for (auto [dtype, file] : modes) {
      std::vector<std::string> args = {"run", dump.string(), "-o", result().string()};
      if (*dtype) args.insert(args.end(), {"--out-dtype", dtype});
      const CliResult c = run_cli(args, dir);
      EXPECT_EQ(c.rc, 0) << dump << " --out-dtype " << dtype << "\n" << c.out << c.err;
      *file = read_safetensors(result());
      fs::remove(result());
    }
    return r;
  }

  // Every f64 value rounds to the f32 run's value and to the dump-dtype run's value (each a single
  // rounding of the same fp64 oracle value). Returns how many f64 values f32 cannot hold.
  std::int64_t check_roundings(const fs::path& dump, const Runs& r) {
    std::int64_t beyond_f32 = 0;
    EXPECT_EQ(r.f64.tensors.size(), r.own.tensors.size()) << dump;
    for (const auto& [name, wide] : r.f64.tensors) {
      SCOPED_TRACE(dump.filename().string() + ": " + name);
      EXPECT_EQ(wide.dtype(), DType::f64);
      const Tensor& f32 = r.f32.tensors.at(name);
      const Tensor& own = r.own.tensors.at(name);
      EXPECT_EQ(f32.dtype(), DType::f32);
      for (std::int64_t i = 0; i < wide.numel(); ++i) {
        const double v = wide.view().load_flat(i);
        if (!same(round_to_dtype(v, DType::f32), f32.view().load_flat(i)) ||
            !same(round_to_dtype(v, own.dtype()), own.view().load_flat(i))) {
          ADD_FAILURE() << "element " << i << ": f64 " << v << ", f32 " << f32.view().load_flat(i) << ", "
                        << dtype_name(own.dtype()) << " " << own.view().load_flat(i);
          return beyond_f32;
        }
        if (!same(round_to_dtype(v, DType::f32), v)) ++beyond_f32;
      }
    }
    return beyond_f32;
  }
};

TEST_F(RunOutDtype, F64IsTheOracleBeforeRoundingOnTheCorpus) {
  const auto dumps = corpus_dumps();
  ASSERT_FALSE(dumps.empty());
  std::int64_t beyond_f32 = 0;
  for (const auto& d : dumps) beyond_f32 += check_roundings(d, run_three(d));
  // Shrunk cases hold small dyadic values, so many results are exact in f32; the corpus still has
  // results (recurrent, ReplaySSM, sparse decode) that only f64 holds. If this fails, the f64 output
  // was rounded through f32 somewhere.
  EXPECT_GT(beyond_f32, 0);
}

TEST_F(RunOutDtype, F64IsTheOracleBeforeRoundingOnBf16Dumps) {
  for (const DumpSpec& spec : {replayssm_dump(), prefill_dump(), recurrent_dump()}) {
    std::string stem = spec.metadata.at("op");
    std::replace(stem.begin(), stem.end(), '/', '.');
    const fs::path p = dir / (stem + ".safetensors");
    spec.write(p);
    const Runs r = run_three(p);
    // Normal-distributed inputs: nearly every computed value needs more than f32's 24 bits.
    EXPECT_GT(check_roundings(p, r), r.f64.tensors.at("out").numel() / 2) << spec.metadata.at("op");
  }
}

TEST_F(RunOutDtype, FaithfulF64IsTheFaithfulResultWidened) {
  const DumpSpec spec = replayssm_dump();
  spec.write(dir / "dump.safetensors");
  const auto args = [&](std::vector<std::string> extra) {
    std::vector<std::string> a = {"run", (dir / "dump.safetensors").string(), "-o", result().string(),
                                  "--precision", "faithful"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  };
  ASSERT_EQ(run_cli(args({"--out-dtype", "f64"}), dir).rc, 0);
  const SafetensorsFile wide = read_safetensors(result());
  ASSERT_EQ(run_cli(args({}), dir).rc, 0);
  const SafetensorsFile own = read_safetensors(result());
  for (const auto& [name, t] : own.tensors) {
    ASSERT_EQ(wide.tensors.at(name).dtype(), DType::f64) << name;
    for (std::int64_t i = 0; i < t.numel(); ++i)
      ASSERT_TRUE(same(wide.tensors.at(name).view().load_flat(i), t.view().load_flat(i))) << name << " " << i;
  }
}

TEST_F(RunOutDtype, F64ExpectedTensorsCompare) {
  // A user's fp64 reference as expected.*: the f64 oracle matches itself exactly; the default run
  // (bf16 out) matches within the documented tolerance.
  ASSERT_EQ(run(prefill_dump(), {"--out-dtype", "f64"}).rc, 0);
  const SafetensorsFile oracle = read_safetensors(result());
  DumpSpec d = prefill_dump();
  d.tensors["expected.out"] = oracle.tensors.at("out").clone_contiguous();
  d.tensors["expected.lse"] = oracle.tensors.at("lse").clone_contiguous();
  auto same_run = run(d, {"--out-dtype", "f64"});
  EXPECT_EQ(same_run.rc, 0) << same_run.out << same_run.err;
  EXPECT_NE(same_run.out.find("max_abs 0.000e+00  max_rel 0.000e+00"), std::string::npos) << same_run.out;
  auto own = run(d);
  EXPECT_EQ(own.rc, 0) << own.out << own.err;
  EXPECT_EQ(own.out.find("FAIL"), std::string::npos) << own.out;
}

TEST_F(RunOutDtype, WaiverIsReported) {
  auto r = run(replayssm_dump(), {"--out-dtype", "f64"});
  ASSERT_EQ(r.rc, 0) << r.err;
  // upstream's g_cache check: the f64 copy breaks it, the call itself does not.
  EXPECT_NE(r.err.find("break kda-g-cache-dtype (066bd06e9ab538bd), waived for the oracle run"), std::string::npos)
      << r.err;
}

// f64 tensors in the dump itself: the contract's dtype checks print torch's spelling,
// str(torch.float64) == "torch.float64", byte for byte as upstream's f-strings render it.
TEST_F(RunOutDtype, F64InputsRejectedWithTorchSpelling) {
  struct Case {
    DumpSpec spec;
    std::string tensor, id, message;
  };
  std::vector<Case> cases = {
      {replayssm_dump(), "g_cache", "066bd06e9ab538bd", "`g_cache` must have dtype torch.float32."},
      {replayssm_dump(), "mixed_qkv", "55865a1608476e8b",
       "`mixed_qkv` has dtype torch.float64; expected one of torch.float32, torch.bfloat16, torch.float16."},
      {prefill_dump(), "q", "", "sparse_attn_v4_paged_prefill expects fp16/bf16 q, got torch.float64"},
      {prefill_dump(), "kv", "", "kv dtype mismatch: kv=torch.float64, q=torch.bfloat16"},
      {recurrent_dump(), "q", "b1876b65007fc0f5",
       "`q` has dtype torch.float64; expected one of torch.float32, torch.bfloat16, torch.float16."},
  };
  for (auto& c : cases) {
    Tensor& t = c.spec.tensors.at(c.tensor);
    Tensor wide(DType::f64, t.shape());
    wide.copy_from(t.view());
    t = std::move(wide);
    auto r = run(c.spec);
    EXPECT_EQ(r.rc, 2) << c.tensor << r.out << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.tensor << "\n" << r.err;
    if (!c.id.empty()) EXPECT_NE(r.err.find(c.id), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(result()));
  }
}

}  // namespace
}  // namespace kparity::test
