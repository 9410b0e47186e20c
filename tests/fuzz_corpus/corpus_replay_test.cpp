// The committed fuzz corpus (fuzz/corpus/) replayed as regression cases, one test per dump: it
// validates, the references are deterministic, the saved oracle results still hold, and every
// available backend (the CUDA kernels on a GPU machine) meets the differential rule on it.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <string>

#include "kparity/fuzz/corpus/corpus.hpp"

namespace {

namespace fz = kparity::fuzz;

const std::string kCorpus = std::string(KPARITY_SOURCE_DIR) + "/fuzz/corpus";

const std::vector<kparity::fuzz::Backend>& backends() {
  static const std::vector<fz::Backend> b = [] {
    std::string why;
    return fz::cuda_backends(why);
  }();
  return b;
}

class CorpusReplay : public testing::Test {
 public:
  explicit CorpusReplay(std::string file) : file_(std::move(file)) {}
  void TestBody() override {
    const fz::ReplayOutcome r = fz::replay_file(file_, backends());
    std::string problems;
    for (const auto& p : r.problems) problems += "\n  " + p;
    EXPECT_TRUE(r.passed) << file_ << " (" << r.op << "):" << problems
                          << "\nrepro: kparity fuzz --replay " << file_;
    EXPECT_FALSE(r.checks.empty());
  }

 private:
  std::string file_;
};

TEST(Corpus, IsNotEmpty) { EXPECT_GE(fz::corpus_files(kCorpus).size(), 2u) << kCorpus; }

const bool registered = [] {
  for (const auto& f : fz::corpus_files(kCorpus)) {
    std::string name = std::filesystem::path(f).stem().string();
    for (char& c : name)  // ctest and --gtest_filter treat '.' and '-' specially
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    testing::RegisterTest("CorpusReplay", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [f]() -> testing::Test* { return new CorpusReplay(f); });
  }
  return true;
}();

}  // namespace
