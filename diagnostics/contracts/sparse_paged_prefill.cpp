// Contract of sparse/paged_prefill: the checks of sglang's Triton wrapper
// (python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/paged_prefill.py @ 0132848) in
// upstream order, its implicit Python failures as explicit entries, then kparity's optional checks.
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"

#include "kparity/diagnostics/catalog_ids.hpp"
#include "sparse_checks_util.hpp"

namespace kparity::sparse {
namespace {

using namespace detail;

// Upstream's message and unpacking text, kept as a note so a user can match it to a Python traceback.
std::string unpack_note(int ndim) {
  if (ndim < 3) return "upstream raises ValueError: not enough values to unpack (expected 3, got " + std::to_string(ndim) + ")";
  return "upstream raises ValueError: too many values to unpack (expected 3)";
}

bool extra_checks(const PagedPrefillArgs& a, Checker& c) {
  const TensorView& q = a.q;
  const bool q3 = q.ndim() == 3;
  if (check_devices(c, ids::sparse_prefill_device_mismatch, q,
                    {{"unified_kv", &a.unified_kv}, {"kv_indices_prefix", &a.kv_indices_prefix},
                     {"kv_indptr_prefix", &a.kv_indptr_prefix}, {"kv", &a.kv},
                     {"kv_indices_extend", &a.kv_indices_extend}, {"kv_indptr_extend", &a.kv_indptr_extend},
                     {"attn_sink", &a.attn_sink}, {"out", &a.out}}))
    return true;
  if (a.return_lse && a.lse && check_devices(c, ids::sparse_prefill_device_mismatch, q, {{"lse", &*a.lse}}))
    return true;
  for (Named s : {Named{"unified_kv", &a.unified_kv}, Named{"kv", &a.kv}}) {
    if (s.view->ndim() > 2 &&
        c.fail(ids::sparse_prefill_kv_source_too_many_dims, arg_loc(s.name, ".shape"),
               {{"name", s.name}, {"ndim", num(s.view->ndim())}}, {"shape " + shape_str(*s.view)}))
      return true;
  }
  if (q3 && a.unified_kv.ndim() >= 1 && q.sizes[2] != last_size(a.unified_kv) &&
      c.fail(ids::sparse_prefill_q_head_dim, arg_loc("q", ".shape[2]"),
             {{"q_d", num(q.size(-1))}, {"unified_kv_d", num(a.unified_kv.size(-1))}},
             {"the kernel loads D = q.size(-1) channels of every KV row"}))
    return true;
  if (check_index_dtypes(c, ids::sparse_prefill_index_dtype,
                         {{"kv_indices_prefix", &a.kv_indices_prefix}, {"kv_indptr_prefix", &a.kv_indptr_prefix},
                          {"kv_indices_extend", &a.kv_indices_extend}, {"kv_indptr_extend", &a.kv_indptr_extend}}))
    return true;
  if (q3) {
    const std::int64_t T = q.sizes[0], H = q.sizes[1];
    if (check_sink_length(c, ids::sparse_prefill_attn_sink_length, a.attn_sink, H)) return true;
    if (check_indptr_length(c, ids::sparse_prefill_indptr_length, "kv_indptr_prefix", a.kv_indptr_prefix, T)) return true;
    if (check_indptr_length(c, ids::sparse_prefill_indptr_length, "kv_indptr_extend", a.kv_indptr_extend, T)) return true;
  }
  if (check_finite_scalar(c, ids::sparse_prefill_scalar_not_finite, "softmax_scale", a.softmax_scale)) return true;
  if (check_finite_scalar(c, ids::sparse_prefill_scalar_not_finite, "replicated_logit_shift", a.replicated_logit_shift))
    return true;
  if (check_offsets(c, ids::sparse_prefill_offset_overflow, "q", q)) return true;
  if (check_offsets(c, ids::sparse_prefill_offset_overflow, "out", a.out)) return true;
  if (a.unified_kv.ndim() == 2 && check_offsets(c, ids::sparse_prefill_offset_overflow, "unified_kv", a.unified_kv, 1))
    return true;
  if (a.kv.ndim() == 2 && check_offsets(c, ids::sparse_prefill_offset_overflow, "kv", a.kv, 1)) return true;
  if (q3 && check_out(c, ids::sparse_prefill_out_buffer, a.out, q)) return true;
  if (q3 && check_lse(c, ids::sparse_prefill_lse_missing, ids::sparse_prefill_lse_buffer, a.return_lse, a.lse,
                      q.sizes[0], q.sizes[1]))
    return true;
  return false;
}

// The wrapper narrows all four index tensors to int32; entries the kernel reads must survive that.
bool check_int32_range(Checker& c, Csr& s, std::int64_t T) {
  bool stop = false;
  auto scan = [&](const char* name, const TensorView& v, std::int64_t n) {
    if (stop || v.dtype != DType::i64) return false;
    std::int64_t count = 0, fj = 0, fv = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      const std::int64_t x = read_int(v, j);
      if (x >= -k2Pow31 && x < k2Pow31) continue;
      if (count++ == 0) fj = j, fv = x;
    }
    if (count == 0) return false;
    stop = c.fail(ids::sparse_prefill_index_int32_overflow, arg_loc(name, "[" + num(fj) + "]"),
                  {{"name", name}, {"j", num(fj)}, {"v", num(fv)}},
                  more_note(count - 1, name, "do not fit either"));
    return true;
  };
  if (!s.usable) return false;
  const bool bad_ptr = scan(s.ptr_name, *s.indptr, T + 1);
  const bool bad_idx = scan(s.idx_name, *s.indices, s.indices->numel());
  if (bad_ptr || bad_idx) s.usable = false;  // the kernel would see wrapped values; later checks are moot
  return stop;
}

void deep_checks(const PagedPrefillArgs& a, Checker& c) {
  const TensorView& q = a.q;
  if (q.ndim() != 3) return;
  const std::int64_t T = q.size(0), H = q.size(1);
  Csr pre = make_csr("kv_indptr_prefix", a.kv_indptr_prefix, "kv_indices_prefix", a.kv_indices_prefix, "unified_kv",
                     a.unified_kv, T);
  Csr ext = make_csr("kv_indptr_extend", a.kv_indptr_extend, "kv_indices_extend", a.kv_indices_extend, "kv", a.kv, T);
  if (check_int32_range(c, pre, T) || check_int32_range(c, ext, T)) return;
  for (const Csr* s : {&pre, &ext})
    if (check_spans(c, ids::sparse_prefill_span_out_of_range, *s, T)) return;
  for (const Csr* s : {&pre, &ext})
    if (check_decreasing(c, ids::sparse_prefill_indptr_decreasing, *s, T)) return;
  // Negative entries are sentinels the kernel skips, so only non-negative ids are addresses.
  for (const Csr* s : {&pre, &ext})
    if (check_row_offsets(c, ids::sparse_prefill_row_offset_overflow, *s, T)) return;
  for (const Csr* s : {&pre, &ext})
    if (check_row_range(c, ids::sparse_prefill_index_out_of_range, *s, T)) return;
  if (check_sink_values(c, ids::sparse_prefill_attn_sink_nan, ids::sparse_prefill_attn_sink_inf, a.attn_sink, H)) return;
  check_nonfinite(c, ids::sparse_prefill_non_finite_input, q, {&pre, &ext}, T);
}

void paged_prefill_contract(const PagedPrefillArgs& a, Checker& c) {
  const TensorView& q = a.q;
  // The host reference takes CPU tensors, so the device gate belongs to the CUDA entry point only.
  if (!c.reference() && !q.device.is_cuda() &&
      c.fail(ids::sparse_prefill_requires_cuda_tensors, arg_loc("q", ".device"), {},
             {"q is on " + q.device.str() + "; only q is tested by this check"}))
    return;
  if (!is_half_float(q.dtype) &&
      c.fail(ids::sparse_prefill_q_dtype, arg_loc("q", ".dtype"), {{"q_dtype", py_dtype(q.dtype)}}))
    return;
  if (a.unified_kv.dtype != q.dtype &&
      c.fail(ids::sparse_prefill_unified_kv_dtype, arg_loc("unified_kv", ".dtype"),
             {{"unified_kv_dtype", py_dtype(a.unified_kv.dtype)}, {"q_dtype", py_dtype(q.dtype)}},
             {"the value labelled kv= is unified_kv's dtype (upstream's wording)"}))
    return;
  if (a.kv.dtype != q.dtype &&
      c.fail(ids::sparse_prefill_kv_dtype, arg_loc("kv", ".dtype"),
             {{"kv_dtype", py_dtype(a.kv.dtype)}, {"q_dtype", py_dtype(q.dtype)}}))
    return;
  // Upstream's head-dim comparison reads size(-1) of unified_kv, then of kv; a 0-D one raises there.
  for (Named s : {Named{"unified_kv", &a.unified_kv}, Named{"kv", &a.kv}}) {
    if (s.view->ndim() == 0 &&
        c.fail(ids::sparse_prefill_kv_source_0d, arg_loc(s.name, ".shape"), {{"name", s.name}},
               {"upstream raises IndexError: Dimension specified as -1 but tensor has no dimensions"}))
      return;
  }
  if (a.unified_kv.ndim() >= 1 && a.kv.ndim() >= 1 && last_size(a.unified_kv) != last_size(a.kv) &&
      c.fail(ids::sparse_prefill_head_dim_mismatch, arg_loc("kv", ".shape"),
             {{"unified_kv_d", num(a.unified_kv.size(-1))}, {"kv_d", num(a.kv.size(-1))}}))
    return;
  if (q.ndim() != 3 &&
      c.fail(ids::sparse_prefill_q_not_3d, arg_loc("q", ".shape"), {{"ndim", num(q.ndim())}},
             {"q has shape " + shape_str(q), unpack_note(q.ndim())}))
    return;
  // The launch reads stride(1) of unified_kv, then of kv.
  for (Named s : {Named{"unified_kv", &a.unified_kv}, Named{"kv", &a.kv}}) {
    if (s.view->ndim() == 1 &&
        c.fail(ids::sparse_prefill_kv_source_1d, arg_loc(s.name, ".shape"), {{"name", s.name}, {"shape", shape_str(*s.view)}},
               {"upstream raises IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)"}))
      return;
  }
  if (c.extra() && extra_checks(a, c)) return;
  if (c.deep()) deep_checks(a, c);
}

}  // namespace

