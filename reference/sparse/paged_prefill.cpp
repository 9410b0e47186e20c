// sparse/paged_prefill reference, V-lse semantics (spec sparse_attention.md C.1-C.6); mirrors
// sglang unified_kv_kernels/paged_prefill.py (one online softmax over prefix then extend rows).
#include <array>
#include <stdexcept>

#include "kparity/reference/sparse.hpp"
#include "op_checks.hpp"
#include "sink_attention.hpp"

namespace kparity::reference::sparse {

void detail::check_prefill_for_reference(const PagedPrefillArgs& a, const ValidateOptions& options) {
  kparity::sparse::check_paged_prefill(a, options);
  // Guards for options that skip the shape checks: the reference never reads out of bounds.
  if (a.q.ndim() != 3 || a.unified_kv.ndim() != 2 || a.kv.ndim() != 2 || a.out.ndim() != 3)
    throw std::invalid_argument("sparse/paged_prefill reference: q/out must be 3-D and unified_kv/kv 2-D");
  if (a.return_lse && !a.lse)
    throw std::invalid_argument("sparse/paged_prefill reference: return_lse needs an lse buffer");
  const std::int64_t D = a.q.size(2);
  if (a.unified_kv.size(1) != D || a.kv.size(1) != D)
    throw std::invalid_argument("sparse/paged_prefill reference: head dims of q, unified_kv and kv differ");
}

void paged_prefill(const PagedPrefillArgs& a, Precision p, const ValidateOptions& options) {
  detail::check_prefill_for_reference(a, options);
  const std::int64_t T = a.q.size(0), D = a.q.size(2);

  detail::SinkAttention att{a.q, a.attn_sink, a.out, a.return_lse ? a.lse : std::nullopt,
                            a.softmax_scale, a.replicated_logit_shift, detail::ExpBase::e, p};
  detail::TokenKeys keys;
  keys.D = D;
  for (std::int64_t t = 0; t < T; ++t) {
    keys.clear();
    const auto pre = detail::csr_span(a.kv_indptr_prefix, a.kv_indices_prefix, t);
    for (std::int64_t j = pre.begin; j < pre.end; ++j) {
      const std::int64_t i = a.kv_indices_prefix.load_int_flat(j);
      if (i >= 0) keys.append(a.unified_kv, i, false);  // any negative value is a sentinel (C.1 item 3)
    }
    const auto ext = detail::csr_span(a.kv_indptr_extend, a.kv_indices_extend, t);
    for (std::int64_t j = ext.begin; j < ext.end; ++j) {
      const std::int64_t e = a.kv_indices_extend.load_int_flat(j);
      if (e >= 0) keys.append(a.kv, e, true);
    }
    detail::attend_token(att, t, keys);
  }
}

}  // namespace kparity::reference::sparse
