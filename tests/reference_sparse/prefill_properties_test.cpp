// Random-input properties of sparse/paged_prefill: closed form, dense equivalence, multiset
// semantics (duplicates, order, source split) and layout independence.
#include <algorithm>
#include <numeric>

#include "sparse_case.hpp"

namespace kpt {
namespace {

constexpr DType kDTypes[] = {DType::bf16, DType::f16};

RandomSpec spec(DType dt, double shift = 0.0) {
  return {.dt = dt, .T = 5, .H = 6, .D = 40, .P = 48, .Ne = 14, .max_pre = 24, .max_ext = 7,
          .sentinel_rate = 0.15, .shift = shift};
}

TEST(SparsePrefillProps, OracleMatchesClosedForm) {
  for (DType dt : kDTypes)
    for (double shift : {0.0, -std::log(3.0)})
      for (std::uint64_t seed : {1u, 2u, 3u}) {
        SCOPED_TRACE(std::string(dtype_name(dt)) + " shift " + std::to_string(shift) + " seed " + std::to_string(seed));
        Case c = random_case(seed, spec(dt, shift));
        Expect e = closed_form(c);
        Result r = run_prefill(c, Precision::oracle);
        EXPECT_TRUE(within(r.out, e.out, oracle_out_bound(e, dt)));
        EXPECT_TRUE(within(r.lse, e.lse, oracle_lse_bound(e)));
        EXPECT_GT(norm1(r.out), 0.0);
      }
}

// Oracle vs faithful: both against the closed form with their recipes, so |oracle - faithful| is
// bounded by the sum; the faithful bound is recipe 1.3 with F = 2 (see sparse_case.hpp).
TEST(SparsePrefillProps, FaithfulWithinRecipeBoundOfOracle) {
  for (DType dt : kDTypes)
    for (std::uint64_t seed : {4u, 5u, 6u}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " seed " + std::to_string(seed));
      Case c = random_case(seed, spec(dt, seed == 5 ? -std::log(2.0) : 0.0));
      Expect e = closed_form(c);
      Result f = run_prefill(c, Precision::faithful), o = run_prefill(c, Precision::oracle);
      auto bo = oracle_out_bound(e, dt), bf = faithful_out_bound(e, dt);
      for (std::size_t i = 0; i < bo.size(); ++i) bo[i] += bf[i];
      EXPECT_TRUE(within(f.out, o.out, bo));
      auto lo = oracle_lse_bound(e), lf = faithful_lse_bound(e);
      for (std::size_t i = 0; i < lo.size(); ++i) lo[i] += lf[i];
      EXPECT_TRUE(within(f.lse, o.lse, lo));
      // Upstream bar (AP-S1) as a sanity ceiling.
      EXPECT_TRUE(within(f.out, o.out, uniform_bound(o.out.size(), 2e-2, o.out, 2e-2)));
      // The modes really differ (the faithful rounding points exist).
      EXPECT_FALSE(identical(f.out, o.out));
    }
}

// sink = -inf and every row of both sources selected exactly once (shuffled) equals dense softmax
// attention over the concatenated rows, computed here without any index lists.
TEST(SparsePrefillProps, MinusInfSinkAllRowsOnceIsDenseAttention) {
  for (DType dt : kDTypes) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    const std::int64_t P = 20, Ne = 9;
    Case c = random_case(7, {.dt = dt, .T = 3, .H = 4, .D = 32, .P = P, .Ne = Ne, .sentinel_rate = 0});
    for (std::int64_t h = 0; h < c.H; ++h) c.sink.view().store(std::array{h}, -kInf);
    Rng rng(77);
    for (std::int64_t t = 0; t < c.T; ++t) {
      c.pre[t].resize(P);
      std::iota(c.pre[t].begin(), c.pre[t].end(), 0);
      c.ext[t].resize(Ne);
      std::iota(c.ext[t].begin(), c.ext[t].end(), 0);
      for (auto* l : {&c.pre[t], &c.ext[t]})
        for (std::size_t i = l->size(); i > 1; --i) std::swap((*l)[i - 1], (*l)[rng.integer(0, i - 1)]);
    }
    Expect dense;  // softmax(q K^T * scale) K over all P + Ne rows
    dense.out.assign(c.T * c.H * c.D, 0.0);
    dense.A.assign(c.T * c.H * c.D, 0.0);
    dense.lse.assign(c.T * c.H, 0.0);
    dense.dlogit.assign(c.T * c.H, 0.0);
    dense.nkeys.assign(c.T * c.H, static_cast<double>(P + Ne));
    auto row = [&](std::int64_t r, std::int64_t d) { return r < P ? c.ukv.view().at({r, d}) : c.kv.view().at({r - P, d}); };
    for (std::int64_t t = 0; t < c.T; ++t)
      for (std::int64_t h = 0; h < c.H; ++h) {
        std::vector<double> s(P + Ne);
        double sabs = 0;
        for (std::int64_t r = 0; r < P + Ne; ++r) {
          double acc = 0, aa = 0;
          for (std::int64_t d = 0; d < c.D; ++d) {
            acc += c.q.view().at({t, h, d}) * row(r, d);
            aa += std::fabs(c.q.view().at({t, h, d}) * row(r, d));
          }
          s[r] = acc * c.scale;
          sabs = std::max(sabs, aa * c.scale);
        }
        double lse = 0;  // log-sum-exp by pairwise logaddexp, a different route than max-then-sum
        lse = s[0];
        for (std::size_t r = 1; r < s.size(); ++r) {
          const double hi = std::max(lse, s[r]), lo = std::min(lse, s[r]);
          lse = hi + std::log1p(std::exp(lo - hi));
        }
        const std::int64_t th = t * c.H + h;
        dense.lse[th] = lse;
        dense.dlogit[th] = (c.D + 2) * kE32 * sabs + 4 * kE32 * sabs + 8 * kE32;
        for (std::int64_t r = 0; r < P + Ne; ++r)
          for (std::int64_t d = 0; d < c.D; ++d) {
            dense.out[th * c.D + d] += std::exp(s[r] - lse) * row(r, d);
            dense.A[th * c.D + d] += std::exp(s[r] - lse) * std::fabs(row(r, d));
          }
      }
    Result o = run_prefill(c, Precision::oracle), f = run_prefill(c, Precision::faithful);
    EXPECT_TRUE(within(o.out, dense.out, oracle_out_bound(dense, dt)));
    EXPECT_TRUE(within(o.lse, dense.lse, oracle_lse_bound(dense)));
    EXPECT_TRUE(within(f.out, dense.out, faithful_out_bound(dense, dt)));
    EXPECT_TRUE(within(f.lse, dense.lse, faithful_lse_bound(dense)));
  }
}

