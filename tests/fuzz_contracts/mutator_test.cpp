// The catalog-driven mutator (fuzz/include/kparity/fuzz/mutator.hpp): its table covers every active
// contract-emitted catalog entry, and each mutation fires exactly its entry first on a fixed-seed
// sample of valid calls (the catalog's base fixtures and the op generators' draws).
#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <map>
#include <rapidcheck.h>
#include <set>
#include <string>
#include <vector>

#include "kparity/diagnostics/catalog.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/mutator/mutator.hpp"

namespace {

using namespace kparity;
using namespace kparity::fuzz;

constexpr int kDrawsPerOp = 40;
constexpr std::uint64_t kSalts = 3;

// Drawn with explicit seeds and sizes 0..100, outside any property, so the sample is fixed.
std::vector<Call> draws(const OpFuzzSpec& spec) {
  std::vector<Call> calls;
  const auto gen = rc::gen::exec([&spec] { return spec.draw(GenConfig{}); });
  for (int i = 0; i < kDrawsPerOp; ++i)
    calls.push_back(gen(rc::Random(0x6d75746174696f6eull + static_cast<std::uint64_t>(i)), i * 100 / kDrawsPerOp).value());
  take_buckets();
  return calls;
}

const std::vector<Call>& sample(const std::string& op) {
  static std::map<std::string, std::vector<Call>> cache;
  auto it = cache.find(op);
  if (it != cache.end()) return it->second;
  std::vector<Call> calls;
  for (const auto& name : fixture_names(op))
    for (std::uint64_t seed = 1; seed <= 3; ++seed) calls.push_back(fixture_call(name, seed));
  for (const auto& spec : op_specs())
    if (spec.op == op)
      for (auto& c : draws(spec)) calls.push_back(std::move(c));
  return cache.emplace(op, std::move(calls)).first->second;
}

TEST(MutationTable, CoversEveryActiveContractEntry) {
  std::set<std::string> in_table;
  for (const auto& m : mutation_table()) in_table.insert(m.id);
  const auto ids = contract_entry_ids();
  ASSERT_FALSE(ids.empty());
  for (const auto& id : ids) {
    const CatalogEntry* e = Catalog::embedded().by_id(id);
    EXPECT_TRUE(in_table.count(id)) << "catalog entry " << id << " (" << e->slug << ") has no mutation in fuzz/src/mutator/";
  }
  const std::set<std::string> wanted(ids.begin(), ids.end());
  for (const auto& m : mutation_table()) {
    EXPECT_TRUE(wanted.count(m.id)) << m.slug << ": not an active contract-emitted entry";
    const CatalogEntry* e = Catalog::embedded().by_id(m.id);
    ASSERT_NE(e, nullptr) << m.id;
    ASSERT_FALSE(m.ops.empty()) << m.slug;
    EXPECT_EQ(m.ops[0], e->op) << m.slug << ": ops[0] must be the entry's own op";
    EXPECT_EQ(m.warning, e->severity == Severity::warning) << m.slug;
    EXPECT_FALSE(m.what.empty()) << m.slug;
  }
}

TEST(MutationTable, SampleCallsValidateCleanly) {
  for (const auto& c : op_contracts()) {
    const std::string op(c.op);
    ASSERT_FALSE(sample(op).empty()) << op;
    for (const auto& call : sample(op)) {
      for (const Entry entry : {Entry::reference, Entry::cuda_kernel}) {
        const Mutant m(call, entry == Entry::reference ? Device::cpu() : Device::cuda(0));
        const ContractVerdict v = judge_contract(m.bag(), op, ValidateOptions::strict(entry));
        EXPECT_TRUE(v.clean()) << op << ": " << call.description << ": check " << v.check_id << ", validate "
                               << v.validate_id << " " << v.other;
      }
    }
  }
}

// A plain Call keeps what it can carry and refuses what it cannot (device labels, aliases).
TEST(MutationTable, ApplyToPlainCall) {
  const Call call = fixture_call("kda.replayssm.minimal", 1);
  for (const auto& m : mutations_for("kda/replayssm_decode")) {
    Call c = call;
    const bool applied = apply(c, m, 0);
    if (m.kind == MutationKind::device || m.kind == MutationKind::alias) {
      EXPECT_FALSE(applied) << m.slug;
      EXPECT_EQ(c.tensors.size(), call.tensors.size()) << m.slug << ": a refused mutation left the call changed";
    } else {
      EXPECT_TRUE(applied) << m.slug;
      EXPECT_NE(c.description, call.description) << m.slug;
    }
  }
  // An op the mutation is not written for: refused, call untouched.
  const Call packed = fixture_call("kda.packed.minimal", 1);
  for (const auto& m : mutations_for("kda/replayssm_decode")) {
    if (std::find(m.ops.begin(), m.ops.end(), "kda/packed_decode") != m.ops.end()) continue;
    Call c = packed;
    EXPECT_FALSE(apply(c, m, 0)) << m.slug << " applied to a kda/packed_decode call";
    EXPECT_EQ(c.description, packed.description) << m.slug;
  }
}

class FiresTest : public testing::Test {
 public:
  explicit FiresTest(Mutation m) : m_(std::move(m)) {}
  void TestBody() override {
    for (const auto& op : m_.ops) {
      int applied = 0;
      for (const auto& call : sample(op)) {
        for (std::uint64_t salt = 0; salt < kSalts; ++salt) {
          const Mutant valid(call);
          Mutant mutated = valid;
          if (!apply(mutated, m_, salt)) continue;
          ++applied;
          const std::string why = check_fires(valid, mutated, m_);
          EXPECT_EQ(why, "") << op << ", salt " << salt << ": " << call.description;
          if (!why.empty()) return;  // one counterexample is enough to read
        }
      }
      // A mutation that never applies to the sample proves nothing.
      EXPECT_GT(applied, 0) << m_.slug << " never applied to a sample call of " << op;
    }
  }

 private:
  Mutation m_;
};

const bool registered = [] {
  std::map<std::string, int> seen;
  for (const auto& m : mutation_table()) {
    std::string name = m.slug;
    if (int n = seen[m.slug]++) name += "_" + std::to_string(n + 1);
    for (char& c : name)
      if (c == '-') c = '_';
    testing::RegisterTest("MutationFires", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                          [m]() -> testing::Test* { return new FiresTest(m); });
  }
  return true;
}();

// The RapidCheck properties themselves, with a pinned seed and a budget above the PR tier's.
// KPARITY_FUZZ_SEED overrides the seed.
TEST(ContractProperties, HoldWithAFixedSeed) {
  std::uint64_t seed = 0x636f6e7472616374ull;
  if (const char* s = std::getenv("KPARITY_FUZZ_SEED")) seed = std::strtoull(s, nullptr, 0);
  for (const auto& p : hostile_properties()) {
    if (p.kind != "contracts") continue;
    const auto r = run_property(p, seed, 150, 100, true);
    EXPECT_TRUE(r.passed) << p.name << " after " << r.cases << " cases, seed " << seed << "\n" << r.message;
  }
}

}  // namespace
