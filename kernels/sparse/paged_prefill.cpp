// sparse/paged_prefill launcher: contract -> optional deep pass on host mirrors -> support checks
// -> POD params -> dtype/tile dispatch -> launch on the caller's stream (style habit 7).
#include <vector>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "kparity/kernels/sparse.hpp"
#include "sparse/prepare.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::sparse {
namespace {
constexpr std::string_view kOp = kparity::sparse::kPagedPrefillOp;
constexpr std::string_view kUnsupportedId = kparity::ids::sparse_prefill_kernel_unsupported;
}  // namespace

Status paged_prefill(const PagedPrefillArgs& a, cudaStream_t stream, const LaunchOptions& o, const SparseTuning& tu) {
  // The shape pass, W1 (5d9da259c68eb6c4) first; its warnings go back with the result.
  Status status = kparity::sparse::try_check_paged_prefill(a, kernels::detail::shape_only(o.validate));
  if (!status.ok()) return status;
  if (a.return_lse && !a.lse)
    return kernels::detail::not_implemented(kOp, kUnsupportedId, "lse", "None", "an lse buffer when return_lse");
  // The deep checks read indices, pointers, the sink, q and the selected rows. Synchronous and
  // proportional to the tensors: a test-harness option, not a hot path.
  const auto reads = [](PagedPrefillArgs& m) {
    return std::vector<TensorView*>{&m.q, &m.unified_kv, &m.kv, &m.kv_indices_prefix, &m.kv_indptr_prefix,
                                    &m.kv_indices_extend, &m.kv_indptr_extend, &m.attn_sink};
  };
  if (o.validate.deep)
    if (Status s = kernels::detail::deep_pass(kOp, a, o.validate, stream, &kparity::sparse::validate_paged_prefill, reads);
        !s.ok())
      return s;
  detail::OpViews v;
  v.q = &a.q;
  v.src[0] = &a.unified_kv, v.src[1] = &a.kv;
  v.idx[0] = &a.kv_indices_prefix, v.idx[1] = &a.kv_indices_extend;
  v.ptr[0] = &a.kv_indptr_prefix, v.ptr[1] = &a.kv_indptr_extend;
  v.sink = &a.attn_sink;
  v.out = &a.out;
  v.lse = a.return_lse ? &*a.lse : nullptr;
  v.scale = a.softmax_scale;
  v.shift = a.replicated_logit_shift;
  detail::Plan plan;
  if (Status s = detail::make_plan(kOp, kUnsupportedId, v, tu, plan); !s.ok()) return s;
  Status done = detail::launch(kOp, kUnsupportedId, plan, a.q.dtype == DType::bf16, stream, o);
  return done.ok() ? status : done;
}

}  // namespace kparity::kernels::sparse
