// Contract for sparse/paged_decode (placeholder bodies; checks filled in next).
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"

namespace kparity::sparse {
namespace {
void paged_decode_contract(const PagedDecodeArgs&, Checker&) {}
}  // namespace

std::vector<Diagnostic> validate_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) {
  return run_validate<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}
std::vector<Diagnostic> check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) {
  return run_check<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}
Status try_check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) noexcept {
  return run_status<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}
DecodeDims paged_decode_dims(const PagedDecodeArgs&) { return {}; }
PagedDecodeArgs paged_decode_args(const ArgBag&) { return {}; }

}  // namespace kparity::sparse