// A row listed twice equals the same values stored as two physical rows listed once each: the
// logits, weights and summation order are identical, so results are identical in both modes.
TEST(SparsePrefillProps, DuplicatesCountWithMultiplicity) {
  for (DType dt : kDTypes)
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      Case c = random_case(8, {.dt = dt, .T = 4, .H = 3, .D = 16, .P = 6, .Ne = 3, .max_pre = 14, .max_ext = 6,
                               .sentinel_rate = 0.1, .shift = -0.3});
      // Small sources and long lists: many natural repeats; force at least one in each source.
      c.pre[0] = {2, 2, -1, 4, 2};
      c.ext[0] = {1, 1};
      Case u = c;  // every repeat re-pointed at a fresh physical copy of its row
      std::vector<std::vector<double>> extra_p, extra_e;
      auto unfold = [&](std::vector<List>& lists, const Tensor& src, std::vector<std::vector<double>>& extra, std::int64_t rows) {
        for (auto& l : lists) {
          std::vector<bool> seen(rows);
          for (auto& i : l) {
            if (i < 0) continue;
            if (seen[i]) {
              std::vector<double> r(c.D);
              for (std::int64_t d = 0; d < c.D; ++d) r[d] = src.view().at({i, d});
              extra.push_back(r);
              i = rows + static_cast<std::int64_t>(extra.size()) - 1;
            } else {
              seen[i] = true;
            }
          }
        }
      };
      unfold(u.pre, c.ukv, extra_p, 6);
      unfold(u.ext, c.kv, extra_e, 3);
      ASSERT_GT(extra_p.size(), 0u);
      ASSERT_GT(extra_e.size(), 0u);
      auto grow = [&](const Tensor& src, std::int64_t rows, const std::vector<std::vector<double>>& extra) {
        Tensor t(dt, {rows + static_cast<std::int64_t>(extra.size()), c.D});
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t d = 0; d < c.D; ++d) t.view().store(std::array{r, d}, src.view().at({r, d}));
        for (std::size_t k = 0; k < extra.size(); ++k)
          for (std::int64_t d = 0; d < c.D; ++d) t.view().store(std::array{rows + static_cast<std::int64_t>(k), d}, extra[k][d]);
        return t;
      };
      u.ukv = grow(c.ukv, 6, extra_p);
      u.kv = grow(c.kv, 3, extra_e);
      Result a = run_prefill(c, p), b = run_prefill(u, p);
      EXPECT_TRUE(identical(a.out, b.out));
      EXPECT_TRUE(identical(a.lse, b.lse));
      // And de-duplicating would change the answer: multiplicity matters.
      Case d = c;
      d.pre[0] = {2, 4};
      d.ext[0] = {1};
      EXPECT_FALSE(identical(run_prefill(d, p).out, a.out));
    }
}

