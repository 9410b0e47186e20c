// The floors by op (floors.hpp).
#include "kparity/judge/floors.hpp"

#include "kparity/diagnostics/contracts/kda_chunk.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

namespace kparity::judging {

double abs_floor(const Call& call, std::string_view name, const Call* oracle) {
  const std::string_view op = call.op;
  if (op == kda::kRecurrentOp || op == kda::kPackedDecodeOp || op == kda::kReplaySsmDecodeOp)
    return kda_abs_floor(call, name, oracle);
  if (op == kda::kChunkOp) return kda_chunk_abs_floor(call, name, oracle);
  if (op == sparse::kPagedPrefillOp || op == sparse::kPagedDecodeOp) return sparse_abs_floor(call, name, oracle);
  return 0.0;
}

}  // namespace kparity::judging
