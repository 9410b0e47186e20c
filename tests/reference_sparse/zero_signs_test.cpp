// The sign of an exactly zero P.V channel in the sparse oracle (exact_sum.hpp's rule: -0 iff every
// term w_j v_jd is a -0 product, i.e. has a zero factor and factors of opposite signs). The oracle
// decides it per token from the values and per head from which weights are zero
// (reference/sparse/zero_signs.hpp, issue 25); here every combination of +0, -0, -1 and +1 over
// three keys meets heads whose weights are all one, all zero, or mixed (exactly 1 and exactly 0 by
// construction), against the rule evaluated here and the oracle's long-accumulator evaluation.
#include <bit>
#include <cstdint>

#include "kparity/reference/accumulate.hpp"
#include "sparse_case.hpp"

namespace kpt {
namespace {

// Row j of the case's unified_kv: channel 0 carries the logit (1000 for key 0), channel 1 + c the
// c-th combination's value of key j (c in base 4 over {+0, -0, -1, +1}).
constexpr double kValues[4] = {0.0, -0.0, -1.0, 1.0};
constexpr std::int64_t kCombos = 64, kD = 1 + kCombos, kRows = 3, kH = 4;

double value(std::int64_t row, std::int64_t d) {
  if (d == 0) return row == 0 ? 1000.0 : 0.0;
  std::int64_t c = d - 1;
  for (std::int64_t r = 0; r < row; ++r) c /= 4;
  return kValues[c % 4];
}

// Head h's weight of row r (the sink's is irrelevant to the sign): head 0 q = 0, sink 0: every weight
// exp(0) = 1; head 1 q[0] = -1: row 0's logit -1000 gives exp(-1000) = 0, the others 1; head 2
// q[0] = 1: row 0 is the max (weight 1), the others exp(-1000) = 0; head 3 q = 0, sink 1000: every
// weight 0.
double weight(std::int64_t h, std::int64_t row) {
  switch (h) {
    case 0: return 1.0;
    case 1: return row == 0 ? 0.0 : 1.0;
    case 2: return row == 0 ? 1.0 : 0.0;
    default: return 0.0;
  }
}

Case zero_sign_case(const List& keys) {
  Case c;
  c.dt = DType::bf16;
  c.T = 1, c.H = kH, c.D = kD;
  c.q = Tensor(c.dt, {1, kH, kD});
  c.q.view().store(std::array<std::int64_t, 3>{0, 1, 0}, -1.0);
  c.q.view().store(std::array<std::int64_t, 3>{0, 2, 0}, 1.0);
  c.ukv = Tensor(c.dt, {kRows, kD});
  for (std::int64_t r = 0; r < kRows; ++r)
    for (std::int64_t d = 0; d < kD; ++d) c.ukv.view().store(std::array{r, d}, value(r, d));
  c.sink = Tensor(DType::f32, {kH});
  c.sink.view().store(std::array<std::int64_t, 1>{3}, 1000.0);
  c.pre = {keys};
  return c;
}

std::uint64_t bits(double x) { return std::bit_cast<std::uint64_t>(x); }

TEST(SparseZeroSigns, ExactZeroChannelsFollowTheMinusZeroProductRule) {
  // Each key once, and with a repeated key (the oracle sums a repeated row once, with its multiplicity).
  for (const List& keys : {List{0, 1, 2}, List{0, 1, 2, 1}, List{2, 0, 2, 1, 0}}) {
    SCOPED_TRACE(::testing::PrintToString(keys));
    const Case c = zero_sign_case(keys);
    const Result fast = run_decode(c, Precision::oracle);
    Result slow;
    {
      const reference::OracleEvaluationScope scope(reference::OracleEvaluation::long_sums);
      slow = run_decode(c, Precision::oracle);
    }
    int zeros = 0, negative = 0;
    for (std::int64_t h = 0; h < kH; ++h) {
      for (std::int64_t d = 1; d < kD; ++d) {
        SCOPED_TRACE("head " + std::to_string(h) + ", channel " + std::to_string(d));
        const double got = fast.out[h * kD + d];
        EXPECT_EQ(bits(got), bits(slow.out[h * kD + d]));
        double sum = 0.0;  // small integers: exact
        bool minus = true;
        for (std::int64_t r : keys) {
          const double w = weight(h, r), v = value(r, d);
          sum += w * v;
          minus = minus && (w == 0 || v == 0) && std::signbit(w) != std::signbit(v);
        }
        if (sum != 0) {
          EXPECT_NE(got, 0.0);
          continue;
        }
        ++zeros;
        negative += minus;
        EXPECT_EQ(bits(got), bits(minus ? -0.0 : 0.0));
      }
    }
    // The combinations reach both signs under every kind of head.
    EXPECT_GT(negative, kH);
    EXPECT_GT(zeros - negative, kH);
  }
}

}  // namespace
}  // namespace kpt
