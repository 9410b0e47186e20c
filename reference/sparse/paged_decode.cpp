// sparse/paged_decode reference (spec sparse_attention.md F.0): one source, no sentinels, the
// prefill softmax-with-sink in the log2 domain; mirrors sglang unified_kv_kernels/paged_decode.py.
#include <array>
#include <stdexcept>

#include "kparity/reference/sparse.hpp"
#include "op_checks.hpp"
#include "sink_attention.hpp"

namespace kparity::reference::sparse {

void detail::check_decode_for_reference(const PagedDecodeArgs& a, const ValidateOptions& options) {
  kparity::sparse::check_paged_decode(a, options);
  if (a.q.ndim() != 3 || a.unified_kv.ndim() != 2 || a.out.ndim() != 3)
    throw std::invalid_argument("sparse/paged_decode reference: q/out must be 3-D and unified_kv 2-D");
  if (a.return_lse && !a.lse)
    throw std::invalid_argument("sparse/paged_decode reference: return_lse needs an lse buffer");
  if (a.unified_kv.size(1) != a.q.size(2))
    throw std::invalid_argument("sparse/paged_decode reference: head dims of q and unified_kv differ");
}

void paged_decode(const PagedDecodeArgs& a, Precision p, const ValidateOptions& options) {
  detail::check_decode_for_reference(a, options);
  const std::int64_t T = a.q.size(0), D = a.q.size(2);

  detail::SinkAttention att{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                            a.softmax_scale, 0.0, detail::ExpBase::two, p};
  detail::TokenKeys keys;
  keys.D = D;
  for (std::int64_t t = 0; t < T; ++t) {
    keys.clear();
    const auto span = detail::csr_span(a.kv_indptr, a.kv_indices, t);
    for (std::int64_t j = span.begin; j < span.end; ++j) {
      // No sentinel test upstream: a negative entry is an invalid row, which append() refuses
      // (the deep contract reports it first).
      keys.append(a.unified_kv, a.kv_indices.load_int_flat(j), false);
    }
    detail::attend_token(att, t, keys);
  }
}

}  // namespace kparity::reference::sparse
