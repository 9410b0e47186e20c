// The sparse generators (fuzz/src/generators/sparse_gen.cpp): their draws are valid under the strict
// contract, reproducible from a seed, cover every declared edge bucket, shrink to the smallest
// shapes, and their differential floors admit exactly the rounding they document.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <rapidcheck.h>
#include <set>
#include <string>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/fuzz/campaign/campaign.hpp"
#include "kparity/fuzz/generators/op_spec.hpp"
#include "kparity/fuzz/generators/sparse_case.hpp"
#include "kparity/fuzz/generators/sparse_gen.hpp"

namespace {

using namespace kparity;
using namespace kparity::fuzz;

const std::vector<OpFuzzSpec>& specs() {
  static const std::vector<OpFuzzSpec> s = sparse_specs();
  return s;
}

// Draws outside any property with explicit seeds and sizes spread over 0..100, so each sample is
// fixed. The buckets the draws noted are returned through `buckets` (or dropped).
std::vector<Call> sample(const OpFuzzSpec& spec, GenConfig cfg, int n, std::uint64_t salt,
                         std::set<std::string>* buckets = nullptr) {
  std::vector<Call> calls;
  const auto gen = rc::gen::exec([&spec, cfg] { return spec.draw(cfg); });
  take_buckets();
  for (int i = 0; i < n; ++i) {
    calls.push_back(gen(rc::Random(salt + static_cast<std::uint64_t>(i)), i * 100 / n).value());
    for (auto& b : take_buckets())
      if (buckets) buckets->insert(std::move(b));
  }
  return calls;
}

std::string ids(const std::vector<Diagnostic>& ds) {
  std::string s;
  for (const auto& d : ds) s += d.slug + (d.severity == Severity::error ? "(error) " : "(warning) ");
  return s;
}

TEST(SparseGen, TwoSpecsOneEachOp) {
  std::set<std::string> ops;
  for (const auto& s : specs()) ops.insert(s.op);
  EXPECT_EQ(ops, (std::set<std::string>{"sparse/paged_prefill", "sparse/paged_decode"}));
}

// The strict contract (every optional and data check on) accepts every default and large draw; only
// warnings may appear (a +inf sink, a decreasing pointer pair: both documented legal inputs).
TEST(SparseGen, DrawsPassTheStrictContract) {
  for (const auto& spec : specs()) {
    const OpContract* contract = find_op_contract(spec.op);
    ASSERT_NE(contract, nullptr) << spec.op;
    for (const auto& [cfg, n] : std::vector<std::pair<GenConfig, int>>{{{false, false}, 200}, {{false, true}, 20}}) {
      for (const auto& call : sample(spec, cfg, n, 0x737472696374ull)) {
        const auto opts = ValidateOptions::strict(Entry::reference);
        EXPECT_NO_THROW(contract->check(call.bag(), opts)) << spec.op << ": " << call.description;
        for (const auto& d : contract->validate(call.bag(), opts))
          EXPECT_EQ(d.severity, Severity::warning) << spec.op << ": " << call.description << ": " << ids({d});
      }
    }
  }
}

// Special-value draws put NaN/Inf where the strict contract looks (q, selected rows, a NaN sink):
// those, and nothing else, are what it reports, and exactly those draws carry options with the
// data checks off, under which they validate cleanly.
TEST(SparseGen, SpecialValueDrawsViolateOnlyTheNonFiniteChecks) {
  int flagged = 0;
  for (const auto& spec : specs()) {
    const std::string p = spec.op == "sparse/paged_prefill" ? "sparse-prefill-" : "sparse-decode-";
    const std::set<std::string> allowed = {p + "non-finite-input", p + "attn-sink-nan"};
    const OpContract* contract = find_op_contract(spec.op);
    for (const auto& call : sample(spec, {true, false}, 150, 0x7370656369616cull)) {
      const auto ds = contract->validate(call.bag(), ValidateOptions::strict(Entry::reference));
      bool error = false;
      for (const auto& d : ds) {
        if (d.severity != Severity::error) continue;
        error = true;
        EXPECT_TRUE(allowed.count(d.slug)) << spec.op << ": " << call.description << ": " << ids(ds);
      }
      flagged += error;
      EXPECT_EQ(call.options.deep, !error) << spec.op << ": " << call.description;
      EXPECT_NO_THROW(contract->check(call.bag(), call.options)) << spec.op << ": " << call.description;
    }
    for (const auto& call : sample(spec, {false, false}, 50, 0x7370656369616cull))
      EXPECT_TRUE(call.options.deep) << spec.op << ": a finite draw turned the data checks off";
  }
  EXPECT_GT(flagged, 0) << "no special-value draw put a non-finite value where the contract looks";
}

TEST(SparseGen, EveryDeclaredBucketIsHitAndNoOther) {
  for (const auto& spec : specs()) {
    std::set<std::string> hit;
    sample(spec, {false, false}, 400, 0x6275636b657431ull, &hit);
    sample(spec, {false, true}, 40, 0x6275636b657432ull, &hit);
    sample(spec, {true, false}, 200, 0x6275636b657433ull, &hit);
    const std::set<std::string> declared(spec.buckets.begin(), spec.buckets.end());
    EXPECT_EQ(declared.size(), spec.buckets.size()) << spec.op << ": a bucket is declared twice";
    for (const auto& b : declared) EXPECT_TRUE(hit.count(b)) << spec.op << ": bucket `" << b << "` never hit";
    for (const auto& b : hit) EXPECT_TRUE(declared.count(b)) << spec.op << ": bucket `" << b << "` noted but not declared";
  }
}

// One seed and size determine the whole call, bit for bit (testing guide 2.1).
TEST(SparseGen, DrawsAreReproducible) {
  for (const auto& spec : specs()) {
    const auto a = sample(spec, {true, false}, 20, 42), b = sample(spec, {true, false}, 20, 42);
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].description, b[i].description);
      ASSERT_EQ(a[i].tensors.size(), b[i].tensors.size());
      for (const auto& [name, t] : a[i].tensors) {
        EXPECT_EQ(t.storage(), b[i].at(name).storage()) << spec.op << " " << name;
        EXPECT_EQ(t.view().stride_vec(), b[i].at(name).view().stride_vec()) << spec.op << " " << name;
      }
      EXPECT_EQ(a[i].scalars, b[i].scalars);
      EXPECT_EQ(a[i].flags, b[i].flags);
    }
  }
}

