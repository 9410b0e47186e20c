// exact_lanes.hpp: the scalar forms, and the dispatch to the x86 kernels of lane_kernels.hpp
// (lanes_avx512.cpp, lanes_avx2.cpp), chosen once at run time and forced by ForceKernel in tests.
#include "kparity/reference/exact_lanes.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "lane_kernels.hpp"

namespace kparity::reference::lanes {
namespace {

using namespace kernels;

void dot2_scalar(std::size_t n, std::size_t l0, std::size_t l1, const double* A, std::size_t lda,
                 const std::int32_t* rows, const double* b, double* p, double* s, double* T, unsigned char* ok) {
  for (std::size_t l = l0; l < l1; ++l) {
    double pl = p[l], sl = s[l], Tl = T[l];
    unsigned char okl = ok[l];
    for (std::size_t i = 0; i < n && okl; ++i) dot2_step(row_of(A, lda, rows, i)[l], b[i], pl, sl, Tl, okl);
    p[l] = pl, s[l] = sl, T[l] = Tl, ok[l] = okl;
  }
}

enum Kernel : int { kScalar = 0, kAvx2 = 1, kAvx512 = 2 };

int best_kernel() noexcept {
#ifdef KPARITY_LANES_X86
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return kAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return kAvx2;
#endif
  return kScalar;
}

std::atomic<int>& active() {
  static std::atomic<int> k{best_kernel()};
  return k;
}

// detail::certify (exact_sum.cpp) without branches, lane by lane: the same operations on the same
// values (no fused multiply-add: this file builds with -ffp-contract=off), so the same verdicts and
// results. Its vector forms (certify_avx512, certify_avx2 in lanes_avx512.cpp, lanes_avx2.cpp) are in
// explicit intrinsics: GCC's vector extensions for this loop left its comparisons and 64-bit integer
// steps scalar (vpinsrq/setae per lane; it was 20-40% of the oracle's time at the
// kernel-sized shapes, perf, bench/results/oracle_2026-12-02.md "Second pass").
void certify_scalar(std::size_t l0, std::size_t lanes, const double* p, const double* s, const double* T,
                    const unsigned char* ok, double c, double extra, double* result, unsigned char* decided) {
  for (std::size_t l = l0; l < lanes; ++l) {
    const double pl = p[l], sl = s[l], Tl = T[l];
    const double x = pl + sl, z = x - pl;
    const double t = (pl - (x - z)) + (sl - z);
    const double E = c * Tl + 0x1p-1074 + extra;
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(x);
    const double away = std::bit_cast<double>(bits + 1), toward = std::bit_cast<double>(bits - 1);
    const double up = x > 0 ? away : toward, dn = x > 0 ? toward : away;
    const bool finite = std::fabs(pl) <= DBL_MAX && std::fabs(sl) <= DBL_MAX && std::fabs(Tl) <= DBL_MAX;
    const bool exact = Tl == 0 && extra == 0;
    const bool inside = std::fabs(x) >= 0x1p-1000 && std::fabs(x) < DBL_MAX && t + E < (up - x) / 2 && t - E > -((x - dn) / 2);
    decided[l] = ok[l] && finite && (exact || inside);
    result[l] = exact ? pl : x;
  }
}


}  // namespace

void certify(std::size_t lanes, const double* p, const double* s, const double* T, const unsigned char* ok,
             std::size_t m, double extra, double* result, unsigned char* decided) noexcept {
  if (m == 0) {  // detail::certify: the empty sum is +0, whatever the lanes hold
    for (std::size_t l = 0; l < lanes; ++l) result[l] = 0.0, decided[l] = ok[l];
    return;
  }
  if (m >= (std::size_t{1} << 30)) {
    for (std::size_t l = 0; l < lanes; ++l) decided[l] = 0;
    return;
  }
  const double c = 2.0 * static_cast<double>(m + 1) * 0x1p-53;
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: done = certify_avx512(lanes, p, s, T, ok, c, extra, result, decided); break;
    case kAvx2: done = certify_avx2(lanes, p, s, T, ok, c, extra, result, decided); break;
    default: break;
  }
#endif
  certify_scalar(done, lanes, p, s, T, ok, c, extra, result, decided);
}

std::size_t dot2_certify(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
                         const double* b, std::size_t m, double extra, double* result, unsigned char* decided,
                         bool in_range) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  if (m > 0 && m < (std::size_t{1} << 30)) {
    const double c = 2.0 * static_cast<double>(m + 1) * 0x1p-53;
    switch (active().load(std::memory_order_relaxed)) {
      case kAvx512:
        done = dot2_certify_avx512(in_range, n, lanes, A, lda, rows, b, c, extra, result, decided);
        break;
      case kAvx2:
        done = dot2_certify_avx2(in_range, n, lanes, A, lda, rows, b, c, extra, result, decided);
        break;
      default: break;
    }
  }
