// The dispatch and the small helpers of error_bound.hpp; the bounds themselves live next to each
// op's reference (reference/sparse/error_bound.cpp, reference/kda/error_bound.cpp).
#include "kparity/reference/error_bound.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "kparity/reference/kda.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::reference {

double gamma_n(double n, double u) noexcept {
  const double nu = n * u;
  return nu < 1 ? nu / (1 - nu) : INFINITY;
}

namespace {

// Round-to-nearest stores into a float format: relative error, absolute error near zero, and the
// magnitude from which the result is infinite (largest finite value plus half its ulp).
struct StoreError {
  double unit_roundoff, underflow_unit, overflow;
};
StoreError store_error(DType t) noexcept {
  switch (t) {
    case DType::f32: return {0x1p-24, 0x1p-150, 0x1.ffffffp127};
    case DType::f16: return {0x1p-11, 0x1p-25, 65520.0};
    case DType::bf16: return {0x1p-8, 0x1p-134, 0x1.ffp127};
    default: return {0.0, 0.0, INFINITY};  // integers are compared exactly
  }
}

}  // namespace

double unit_roundoff(DType t) noexcept { return store_error(t).unit_roundoff; }
double underflow_unit(DType t) noexcept { return store_error(t).underflow_unit; }
double store_overflow(DType t) noexcept { return store_error(t).overflow; }

ErrorBounds error_bound(std::string_view op, const ArgBag& bag, const Fp32Model& m) {
  if (op == kparity::sparse::kPagedPrefillOp) return sparse::paged_prefill_error_bound(kparity::sparse::paged_prefill_args(bag), m);
  if (op == kparity::sparse::kPagedDecodeOp) return sparse::paged_decode_error_bound(kparity::sparse::paged_decode_args(bag), m);
  if (op == kparity::kda::kRecurrentOp) return kda::recurrent_error_bound(kparity::kda::recurrent_args(bag), m);
  if (op == kparity::kda::kPackedDecodeOp) return kda::packed_decode_error_bound(kparity::kda::packed_decode_args(bag), m);
  if (op == kparity::kda::kReplaySsmDecodeOp)
    return kda::replayssm_decode_error_bound(kparity::kda::replayssm_decode_args(bag), m);
  throw std::invalid_argument("no error bound for op '" + std::string(op) + "'");
}

bool has_oracle_and_bound(std::string_view op) noexcept {
  return op == kparity::sparse::kPagedPrefillOp || op == kparity::sparse::kPagedDecodeOp;
}

ErrorBounds oracle_and_bound(std::string_view op, const ArgBag& bag, const ValidateOptions& options, const Fp32Model& m) {
  if (op == kparity::sparse::kPagedPrefillOp)
    return sparse::paged_prefill_oracle_and_bound(kparity::sparse::paged_prefill_args(bag), options, m);
  if (op == kparity::sparse::kPagedDecodeOp)
    return sparse::paged_decode_oracle_and_bound(kparity::sparse::paged_decode_args(bag), options, m);
  throw std::invalid_argument("no oracle run beside its bound for op '" + std::string(op) + "'");
}

}  // namespace kparity::reference