// A property that fails whenever a token lists one row twice shrinks to the smallest such call:
// one token, one head, D = 1, and a list of two entries.
TEST(SparseGen, ShrinksToTheSmallestShape) {
  for (const auto& spec : specs()) {
    static Call last;
    const Property p{"shrink-probe", "metamorphic", [&spec] {
                       last = spec.draw({});
                       bool dup = false;
                       for (const auto& s : sparse_fuzz::sources_of(last.op))
                         for (const auto& l : sparse_fuzz::read_lists(last, s))
                           for (std::size_t i = 0; i < l.size(); ++i)
                             for (std::size_t j = i + 1; j < l.size(); ++j) dup = dup || (l[i] >= 0 && l[i] == l[j]);
                       RC_ASSERT(!dup);
                     }};
    const auto r = run_property(p, 0x736872696e6bull, 200, 100, true);
    ASSERT_FALSE(r.passed) << spec.op << ": no duplicate drawn in 200 cases";
    // RapidCheck runs the minimal counterexample last.
    EXPECT_EQ(last.at("q").shape(), (Shape{1, 1, 1})) << spec.op << ": " << last.description;
    std::size_t entries = 0;
    for (const auto& s : sparse_fuzz::sources_of(last.op))
      for (const auto& l : sparse_fuzz::read_lists(last, s)) entries += l.size();
    EXPECT_EQ(entries, 2u) << spec.op << ": " << last.description;
  }
}

// The output floor admits what it is for, a one-ulp disagreement of two correct roundings at the
// largest possible |out|, and stays within a few ulps of it (not widened).
TEST(SparseGen, OutFloorIsOneStorageUlpAtTheOutputBound) {
  for (const auto& spec : specs()) {
    for (const auto& call : sample(spec, {false, false}, 100, 0x666c6f6f72ull)) {
      const auto m = sparse_fuzz::magnitudes(call);
      const DType dt = call.at("q").dtype();
      const double floor = spec.abs_floor(call, "out", nullptr);
      // The spacing of the storage dtype's values at the bound: 2^(exponent - significand bits).
      double ulp_at_bound = sparse_fuzz::dtype_min_subnormal(dt);
      if (m.max_selected > 0)
        ulp_at_bound = std::max(ulp_at_bound, std::ldexp(sparse_fuzz::dtype_eps(dt), std::ilogb(m.max_selected)));
      EXPECT_GE(floor, ulp_at_bound) << call.description;
      EXPECT_LE(floor, 4 * sparse_fuzz::dtype_eps(dt) * m.max_selected + 2 * sparse_fuzz::dtype_min_subnormal(dt))
          << call.description;
      if (call.flags.at("return_lse")) {
        const double lf = spec.abs_floor(call, "lse", nullptr);
        EXPECT_GT(lf, 0.0);
        EXPECT_LE(lf, 1e-4 * (1 + m.max_logit)) << call.description;
      }
      EXPECT_THROW(spec.abs_floor(call, "q", nullptr), std::invalid_argument);
    }
  }
}