// Order-only changes (permuting a list, or moving rows between the sources with shift 0) alter
// only the summation order. Oracle: a flip of the final rounding at most (one ulp, 2u|x|).
// Faithful: additionally fp32 reassociation of Z and the numerator, 2 (n + 2) e (A + |o|).
void expect_reorder_equivalent(const Case& a, const Case& b, DType dt) {
  const Expect e = closed_form(a);
  const double u = unit_roundoff(dt);
  for (Precision p : {Precision::oracle, Precision::faithful}) {
    Result ra = run_prefill(a, p), rb = run_prefill(b, p);
    std::vector<double> bo(ra.out.size()), bl(ra.lse.size());
    for (std::size_t i = 0; i < bo.size(); ++i) {
      const std::size_t th = i / a.D;
      const double mag = e.A[i] + std::fabs(e.out[i]);
      bo[i] = 2 * u * std::fabs(e.out[i]) + sub_spacing(dt) + 1e-12 * mag +
              (p == Precision::faithful ? 2 * (e.nkeys[th] + 2) * kE32 * mag : 0.0);
    }
    for (std::size_t i = 0; i < bl.size(); ++i)
      bl[i] = 2 * kE32 * std::fabs(e.lse[i]) + 1e-12 + (p == Precision::faithful ? 2 * (e.nkeys[i] + 2) * kE32 : 0.0);
    EXPECT_TRUE(within(rb.out, ra.out, bo)) << (p == Precision::oracle ? "oracle" : "faithful");
    EXPECT_TRUE(within(rb.lse, ra.lse, bl)) << (p == Precision::oracle ? "oracle" : "faithful");
  }
}

TEST(SparsePrefillProps, PermutingAListLeavesResultUnchanged) {
  for (DType dt : kDTypes) {
    Case c = random_case(9, spec(dt, -0.5));
    Case p = c;
    Rng rng(99);
    for (auto* lists : {&p.pre, &p.ext})
      for (auto& l : *lists)
        for (std::size_t i = l.size(); i > 1; --i) std::swap(l[i - 1], l[rng.integer(0, i - 1)]);
    ASSERT_NE(p.pre, c.pre);
    expect_reorder_equivalent(c, p, dt);
  }
}

// Move every other prefix row of each token into the extend source (appended to kv, re-indexed).
TEST(SparsePrefillProps, PrefixExtendSplitInvariance) {
  for (DType dt : kDTypes) {
    RandomSpec s = spec(dt);
    Case c = random_case(10, s);
    Case m = c;
    std::vector<std::int64_t> moved;  // unified_kv rows copied into the new kv
    for (std::int64_t t = 0; t < c.T; ++t) {
      List keep, ext = c.ext[t];
      for (std::size_t j = 0; j < c.pre[t].size(); ++j) {
        const auto i = c.pre[t][j];
        if (j % 2 == 1 && i >= 0) {
          moved.push_back(i);
          ext.push_back(s.Ne + static_cast<std::int64_t>(moved.size()) - 1);
        } else {
          keep.push_back(i);
        }
      }
      m.pre[t] = keep;
      m.ext[t] = ext;
    }
    ASSERT_FALSE(moved.empty());
    m.kv = Tensor(dt, {s.Ne + static_cast<std::int64_t>(moved.size()), s.D});
    for (std::int64_t r = 0; r < s.Ne; ++r)
      for (std::int64_t d = 0; d < s.D; ++d) m.kv.view().store(std::array{r, d}, c.kv.view().at({r, d}));
    for (std::size_t k = 0; k < moved.size(); ++k)
      for (std::int64_t d = 0; d < s.D; ++d)
        m.kv.view().store(std::array{s.Ne + static_cast<std::int64_t>(k), d}, c.ukv.view().at({moved[k], d}));
    expect_reorder_equivalent(c, m, dt);
  }
}

// Strided q (padded head stride), unified_kv (padded rows), kv (column stride 2), out in [H, T, D]
// memory order give the same values as compact tensors, in both modes.
TEST(SparsePrefillProps, StridedViewsEqualContiguous) {
  for (DType dt : kDTypes)
    for (Precision p : {Precision::oracle, Precision::faithful}) {
      RandomSpec s = spec(dt, -0.25);
      Case c = random_case(12, s);
      const auto T = s.T, H = s.H, D = s.D;
      Tensor q = Tensor::strided(dt, {T, H, D}, {(H + 3) * D, D, 1});
      Tensor ukv = Tensor::strided(dt, {s.P, D}, {D + 5, 1});
      Tensor kv = Tensor::strided(dt, {s.Ne, D}, {2 * D + 1, 2});
      for (Tensor* t : {&q, &ukv, &kv}) t->poison();  // padding reads would surface as NaN
      q.copy_from(c.q);
      ukv.copy_from(c.ukv);
      kv.copy_from(c.kv);
      Tensor out = Tensor::strided(dt, {T, H, D}, {D, T * D, 1});
      out.poison();  // lse stays contiguous: its layout is fixed by the contract (spec B.1)
      Layout l{q.view(), ukv.view(), kv.view(), out.view(), std::nullopt};
      Result strided = run_prefill(c, p, l), compact = run_prefill(c, p);
      EXPECT_TRUE(identical(strided.out, compact.out));
      EXPECT_TRUE(identical(strided.lse, compact.lse));
      EXPECT_GT(norm1(compact.out), 0.0);
    }
}

}  // namespace
}  // namespace kpt
