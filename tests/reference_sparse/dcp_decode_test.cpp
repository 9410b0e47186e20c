// DCP merge property of replicated_logit_shift (spec C.2, G.1, AP-S4) and the decode sibling (F.0).
#include <cmath>

#include "sparse_case.hpp"

namespace kpt {
namespace {

struct Merged {
  std::vector<double> out, lse;
  std::vector<double> out_mag;  // sum_r w_r |out_r[d]|: what the partials' roundings scale with
  std::vector<double> lse_mag;  // max_r |lse_r|
};

// Natural-log LSE combine of per-rank (out, lse) pairs, in fp64.
Merged lse_merge(const std::vector<Result>& parts, std::int64_t TH, std::int64_t D) {
  Merged m;
  m.out.assign(TH * D, 0.0);
  m.out_mag.assign(TH * D, 0.0);
  m.lse.assign(TH, -kInf);
  m.lse_mag.assign(TH, 0.0);
  for (std::int64_t th = 0; th < TH; ++th) {
    double mx = -kInf;
    for (const auto& p : parts) {
      mx = std::max(mx, p.lse[th]);
      if (std::isfinite(p.lse[th])) m.lse_mag[th] = std::max(m.lse_mag[th], std::fabs(p.lse[th]));
    }
    if (mx == -kInf) continue;
    double W = 0;
    for (const auto& p : parts) W += std::exp(p.lse[th] - mx);
    m.lse[th] = mx + std::log(W);
    for (const auto& p : parts) {
      const double w = std::exp(p.lse[th] - mx) / W;
      for (std::int64_t d = 0; d < D; ++d) {
        m.out[th * D + d] += w * p.out[th * D + d];
        m.out_mag[th * D + d] += w * std::fabs(p.out[th * D + d]);
      }
    }
  }
  return m;
}

// G.1's DCP setup: rank r owns prefix entries with idx % ranks == r and sees every extend row and
// the sink, both shifted by -ln(ranks).
TEST(SparseDcp, ShardedLseMergeEqualsFullCall) {
  for (DType dt : {DType::bf16, DType::f16})
    for (std::int64_t ranks : {2, 8}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " ranks " + std::to_string(ranks));
      Case full = random_case(100 + ranks, {.dt = dt, .T = 3, .H = 16, .D = 64, .P = 96, .Ne = 12, .max_pre = 40,
                                            .max_ext = 6, .sentinel_rate = 0.1});
      full.pre[0].resize(23, 5);  // the upstream test's lengths for two tokens, plus one random token
      full.pre[1].resize(17, 9);
      const std::int64_t TH = full.T * full.H, D = full.D;
      for (Precision p : {Precision::oracle, Precision::faithful}) {
        const Result ref = run_prefill(full, p);
        std::vector<Result> parts;
        for (std::int64_t r = 0; r < ranks; ++r) {
          Case c = full;
          c.shift = -std::log(static_cast<double>(ranks));
          for (auto& l : c.pre) {
            List own;
            for (auto i : l) if (i >= 0 && i % ranks == r) own.push_back(i);
            l = own;
          }
          parts.push_back(run_prefill(c, p));
        }
        const Merged m = lse_merge(parts, TH, D);
        if (p == Precision::faithful) {
          // AP-S4's bar, in atol + rtol form as the upstream test applies it.
          EXPECT_TRUE(within(m.out, ref.out, uniform_bound(m.out.size(), 3e-2, ref.out, 3e-2)));
          EXPECT_TRUE(within(m.lse, ref.lse, uniform_bound(m.lse.size(), 3e-3, ref.lse, 0.0)));
        } else {
          // Oracle: each partial and the full output are rounded once to storage (u |x| each), and
          // each fp32 lse moves its weight by e |lse|; the merge itself is fp64.
          const double u = unit_roundoff(dt);
          std::vector<double> bo(m.out.size()), bl(m.lse.size());
          for (std::size_t i = 0; i < bo.size(); ++i)
            bo[i] = u * (m.out_mag[i] + std::fabs(ref.out[i])) + 4 * kE32 * (m.lse_mag[i / D] + 1) * m.out_mag[i] +
                    2 * sub_spacing(dt);
          for (std::size_t i = 0; i < bl.size(); ++i)
            bl[i] = 2 * kE32 * (m.lse_mag[i] + std::fabs(ref.lse[i])) + 1e-12;
          EXPECT_TRUE(within(m.out, ref.out, bo));
          EXPECT_TRUE(within(m.lse, ref.lse, bl));
        }
      }
    }
}

// A DCP run without the shift double-counts the replicated terms: the property has teeth.
TEST(SparseDcp, WithoutShiftTheMergeIsWrong) {
  Case full = random_case(300, {.T = 2, .H = 4, .D = 32, .P = 40, .Ne = 8, .max_pre = 30, .max_ext = 6, .sentinel_rate = 0});
  full.ext = {{0, 1, 2}, {3, 4}};
  const Result ref = run_prefill(full, Precision::oracle);
  std::vector<Result> parts;
  for (std::int64_t r = 0; r < 2; ++r) {
    Case c = full;
    for (auto& l : c.pre) {
      List own;
      for (auto i : l) if (i % 2 == r) own.push_back(i);
      l = own;
    }
    parts.push_back(run_prefill(c, Precision::oracle));
  }
  const Merged m = lse_merge(parts, full.T * full.H, full.D);
  EXPECT_FALSE(within(m.lse, ref.lse, uniform_bound(m.lse.size(), 3e-3, ref.lse, 0.0)));
}

Case decode_case(std::uint64_t seed, DType dt) {
  Case c = random_case(seed, {.dt = dt, .T = 4, .H = 6, .D = 48, .P = 30, .Ne = 1, .max_pre = 25, .max_ext = 0,
                              .sentinel_rate = 0});
  c.pre[2].clear();  // an empty span: zeros, lse = sigma
  for (auto& l : c.ext) l.clear();
  return c;
}

// F.0: decode is prefill with an empty extend source. The oracle computes the same real numbers
// in both, so they agree exactly; faithful decode works in the log2 domain, so each faithful result
// is held to its own recipe bound against the closed form.
TEST(SparseDecode, EqualsPrefillWithEmptyExtend) {
  for (DType dt : {DType::bf16, DType::f16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Case c = decode_case(400, dt);
    Result dec = run_decode(c, Precision::oracle), pre = run_prefill(c, Precision::oracle);
    EXPECT_TRUE(identical(dec.out, pre.out));
    EXPECT_TRUE(identical(dec.lse, pre.lse));
    const Expect e = closed_form(c);
    EXPECT_TRUE(within(dec.out, e.out, oracle_out_bound(e, dt)));
    Result fdec = run_decode(c, Precision::faithful), fpre = run_prefill(c, Precision::faithful);
    EXPECT_TRUE(within(fdec.out, e.out, faithful_out_bound(e, dt)));
    EXPECT_TRUE(within(fdec.lse, e.lse, faithful_lse_bound(e)));
    auto b = faithful_out_bound(e, dt), b2 = faithful_out_bound(e, dt);
    for (std::size_t i = 0; i < b.size(); ++i) b[i] += b2[i];
    EXPECT_TRUE(within(fdec.out, fpre.out, b));
    for (std::int64_t h = 0; h < c.H; ++h) {
      EXPECT_EQ(dec.lse[2 * c.H + h], static_cast<double>(static_cast<float>(c.sink.view().at({h}))));
      // sigma * log2(e) * ln(2) in fp32: two roundings away from sigma (the log2-domain difference).
      EXPECT_NEAR(fdec.lse[2 * c.H + h], dec.lse[2 * c.H + h], 4 * kE32 * std::fabs(dec.lse[2 * c.H + h]));
      for (std::int64_t d = 0; d < c.D; ++d) EXPECT_EQ(fdec.out[(2 * c.H + h) * c.D + d], 0.0);
    }
  }
}

// Hand case: keys [1, 0] and [0, 1], q = [1, 0], scale 1, sink 0: out = (e, 1) / (e + 2).
TEST(SparseDecode, HandComputedTwoKeys) {
  const double e = std::exp(1.0);
  Case c;
  c.dt = DType::f16;
  c.T = 1; c.H = 1; c.D = 2;
  c.q = Tensor(c.dt, {1, 1, 2});
  c.q.view().store(std::array<std::int64_t, 3>{0, 0, 0}, 1.0);
  c.ukv = Tensor(c.dt, {2, 2});
  c.ukv.view().store(std::array<std::int64_t, 2>{0, 0}, 1.0);
  c.ukv.view().store(std::array<std::int64_t, 2>{1, 1}, 1.0);
  c.kv = Tensor(c.dt, {1, 2});
  c.sink = Tensor(DType::f32, {1});
  c.pre = {{1, 0}};
  c.ext = {{}};
  Result r = run_decode(c, Precision::oracle);
  EXPECT_EQ(r.out[0], round_to_dtype(e / (e + 2), c.dt));
  EXPECT_EQ(r.out[1], round_to_dtype(1 / (e + 2), c.dt));
  EXPECT_EQ(r.lse[0], round_to_dtype(std::log(e + 2), DType::f32));
  Result f = run_decode(c, Precision::faithful);
  EXPECT_NEAR(f.out[0], e / (e + 2), 2 * unit_roundoff(c.dt));
  EXPECT_NEAR(f.out[1], 1 / (e + 2), 4 * unit_roundoff(c.dt));  // plus the numerator weight rounding
  EXPECT_NEAR(f.lse[0], std::log(e + 2), 8 * kE32);
}

TEST(SparseDecode, PlusInfSinkAndNegativeEntryRejected) {
  Case c = decode_case(401, DType::bf16);
  c.sink.view().store(std::array<std::int64_t, 1>{3}, kInf);
  Result r = run_decode(c, Precision::faithful);
  for (std::int64_t t = 0; t < c.T; ++t) {
    EXPECT_EQ(r.lse[t * c.H + 3], -kInf);
    for (std::int64_t d = 0; d < c.D; ++d) EXPECT_EQ(r.out[(t * c.H + 3) * c.D + d], 0.0);
  }
  // Decode has no sentinel rule (F.0 item 2): a negative entry is invalid, never silently skipped.
  c.pre[0] = {1, -1};
  EXPECT_ANY_THROW(run_decode(c, Precision::oracle));
}

}  // namespace
}  // namespace kpt
