#pragma once
// Scalar references of the DeepSeek-V4 sparse attention ops (host tensors).
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::reference::sparse {

using kparity::sparse::PagedDecodeArgs;
using kparity::sparse::PagedPrefillArgs;

void paged_prefill(const PagedPrefillArgs& args, Precision p,
                   const ValidateOptions& options = ValidateOptions::strict(Entry::reference));
void paged_decode(const PagedDecodeArgs& args, Precision p,
                  const ValidateOptions& options = ValidateOptions::strict(Entry::reference));

}  // namespace kparity::reference::sparse
