// Contract of sparse/paged_decode: the checks of sglang's Triton wrapper
// (python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/paged_decode.py @ 078e5e2a) in
// upstream order, its implicit Python failures as explicit entries, then kparity's optional checks.
// Upstream's fp8 branch (kv_scales) has no counterpart: the C++ API takes no kv_scales.
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"

#include "kparity/diagnostics/catalog_ids.hpp"
#include "sparse_checks_util.hpp"

namespace kparity::sparse {
namespace {

using namespace detail;

bool extra_checks(const PagedDecodeArgs& a, Checker& c) {
  const TensorView& q = a.q;
  const bool q3 = q.ndim() == 3;
  if (check_devices(c, ids::sparse_decode_device_mismatch, q,
                    {{"unified_kv", &a.unified_kv}, {"kv_indices", &a.kv_indices}, {"kv_indptr", &a.kv_indptr},
                     {"attn_sink", &a.attn_sink}, {"out", &a.out}}))
    return true;
  if (a.return_lse && a.lse && check_devices(c, ids::sparse_decode_device_mismatch, q, {{"lse", &*a.lse}}))
    return true;
  if (a.unified_kv.ndim() > 2 &&
      c.fail(ids::sparse_decode_unified_kv_too_many_dims, arg_loc("unified_kv", ".shape"),
             {{"ndim", num(a.unified_kv.ndim())}}, {"shape " + shape_str(a.unified_kv)}))
    return true;
  if (q3 && a.unified_kv.ndim() >= 1 && q.sizes[2] != last_size(a.unified_kv) &&
      c.fail(ids::sparse_decode_q_head_dim, arg_loc("q", ".shape[2]"),
             {{"q_d", num(q.size(-1))}, {"unified_kv_d", num(a.unified_kv.size(-1))}},
             {"the kernel loads D = q.size(-1) channels of every pool row"}))
    return true;
  if (check_index_dtypes(c, ids::sparse_decode_index_dtype,
                         {{"kv_indices", &a.kv_indices}, {"kv_indptr", &a.kv_indptr}}))
    return true;
  // Decode hands its index tensors to the kernel as they are; the kernel indexes them densely.
  for (Named s : {Named{"kv_indices", &a.kv_indices}, Named{"kv_indptr", &a.kv_indptr}}) {
    if (!s.view->is_contiguous() &&
        c.fail(ids::sparse_decode_index_not_contiguous, arg_loc(s.name, ".stride"),
               {{"name", s.name}, {"strides", strides_str(*s.view)}}, {"shape " + shape_str(*s.view)}))
      return true;
  }
  if (q3) {
    if (check_sink_length(c, ids::sparse_decode_attn_sink_length, a.attn_sink, q.sizes[1])) return true;
    if (check_indptr_length(c, ids::sparse_decode_indptr_length, "kv_indptr", a.kv_indptr, q.sizes[0])) return true;
  }
  if (check_finite_scalar(c, ids::sparse_decode_scale_not_finite, "softmax_scale", a.softmax_scale)) return true;
  if (check_offsets(c, ids::sparse_decode_offset_overflow, "q", q)) return true;
  if (check_offsets(c, ids::sparse_decode_offset_overflow, "out", a.out)) return true;
  if (a.unified_kv.ndim() == 2 && check_offsets(c, ids::sparse_decode_offset_overflow, "unified_kv", a.unified_kv, 1))
    return true;
  if (q3 && check_out(c, ids::sparse_decode_out_buffer, a.out, q)) return true;
  if (q3 && check_lse(c, ids::sparse_decode_lse_missing, ids::sparse_decode_lse_buffer, a.return_lse, a.lse,
                      q.sizes[0], q.sizes[1]))
    return true;
  return false;
}

void deep_checks(const PagedDecodeArgs& a, Checker& c) {
  const TensorView& q = a.q;
  if (q.ndim() != 3) return;
  const std::int64_t T = q.size(0), H = q.size(1);
  Csr s = make_csr("kv_indptr", a.kv_indptr, "kv_indices", a.kv_indices, "unified_kv", a.unified_kv, T);
  // A strided index view is read densely by the kernel, so its logical values mean nothing there.
  if (!a.kv_indices.is_contiguous() || !a.kv_indptr.is_contiguous()) s.usable = false;
  if (check_spans(c, ids::sparse_decode_span_out_of_range, s, T)) return;
  if (check_decreasing(c, ids::sparse_decode_indptr_decreasing, s, T)) return;
  // Decode dropped the sentinel test: every selected entry is an address.
  if (check_selected(
          c, ids::sparse_decode_index_negative, s, T, [](std::int64_t v) { return v < 0; },
          [&](std::int64_t, std::int64_t j, std::int64_t v) {
            return std::vector<DiagArg>{{"name", "kv_indices"}, {"j", num(j)}, {"v", num(v)}};
          },
          "are negative too"))
    return;
  // int64 ids are multiplied in 64 bits; only int32 ids can wrap.
  if (a.kv_indices.dtype == DType::i32 && check_row_offsets(c, ids::sparse_decode_row_offset_overflow, s, T)) return;
  if (check_row_range(c, ids::sparse_decode_index_out_of_range, s, T)) return;
  if (check_sink_values(c, ids::sparse_decode_attn_sink_nan, ids::sparse_decode_attn_sink_inf, a.attn_sink, H)) return;
  check_nonfinite(c, ids::sparse_decode_non_finite_input, q, {&s}, T);
}

void paged_decode_contract(const PagedDecodeArgs& a, Checker& c) {
  const TensorView& q = a.q;
  if (!c.reference() && !q.device.is_cuda() &&
      c.fail(ids::sparse_decode_requires_cuda_tensors, arg_loc("q", ".device"), {},
             {"q is on " + q.device.str() + "; only q is tested by this check"}))
    return;
  if (!is_half_float(q.dtype) &&
      c.fail(ids::sparse_decode_q_dtype, arg_loc("q", ".dtype"), {{"q_dtype", py_dtype(q.dtype)}}))
    return;
  if (a.unified_kv.dtype != q.dtype &&
      c.fail(ids::sparse_decode_unified_kv_dtype, arg_loc("unified_kv", ".dtype"),
             {{"unified_kv_dtype", py_dtype(a.unified_kv.dtype)}, {"q_dtype", py_dtype(q.dtype)}},
             {"the value labelled kv= is unified_kv's dtype (upstream's wording)"}))
    return;
  if (q.ndim() != 3 &&
      c.fail(ids::sparse_decode_q_not_3d, arg_loc("q", ".shape"), {{"ndim", num(q.ndim())}},
             {"q has shape " + shape_str(q),
              q.ndim() < 3 ? "upstream raises ValueError: not enough values to unpack (expected 3, got " +
                                 std::to_string(q.ndim()) + ")"
                           : "upstream raises ValueError: too many values to unpack (expected 3)"}))
    return;
  if (a.unified_kv.ndim() < 2 &&
      c.fail(ids::sparse_decode_unified_kv_too_few_dims, arg_loc("unified_kv", ".shape"),
             {{"ndim", num(a.unified_kv.ndim())}},
             {"upstream raises IndexError (Dimension out of range) when it reads the pool's strides"}))
    return;
  if (c.extra() && extra_checks(a, c)) return;
  if (c.deep()) deep_checks(a, c);
}

}  // namespace

std::vector<Diagnostic> validate_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) {
  return run_validate<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}
