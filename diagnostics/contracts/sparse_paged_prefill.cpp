// Contract for sparse/paged_prefill (placeholder bodies; checks filled in next).
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

namespace kparity::sparse {
namespace {
void paged_prefill_contract(const PagedPrefillArgs&, Checker&) {}
}  // namespace

std::vector<Diagnostic> validate_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) {
  return run_validate<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}
std::vector<Diagnostic> check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) {
  return run_check<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}
Status try_check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) noexcept {
  return run_status<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}
PrefillDims paged_prefill_dims(const PagedPrefillArgs&) { return {}; }
PagedPrefillArgs paged_prefill_args(const ArgBag&) { return {}; }

}  // namespace kparity::sparse
