#pragma once
// Private to reference/sparse: what the oracle checks of a call before its token loop (the contract
// under the caller's options, then guards for options that skip the shape checks), shared by the
// plain runs (paged_prefill.cpp, paged_decode.cpp) and the oracle run beside the bound
// (error_bound.cpp), so both refuse a call alike.
#include "kparity/reference/sparse.hpp"

namespace kparity::reference::sparse::detail {

void check_prefill_for_reference(const PagedPrefillArgs& a, const ValidateOptions& options);
void check_decode_for_reference(const PagedDecodeArgs& a, const ValidateOptions& options);

}  // namespace kparity::reference::sparse::detail
