#pragma once
// The oracle's results stored in a wider float dtype than the call's (`kparity run --out-dtype
// f32|f64`). The oracle rounds only when it stores (reference/precision.hpp), so running it on
// exact copies of the written tensors in a wider dtype gives its values rounded to that dtype
// instead of the call's: with f64, not rounded at all.
//
// Some catalog entries forbid the copies' dtype (upstream's "`g_cache` must have dtype
// torch.float32.", kparity's float-dtype and "out like q" checks). The relaxation: the call itself
// must pass the contract in full; the copies differ from it only in dtype (same shapes, contiguous,
// fresh memory), so the entries that only the copies break are waived for the run
// (ValidateOptions::waived), every other check still applies.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/tensor.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/reference/precision.hpp"

namespace kparity::ops {

struct WideCall {
  ArgBag bag;                            // the call, copies in place of the narrower written tensors
  std::map<std::string, Tensor> copies;  // owns the copies, by argument name
  std::vector<std::string> waived;       // catalog ids only the copies break (in the order found)
};

// Copies every float tensor of `bag` that `op` writes and that is narrower than `wide` (f32 or
// f64) into `wide`. Throws std::invalid_argument for another `wide`, and when a copy breaks an
// entry about an argument that was not copied (then they differ in more than dtype).
// Precondition: `bag` passes `options` (the caller validated it).
WideCall widen_written(std::string_view op, const ArgBag& bag, DType wide, const ValidateOptions& options);

// The reference of `op` on the widened call, validated with `options` plus the waiver.
void run_reference(std::string_view op, const WideCall& call, reference::Precision p, ValidateOptions options);

}  // namespace kparity::ops