// magnitudes() reads rows in runs (issue 32 B); here its definition element by element, through
// TensorView::load: the same four numbers, exactly, on plain, special-value, small and kernel-sized
// draws (every layout the generator draws, strided q and rows included).
sparse_fuzz::Magnitudes magnitudes_by_element(const Call& c) {
  sparse_fuzz::Magnitudes m;
  const TensorView q = c.at("q").view();
  for_each_element(q, [&](std::span<const std::int64_t> i, std::int64_t) {
    if (const double v = std::fabs(q.load(i)); std::isfinite(v)) m.max_q = std::max(m.max_q, v);
  });
  const std::int64_t T = q.size(0), H = q.size(1), D = q.size(2);
  const double shift = c.scalars.count("replicated_logit_shift") ? std::fabs(c.scalars.at("replicated_logit_shift")) : 0.0;
  std::vector<std::vector<double>> kmax(static_cast<std::size_t>(T), std::vector<double>(static_cast<std::size_t>(D)));
  std::vector<std::int64_t> keys(static_cast<std::size_t>(T));
  for (const auto& s : sparse_fuzz::sources_of(c.op)) {
    const TensorView rows = c.at(s.rows).view();
    const auto lists = sparse_fuzz::read_lists(c, s);
    for (std::size_t t = 0; t < lists.size(); ++t)
      for (const auto r : lists[t]) {
        if (r < 0 || r >= rows.size(0)) continue;
        ++keys[t];
        for (std::int64_t d = 0; d < D; ++d)
          if (const double v = std::fabs(rows.at({r, d})); std::isfinite(v)) {
            m.max_selected = std::max(m.max_selected, v);
            kmax[t][static_cast<std::size_t>(d)] = std::max(kmax[t][static_cast<std::size_t>(d)], v);
          }
      }
  }
  for (std::int64_t t = 0; t < T; ++t) {
    m.max_keys = std::max(m.max_keys, keys[static_cast<std::size_t>(t)]);
    for (std::int64_t h = 0; keys[static_cast<std::size_t>(t)] > 0 && h < H; ++h) {
      double b = 0.0;
      for (std::int64_t d = 0; d < D; ++d)
        if (const double v = std::fabs(q.at({t, h, d})); std::isfinite(v)) b += v * kmax[static_cast<std::size_t>(t)][static_cast<std::size_t>(d)];
      m.max_logit = std::max(m.max_logit, std::fabs(c.scalars.at("softmax_scale")) * b + shift);
    }
  }
  const TensorView sink = c.at("attn_sink").view();
  for (std::int64_t h = 0; h < H; ++h)
    if (const double v = std::fabs(static_cast<double>(static_cast<float>(sink.load_flat(h)))); std::isfinite(v))
      m.max_logit = std::max(m.max_logit, v + shift);
  return m;
}

TEST(SparseGen, MagnitudesEqualTheirElementByElementDefinition) {
  int n = 0;
  for (const auto& spec : specs())
    for (const bool special : {false, true})
      for (const bool large : {false, true})
        for (const auto& call : sample(spec, {special, large}, large ? 8 : 40, 0x6d6167ull)) {
          const auto got = sparse_fuzz::magnitudes(call), want = magnitudes_by_element(call);
          EXPECT_EQ(got.max_q, want.max_q) << call.description;
          EXPECT_EQ(got.max_selected, want.max_selected) << call.description;
          EXPECT_EQ(got.max_logit, want.max_logit) << call.description;
          EXPECT_EQ(got.max_keys, want.max_keys) << call.description;
          ++n;
        }
  EXPECT_EQ(n, 2 * 2 * (40 + 8));
}

}  // namespace
