#pragma once
// Private to reference/kda: the recurrence's loops over a value head's state rows laid out for SIMD
// lanes (issue 25). The state is held transposed, ST[c * V + j] = S[j][c], so that one vector
// instruction advances the same step of V independent rows; each lane does exactly what the scalar
// loop over its row did, in the same order, so the bits are the same. Measured at c6c0638: the
// oracle's recurrence ran one Dot2 per row with libm's fma() (the library is built for generic
// x86-64) and was the larger part of a kernel-sized KDA case (bench/results/oracle_2026-12-02.md).
#include <cstdint>

namespace kparity::reference::kda::detail {

// ST[c][j] *= alpha[c] (the decay, A.7 step 1), fp64 or fp32.
void decay_rows(std::int64_t K, std::int64_t V, const double* alpha, double* ST);
void decay_rows(std::int64_t K, std::int64_t V, const float* alpha, float* ST);
// ST[c][j] = fma(d[j], k[c], ST[c][j]) (the oracle's rank-one update, one rounding per element).
void update_rows_fused(std::int64_t K, std::int64_t V, const double* d, const double* k, double* ST);
// ST[c][j] = fl32(d[j] * k[c]) + ST[c][j] (the faithful model's unfused update, kda.md B.2.7 item 3).
void update_rows_unfused(std::int64_t K, std::int64_t V, const float* d, const float* k, float* ST);
// out[j] = sum over c in order, from +0, of fl32(ST[c][j] * x[c]) (the faithful model's row dots).
void row_dots(std::int64_t K, std::int64_t V, const float* ST, const float* x, float* out);
// decay_rows then row_dots(x), and update_rows_unfused then row_dots(x), each in one pass over ST:
// the same updated ST and the same out (the faithful recurrence's steps 1-2 and 4-5).
void decay_row_dots(std::int64_t K, std::int64_t V, const float* alpha, float* ST, const float* x, float* out);
void update_row_dots(std::int64_t K, std::int64_t V, const float* d, const float* k, float* ST, const float* x, float* out);
// The rows of an oracle sum over the channels whose terms have a non-finite factor: the terms of
// row j are (ST[c][j], x[c]) for c < K, then (e[j], 1) where e is given. special[j] = 1 where a
// factor is non-finite, and out[j] is then exact_sum_of_products' value of the row (IEEE 754 on the
// products with a non-finite factor: NaN, +inf or -inf); elsewhere special[j] = 0 and out[j] is left
// as it was (state_lanes.cpp says why it is the same value).
void nonfinite_sums(std::int64_t K, std::int64_t V, const double* ST, const double* x, const double* e, double* out,
                    unsigned char* special);
// The ReplaySSM bound's ring terms of one S_prev row (error_bound.cpp; state_lanes.cpp says what).
void ring_terms(std::int64_t K, std::int64_t mm, const double* d, std::int64_t rs, const double* da, const double* dd,
                const double* kw, const double* dkw, const double* kwa, double* val, double* err, double* mag);

}  // namespace kparity::reference::kda::detail
