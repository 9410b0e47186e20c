#pragma once
// The x86 lane kernels behind exact_lanes.hpp (lanes_avx512.cpp, lanes_avx2.cpp), picked at run time
// by exact_lanes.cpp. Each kernel does, per lane and term, exactly the steps of lanes::dot2_step
// (TwoProduct with an fma, TwoSum, s += q + r, T += |q| + |r|); only the range test differs in form:
// a block of lanes keeps the largest |product| and the smallest |product| among terms with two
// non-zero factors, and a lane whose largest exceeds 2^1000 or whose smallest is below 2^-960 is
// marked not ok, and so is a lane whose p ends non-finite (a non-finite product makes p inf or NaN
// for good: products in range cannot overflow it), which is the scalar step's verdict on such
// products. A zero b contributes +-0 products with a zero factor, which are in range, so such terms
// skip the smallest-product test. The library builds with -ffp-contract=off: nothing is fused but
// the fmas written out.
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define KPARITY_LANES_X86 1
#endif

namespace kparity::reference::lanes::kernels {

constexpr double kHuge = 0x1p1000, kTiny = 0x1p-960;
constexpr std::size_t kAhead = 8;  // terms a block's rows are prefetched ahead

inline const double* row_of(const double* A, std::size_t lda, const std::int32_t* rows, std::size_t i) {
  return A + (rows ? static_cast<std::size_t>(rows[i]) : i) * lda;
}

// dot2_scaled (A * c[i]) or dot2_updated (fma(d[l], c[i], A)): the in-place update before the step.
// in_range: exact_lanes.hpp's promise that every term is in range, under which the kernel skips the
// range test (its verdict is then "in range"; a lane still fails where p ends non-finite).
enum class Pre { scale, fma };

#ifdef KPARITY_LANES_X86
// Each runs whole blocks of lanes and returns (or sets `done` to) the lanes it did; the caller's
// scalar code takes the rest. The arguments are exact_lanes.hpp's; c is certify's factor
// 2 (m + 1) 2^-53.
void dot2_avx512(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
                 const double* b, double* p, double* s, double* T, unsigned char* ok, std::size_t& done);
void dot2_pre_avx512(Pre pre, bool in_range, std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                     const double* c, const double* d, const double* b, double* p, double* s, double* T,
                     unsigned char* ok, std::size_t& done);
std::size_t certify_avx512(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
                           double c, double extra, double* result, unsigned char* decided);
std::size_t dot2_certify_avx512(bool in_range, std::size_t n, std::size_t lanes, const double* A, std::size_t lda,
                                const std::int32_t* rows, const double* b, double c, double extra, double* result,
                                unsigned char* decided);
std::size_t error_sums_avx512(std::size_t n, const double* A, std::size_t lda, const std::int32_t* rows, const double* b,
                              std::size_t k, const std::int32_t* which, double* out, unsigned char* held);

void dot2_avx2(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
               const double* b, double* p, double* s, double* T, unsigned char* ok, std::size_t& done);
void dot2_pre_avx2(Pre pre, bool in_range, std::size_t n, std::size_t lanes, double* A, std::size_t lda,
                   const double* c, const double* d, const double* b, double* p, double* s, double* T,
                   unsigned char* ok, std::size_t& done);
std::size_t certify_avx2(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
                         double c, double extra, double* result, unsigned char* decided);
std::size_t dot2_certify_avx2(bool in_range, std::size_t n, std::size_t lanes, const double* A, std::size_t lda,
                              const std::int32_t* rows, const double* b, double c, double extra, double* result,
                              unsigned char* decided);
#endif

}  // namespace kparity::reference::lanes::kernels
