#include <stdexcept>
#include <string>

#include "kparity/fuzz/property.hpp"
#include "kparity/reference/kda.hpp"
#include "kparity/reference/sparse.hpp"

namespace kparity::fuzz {

void run_reference(std::string_view op, const ArgBag& bag, reference::Precision p, const ValidateOptions& o) {
  if (op == kda::kRecurrentOp) return reference::kda::recurrent(kda::recurrent_args(bag), p, o);
  if (op == kda::kPackedDecodeOp) return reference::kda::packed_decode(kda::packed_decode_args(bag), p, o);
  if (op == kda::kReplaySsmDecodeOp) return reference::kda::replayssm_decode(kda::replayssm_decode_args(bag), p, o);
  if (op == sparse::kPagedPrefillOp) return reference::sparse::paged_prefill(sparse::paged_prefill_args(bag), p, o);
  if (op == sparse::kPagedDecodeOp) return reference::sparse::paged_decode(sparse::paged_decode_args(bag), p, o);
  throw std::invalid_argument("no reference for op '" + std::string(op) + "'");
}

}  // namespace kparity::fuzz