#endif
  // The rest (other kernels, the last lanes) through dot2 and certify, a bounded chunk at a time.
  constexpr std::size_t kChunk = 64;
  double p[kChunk], s[kChunk], T[kChunk];
  unsigned char ok[kChunk];
  for (std::size_t l = done; l < lanes; l += kChunk) {
    const std::size_t k = std::min(kChunk, lanes - l);
    for (std::size_t i = 0; i < k; ++i) p[i] = -0.0, s[i] = 0.0, T[i] = 0.0, ok[i] = 1;
    dot2(n, k, A + l, lda, rows, b, p, s, T, ok);
    certify(k, p, s, T, ok, m, extra, result + l, decided + l);
  }
  std::size_t decided_count = 0;  // a branch-free count (the lanes are usually all decided)
  for (std::size_t l = 0; l < lanes; ++l) decided_count += decided[l];
  return lanes - decided_count;
}

void error_sums(std::size_t n, const double* A, std::size_t lda, const std::int32_t* rows, const double* b,
                std::size_t k, const std::int32_t* which, double* out, unsigned char* held) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  if (active().load(std::memory_order_relaxed) == kAvx512) done = error_sums_avx512(n, A, lda, rows, b, k, which, out, held);
#endif
  for (std::size_t j = done; j < k; ++j) {
    const std::size_t l = static_cast<std::size_t>(which[j]);
    double r;
    held[j] = detail::exact_error_sum(n, [&](std::size_t i) { return std::pair{row_of(A, lda, rows, i)[l], b[i]}; }, r);
    if (held[j]) out[l] = r;
  }
}

void dot2(std::size_t n, std::size_t lanes, const double* A, std::size_t lda, const std::int32_t* rows,
          const double* b, double* p, double* s, double* T, unsigned char* ok) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512:
      dot2_avx512(n, lanes, A, lda, rows, b, p, s, T, ok, done);
      if (lanes - done >= 8) {  // one more half block
        std::size_t more = 0;
        dot2_avx2(n, lanes - done, A + done, lda, rows, b, p + done, s + done, T + done, ok + done, more);
        done += more;
      }
      break;
    case kAvx2:
      dot2_avx2(n, lanes, A, lda, rows, b, p, s, T, ok, done);
      break;
    default:
      break;
  }
#endif
  dot2_scalar(n, done, lanes, A, lda, rows, b, p, s, T, ok);
}

namespace {

// The update of dot2_scaled / dot2_updated on lanes [l0, lanes), element by element, then dot2 on
// them: the lanes the AVX-512 or AVX2 kernel leaves, and every lane with the scalar kernel.
template <Pre P>
void dot2_pre(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* c, const double* d,
              const double* b, double* p, double* s, double* T, unsigned char* ok, bool in_range) noexcept {
  std::size_t done = 0;
#ifdef KPARITY_LANES_X86
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: dot2_pre_avx512(P, in_range, n, lanes, A, lda, c, d, b, p, s, T, ok, done); break;
    case kAvx2: dot2_pre_avx2(P, in_range, n, lanes, A, lda, c, d, b, p, s, T, ok, done); break;
    default: break;
  }
#endif
  if (done == lanes) return;
  for (std::size_t i = 0; i < n; ++i) {
    double* a = A + i * lda;
    for (std::size_t l = done; l < lanes; ++l) a[l] = P == Pre::scale ? a[l] * c[i] : std::fma(d[l], c[i], a[l]);
  }
  dot2(n, lanes - done, A + done, lda, nullptr, b, p + done, s + done, T + done, ok + done);
}

}  // namespace

void dot2_scaled(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* scale, const double* b,
                 double* p, double* s, double* T, unsigned char* ok, bool in_range) noexcept {
  dot2_pre<Pre::scale>(n, lanes, A, lda, scale, nullptr, b, p, s, T, ok, in_range);
}
void dot2_updated(std::size_t n, std::size_t lanes, double* A, std::size_t lda, const double* d, const double* k,
                  const double* b, double* p, double* s, double* T, unsigned char* ok, bool in_range) noexcept {
  dot2_pre<Pre::fma>(n, lanes, A, lda, k, d, b, p, s, T, ok, in_range);
}

const char* kernel_name() noexcept {
  switch (active().load(std::memory_order_relaxed)) {
    case kAvx512: return "avx512";
    case kAvx2: return "avx2";
    default: return "scalar";
  }
}

ForceKernel::ForceKernel(const char* name) : previous_(active().load()) {
  const std::string n = name;
  const int want = n == "avx512" ? kAvx512 : n == "avx2" ? kAvx2 : n == "scalar" ? kScalar : -1;
  if (want < 0) throw std::invalid_argument("unknown lane kernel '" + n + "'");
  if (want > best_kernel() || (want == kAvx2 && best_kernel() < kAvx2))
    throw std::invalid_argument(std::string("lane kernel '") + name + "' is not available on this machine");
  active().store(want);
}
ForceKernel::~ForceKernel() { active().store(previous_); }

}  // namespace kparity::reference::lanes
