// The ops with contracts, seen through ArgBag (for catalogue examples, fuzz mutators, the CLI).
#include <algorithm>

#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

namespace kparity {
namespace {

template <auto FromBag, auto Validate>
std::vector<Diagnostic> validate_bag(const ArgBag& bag, const ValidateOptions& o) {
  return Validate(FromBag(bag), o);
}
template <auto FromBag, auto Check>
std::vector<Diagnostic> check_bag(const ArgBag& bag, const ValidateOptions& o) {
  return Check(FromBag(bag), o);
}

#define KPARITY_OP(ns, name_const, from_bag, validate, check) \
  OpContract{ns::name_const, &validate_bag<&ns::from_bag, &ns::validate>, &check_bag<&ns::from_bag, &ns::check>}

}  // namespace

const std::vector<OpContract>& op_contracts() {
  static const std::vector<OpContract> ops = {
      KPARITY_OP(kda, kRecurrentOp, recurrent_args, validate_recurrent, check_recurrent),
      KPARITY_OP(kda, kChunkOp, chunk_args, validate_chunk, check_chunk),
      KPARITY_OP(kda, kPackedDecodeOp, packed_decode_args, validate_packed_decode, check_packed_decode),
      KPARITY_OP(kda, kReplaySsmDecodeOp, replayssm_decode_args, validate_replayssm_decode, check_replayssm_decode),
      KPARITY_OP(sparse, kPagedPrefillOp, paged_prefill_args, validate_paged_prefill, check_paged_prefill),
      KPARITY_OP(sparse, kPagedDecodeOp, paged_decode_args, validate_paged_decode, check_paged_decode),
  };
  return ops;
}

const OpContract* find_op_contract(std::string_view op) {
  const auto& ops = op_contracts();
  auto it = std::find_if(ops.begin(), ops.end(), [&](const OpContract& c) { return c.op == op; });
  return it == ops.end() ? nullptr : &*it;
}

}  // namespace kparity