std::vector<Diagnostic> validate_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) {
  return run_validate<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}
std::vector<Diagnostic> check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) {
  return run_check<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}
Status try_check_paged_prefill(const PagedPrefillArgs& a, const ValidateOptions& o) noexcept {
  return run_status<PagedPrefillArgs>(kPagedPrefillOp, &paged_prefill_contract, a, o);
}

PrefillDims paged_prefill_dims(const PagedPrefillArgs& a) {
  PrefillDims d;
  if (a.q.ndim() == 3) d.T = a.q.size(0), d.H = a.q.size(1), d.D = a.q.size(2);
  if (a.unified_kv.ndim() >= 1) d.P = a.unified_kv.size(0);
  if (a.kv.ndim() >= 1) d.N_e = a.kv.size(0);
  return d;
}

PagedPrefillArgs paged_prefill_args(const ArgBag& bag) {
  PagedPrefillArgs a;
  a.q = bag.required("q");
  a.unified_kv = bag.required("unified_kv");
  a.kv_indices_prefix = bag.required("kv_indices_prefix");
  a.kv_indptr_prefix = bag.required("kv_indptr_prefix");
  a.kv = bag.required("kv");
  a.kv_indices_extend = bag.required("kv_indices_extend");
  a.kv_indptr_extend = bag.required("kv_indptr_extend");
  a.attn_sink = bag.required("attn_sink");
  a.out = bag.required("out");
  if (const TensorView* l = bag.tensor("lse")) a.lse = *l;
  a.softmax_scale = bag.required_scalar("softmax_scale");  // positional upstream: no default
  a.replicated_logit_shift = bag.scalar("replicated_logit_shift").value_or(0.0);
  a.return_lse = bag.flag("return_lse", false);
  return a;
}

}  // namespace kparity::sparse
