#include "compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>
#include <vector>

namespace kparity::gpu_test {
namespace {

int nan_class(double x) { return std::isnan(x) ? 1 : std::isinf(x) ? (x > 0 ? 2 : 3) : 0; }

std::string classify(const TensorView& t) {
  bool all_zero = true, all_nan = true, inf = false;
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double x = t.load_flat(i);
    all_zero &= x == 0.0;
    all_nan &= std::isnan(x);
    inf |= std::isinf(x);
  }
  if (t.numel() == 0) return "empty";
  return all_nan ? "all-NaN (untouched poison?)" : all_zero ? "all-zero" : inf ? "contains Inf" : "finite";
}

// noise(x) of recipe 1.3, evaluated in the comparison dtype.
double noise(const TensorView& ref) {
  double m = 0;
  for (std::int64_t i = 0; i < ref.numel(); ++i) {
    const double x = ref.load_flat(i);
    if (!std::isfinite(x)) continue;
    const double y = round_to_dtype(round_to_dtype(x + 0.3, ref.dtype) - 0.3, ref.dtype);
    m = std::max(m, std::abs(y - x));
  }
  return m;
}

double storage_ulp(double x, DType t) {
  if (t != DType::bf16 && t != DType::f16) return 0.0;
  int e = 0;
  std::frexp(x == 0 ? 1e-30 : x, &e);  // |x| in [2^(e-1), 2^e)
  return std::ldexp(1.0, e - 1 - (t == DType::bf16 ? 7 : 10));
}

struct Worst {
  std::int64_t i;
  double diff;
};

}  // namespace

::testing::AssertionResult close_to(const TensorView& ker, const TensorView& ref, Tol tol, const std::string& what) {
  const std::int64_t n = ref.numel();
  std::int64_t bad = 0, class_bad = 0;
  double max_abs = 0, max_rel = 0;
  std::int64_t i_abs = -1, i_rel = -1;
  std::vector<Worst> worst;
  for (std::int64_t i = 0; i < n; ++i) {
    const double e = ref.load_flat(i), a = ker.load_flat(i);
    if (nan_class(e) || nan_class(a)) {
      if (nan_class(e) != nan_class(a)) { ++bad; ++class_bad; worst.push_back({i, INFINITY}); }
      continue;
    }
    const double d = std::abs(a - e);
    if (d > max_abs) { max_abs = d; i_abs = i; }
    const double r = e != 0 ? d / std::abs(e) : 0;
    if (r > max_rel) { max_rel = r; i_rel = i; }
    if (d > tol.atol + tol.rtol * std::abs(e) && d > tol.ulps * storage_ulp(e, ref.dtype)) { ++bad; worst.push_back({i, d}); }
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  std::sort(worst.begin(), worst.end(), [](const Worst& x, const Worst& y) { return x.diff > y.diff; });
  std::ostringstream os;
  os << what << ": Mismatched elements: " << bad << " / " << n << " (" << 100.0 * bad / std::max<std::int64_t>(n, 1)
     << "%), " << class_bad << " non-finite class mismatches\n  greatest absolute difference " << max_abs << " at "
     << i_abs << " (atol " << tol.atol << ", rtol " << tol.rtol << ")\n  greatest relative difference " << max_rel
     << " at " << i_rel << "\n  worst (index, kernel, reference):";
  for (std::size_t w = 0; w < std::min<std::size_t>(worst.size(), 30); ++w)
    os << " (" << worst[w].i << ", " << ker.load_flat(worst[w].i) << ", " << ref.load_flat(worst[w].i) << ")";
  os << "\n  kernel output: " << classify(ker);
  return ::testing::AssertionFailure() << os.str();
}

::testing::AssertionResult close(const TensorView& ker, const TensorView& ref_lp, const TensorView& ref64, Tol accept,
                                 double F, const std::string& what) {
  if (auto r = close_to(ker, ref_lp, accept, what + " vs faithful reference"); !r) return r;
  double ker_err = 0, lp_err = 0;
  std::int64_t i_ker = -1;
  for (std::int64_t i = 0; i < ref64.numel(); ++i) {
    const double o = ref64.load_flat(i), k = ker.load_flat(i), l = ref_lp.load_flat(i);
    if (!std::isfinite(o)) continue;
    if (!std::isfinite(k)) return ::testing::AssertionFailure() << what << ": non-finite kernel value at " << i;
    if (std::abs(k - o) > ker_err) { ker_err = std::abs(k - o); i_ker = i; }
    lp_err = std::max(lp_err, std::abs(l - o));
  }
  const double allowed = F * lp_err + 2 * noise(ref64);
  if (ker_err <= allowed) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": oracle rule max|ker - ref64| = " << ker_err << " at " << i_ker
                                       << " > " << F << " * " << lp_err << " (faithful baseline) + 2 * noise = "
                                       << allowed << " (" << 100.0 * ker_err / std::max(allowed, 1e-300)
                                       << "% of allowed)";
}

::testing::AssertionResult values_equal(const TensorView& a, const TensorView& b, const std::string& what) {
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.load_flat(i), y = b.load_flat(i);
    if (!(x == y || (std::isnan(x) && std::isnan(y))))
      return ::testing::AssertionFailure() << what << ": first difference at flat " << i << ": " << x << " vs " << y;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult bytes_equal(const TensorView& a, const TensorView& b, const std::string& what) {
  std::vector<std::int64_t> idx(a.rank, 0);
  const std::size_t es = a.element_size();
  std::int64_t flat = 0;
  bool ok = true;
  for_each_index(std::span<const std::int64_t>(a.sizes.data(), a.rank), [&](std::span<const std::int64_t> ix) {
    if (!ok) return;
    const auto* pa = static_cast<const char*>(a.data) + a.offset_of(ix) * static_cast<std::int64_t>(es);
    const auto* pb = static_cast<const char*>(b.data) + b.offset_of(ix) * static_cast<std::int64_t>(es);
    if (std::memcmp(pa, pb, es) != 0) ok = false;
    else ++flat;
  });
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": bytes differ at flat index " << flat;
}

bool nonzero(const TensorView& t) {
  for (std::int64_t i = 0; i < t.numel(); ++i)
    if (t.load_flat(i) != 0.0) return true;
  return false;
}

}  // namespace kparity::gpu_test