std::vector<Diagnostic> check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) {
  return run_check<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}
Status try_check_paged_decode(const PagedDecodeArgs& a, const ValidateOptions& o) noexcept {
  return run_status<PagedDecodeArgs>(kPagedDecodeOp, &paged_decode_contract, a, o);
}

DecodeDims paged_decode_dims(const PagedDecodeArgs& a) {
  DecodeDims d;
  if (a.q.ndim() == 3) d.T = a.q.size(0), d.H = a.q.size(1), d.D = a.q.size(2);
  if (a.unified_kv.ndim() >= 1) d.P = a.unified_kv.size(0);
  return d;
}

PagedDecodeArgs paged_decode_args(const ArgBag& bag) {
  PagedDecodeArgs a;
  a.q = bag.required("q");
  a.unified_kv = bag.required("unified_kv");
  a.kv_indices = bag.required("kv_indices");
  a.kv_indptr = bag.required("kv_indptr");
  a.attn_sink = bag.required("attn_sink");
  a.out = bag.required("out");
  if (const TensorView* l = bag.tensor("lse")) a.lse = *l;
  a.softmax_scale = bag.required_scalar("softmax_scale");  // positional upstream: no default
  a.return_lse = bag.flag("return_lse", false);
  return a;
}

}  // namespace kparity::sparse
