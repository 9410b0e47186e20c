#pragma once
// The two sweeps of the KDA a-priori bound's step_rows (error_bound.cpp) over whole 8-row tiles, in
// explicit AVX2 registers. Compiled from plain loops, the AVX2 form of step_rows held a tile's sums in
// stack arrays and reduced parts of them in scalar shuffles (perf annotate, 2026-12-05, AMD EPYC
// without AVX-512): it was a quarter of a kernel-sized kda/recurrent case. Each lane is one state row
// and performs exactly the loop's operations in the loop's order (no fused multiply-add), so the
// sums are the same bits as every other form of step_rows.
#include <cstddef>

namespace kparity::reference::kda::detail {

// Whether step_rows should take the functions below: x86-64 with AVX2 but without AVX-512, whose
// compiled form (16-row tiles in 32 registers) is faster there.
bool bound_rows_avx2_preferred() noexcept;

// Sweep 1 over rows [0, tiled) (tiled a multiple of 8) of ST (K x V, row i holds S[.][i]): per row j,
//   sa = |ST[i][j]| + rho[j]; ya = sa * (al[i] + dal[i]) * one_u; sdal = sa * dal[i]; y = ST[i][j] * al[i]
//   sya[j] += ya * ya; ssd[j] += sdal * sdal; syk[j] += |ya * ka[i]|; res[j] -= y * k[i]
// for i = 0..K-1 in order, starting from sya = ssd = syk = 0 and res as given.
void bound_sweep1_avx2(std::size_t K, std::size_t V, std::size_t tiled, const double* ST, const double* rho,
                       const double* al, const double* dal, const double* k, const double* ka, double one_u,
                       double* sya, double* ssd, double* syk, double* res) noexcept;

// Sweep 2 over the same rows: per row j, for i in order,
//   sv = ST[i][j] * al[i] + d[j] * k[i]; ST[i][j] = sv; nf[j] += sv - sv
//   s2a = |sv| + rho_new[j]; ss2[j] += s2a * s2a; sdq[j] += |s2a * qa[i]|
// from zero sums; finite[j] = (nf[j] == 0).
void bound_sweep2_avx2(std::size_t K, std::size_t V, std::size_t tiled, double* ST, const double* rho_new,
                       const double* al, const double* k, const double* qa, const double* d, double* ss2, double* sdq,
                       unsigned char* finite) noexcept;

// Sweep 2 of one token and sweep 1 of the next (al2, dal2, k2, ka2: its factors) in one pass over
// the rows (8-row tiles, d and rho_new read from memory: the twelve sums fill the registers): after
// the update, sa = |sv| + rho_new[j] is sweep 2's s2a and the next sweep's sa (its rho is this
// rho_new), and y = sv * al2[i]; each sum as in the two functions above, so the same bits; finite is
// not computed. res holds the next token's v on entry.
void bound_sweep21_avx2(std::size_t K, std::size_t V, std::size_t tiled, double* ST, const double* rho_new,
                        const double* al, const double* k, const double* qa, const double* d, double* ss2, double* sdq,
                        const double* al2, const double* dal2, const double* k2, const double* ka2, double one_u,
                        double* sya, double* ssd, double* syk, double* res) noexcept;

}  // namespace kparity::reference::kda::detail
