#pragma once
// Scalar references of the DeepSeek-V4 sparse attention ops (host tensors).
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/reference/error_bound.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::reference::sparse {

using kparity::sparse::PagedDecodeArgs;
using kparity::sparse::PagedPrefillArgs;

void paged_prefill(const PagedPrefillArgs& args, Precision p,
                   const ValidateOptions& options = ValidateOptions::strict(Entry::reference));
void paged_decode(const PagedDecodeArgs& args, Precision p,
                  const ValidateOptions& options = ValidateOptions::strict(Entry::reference));

// A-priori error bounds of `out` and (with return_lse) `lse` (error_bound.hpp; the recipe is in
// reference/sparse/error_bound.cpp). The call is assumed valid (run the contract first).
ErrorBounds paged_prefill_error_bound(const PagedPrefillArgs& args, const Fp32Model& m = {});
ErrorBounds paged_decode_error_bound(const PagedDecodeArgs& args, const Fp32Model& m = {});

// paged_prefill / paged_decode at Precision::oracle and the error bounds of the same call in one
// pass over its tokens: each token's keys, their statistics and exact dots are taken once for both
// (issue 32 (3)). The same outputs, the same bounds and the same exceptions as the two calls apart.
ErrorBounds paged_prefill_oracle_and_bound(const PagedPrefillArgs& args, const ValidateOptions& options,
                                           const Fp32Model& m = {});
ErrorBounds paged_decode_oracle_and_bound(const PagedDecodeArgs& args, const ValidateOptions& options,
                                          const Fp32Model& m = {});

}  // namespace kparity::reference::sparse
