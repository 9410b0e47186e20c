// Mutations of the sparse-attention checks (spec sparse_attention.md D): those both ops share, each
// with its own op's entry id, then each op's own.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include "kparity/diagnostics/catalog_ids.hpp"
#include "table.hpp"

namespace kparity::fuzz::detail {
namespace {

struct Sp {
  std::int64_t T = 0, H = 0, D = 0;
};
Sp sp(const Mutant& m) { return {dim(m, "q", 0), dim(m, "q", 1), dim(m, "q", 2)}; }

struct Csr {
  std::string ptr, idx, src;
};
std::vector<Csr> csrs(const Mutant& m) {
  if (m.call.op == kDecode) return {{"kv_indptr", "kv_indices", "unified_kv"}};
  return {{"kv_indptr_prefix", "kv_indices_prefix", "unified_kv"}, {"kv_indptr_extend", "kv_indices_extend", "kv"}};
}

// Index positions the kernel reads: inside a non-empty span [ptr[t], ptr[t+1]) within the array.
std::vector<std::int64_t> selected(const Mutant& m, const Csr& c) {
  std::vector<std::int64_t> js;
  const std::int64_t T = dim(m, "q", 0), n = view(m, c.idx).numel();
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = get_int(m, c.ptr, t), b = get_int(m, c.ptr, t + 1);
    if (b <= a || a < 0 || b > n) continue;
    for (std::int64_t j = a; j < b; ++j) js.push_back(j);
  }
  return js;
}

// A CSR source with at least one selected entry, and that entry; false when no token selects anything.
bool pick_selected(const Mutant& m, Pick& p, Csr& c, std::int64_t& j) {
  std::vector<std::pair<Csr, std::int64_t>> all;
  for (const Csr& s : csrs(m))
    for (std::int64_t x : selected(m, s)) all.emplace_back(s, x);
  if (all.empty()) return false;
  std::tie(c, j) = one_of(all, p);
  return true;
}

bool any_decreasing(const Mutant& m) {
  const std::int64_t T = dim(m, "q", 0);
  for (const Csr& c : csrs(m))
    for (std::int64_t t = 0; t < T; ++t)
      if (get_int(m, c.ptr, t + 1) < get_int(m, c.ptr, t)) return true;
  return false;
}

DType other_half(DType t) { return t == DType::bf16 ? DType::f16 : DType::bf16; }

// q with a per-dimension offset of 2^31 elements (extent = size * stride), built so that the view
// still fits in a small buffer: the large stride sits on a dimension of size 1 (or on a tensor
// with no elements), where no element is ever addressed through it.
void huge_stride_q(Mutant& m) {
  const Sp d = sp(m);
  Tensor& q = ten(m, "q");
  if (d.T == 0) {
    q = Tensor::strided(q.dtype(), {0, d.H, d.D}, {d.H * d.D, k2Pow31, 1});
    return;
  }
  Tensor t = Tensor::strided(q.dtype(), {1, d.H, d.D}, {k2Pow31, d.D, 1});
  copy_convert(q.view().select(0, 0), t.view().select(0, 0));
  q = std::move(t);
}

// The checks both sparse ops share, with each op's own entry id.
struct SparseIds {
  std::string_view requires_cuda, q_dtype, unified_kv_dtype, q_not_3d, device_mismatch, q_head_dim, index_dtype,
      sink_length, indptr_length, scale_not_finite, offset_overflow, out_buffer, lse_missing, lse_buffer, span,
      decreasing, row_offset, index_range, sink_nan, sink_inf, non_finite;
};

void sparse_common(Table& t, std::string_view op, const SparseIds& id) {
  const auto O = ops({op});
  t.add(id.requires_cuda, O, K::device, "every tensor on the CPU", [](Mutant& m, Pick&) {
    m.device = Device::cpu();
    return true;
  });
  t.add(id.q_dtype, O, K::dtype, "q float32 (or int32)", [](Mutant& m, Pick& p) {
    retype(m, "q", p.below(2) ? DType::f32 : DType::i32);
    return true;
  });
  t.add(id.unified_kv_dtype, O, K::dtype, "unified_kv in the other half dtype or float32", [](Mutant& m, Pick& p) {
    retype(m, "unified_kv", p.below(2) ? other_half(view(m, "q").dtype) : DType::f32);
    return true;
  });
  t.add(id.q_not_3d, O, K::rank, "q [T, H, D] -> [T, H*D] or [T, H, D, 1]", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (p.below(2) == 0) reshape(m, "q", {d.T, d.H * d.D});
    else reshape(m, "q", {d.T, d.H, d.D, 1});
    return true;
  });
  t.add(id.device_mismatch, O, K::device, "one tensor other than q on another device", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const auto& [name, tensor] : m.call.tensors)
      if (name != "q" && (name != "lse" || (m.call.flags.count("return_lse") && m.call.flags.at("return_lse"))))
        names.push_back(name);
    m.devices[one_of(names, p)] = p.below(2) ? Device::cpu() : Device::cuda(1);
    return true;
  });
  t.add(id.q_head_dim, O, K::shape, "q's D one larger than the pool's", [](Mutant& m, Pick&) {
    const Sp d = sp(m);
    reshape(m, "q", {d.T, d.H, d.D + 1});
    return true;
  });
  t.add(id.index_dtype, O, K::dtype, "an index or pointer tensor becomes float32", [](Mutant& m, Pick& p) {
    std::vector<std::string> names;
    for (const Csr& c : csrs(m)) names.insert(names.end(), {c.ptr, c.idx});
    retype(m, one_of(names, p), DType::f32);
    return true;
  });
  t.add(id.sink_length, O, K::shape, "attn_sink with H-1 entries", [](Mutant& m, Pick&) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    reshape(m, "attn_sink", {d.H - 1});
    return true;
  });
  t.add(id.indptr_length, O, K::shape, "a pointer tensor with T entries (one short)", [](Mutant& m, Pick& p) {
    reshape(m, one_of(csrs(m), p).ptr, {sp(m).T});
    return true;
  });
  t.add(id.scale_not_finite, O, K::scalar, "softmax_scale (or the logit shift) inf or nan", [](Mutant& m, Pick& p) {
    const std::string name = m.call.op == kPrefill && p.below(2) ? "replicated_logit_shift" : "softmax_scale";
    m.call.scalars[name] = p.below(2) ? kInf : kNaN;
    return true;
  });
  t.add(id.offset_overflow, O, K::stride, "q with a 2^31-element stride", [](Mutant& m, Pick&) {
    huge_stride_q(m);
    return true;
  });
  t.add(id.out_buffer, O, K::dtype, "out float32 or one token short", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (p.below(2) == 0 || d.T == 0) retype(m, "out", DType::f32);
    else reshape(m, "out", {d.T - 1, d.H, d.D});
    return true;
  });
  t.add(id.lse_missing, O, K::absent, "return_lse without an lse buffer", [](Mutant& m, Pick&) {
    m.call.flags["return_lse"] = true;
    m.call.tensors.erase("lse");
    return true;
  });
  t.add(id.lse_buffer, O, K::dtype, "return_lse with an lse buffer in bf16 or with H+1 columns", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    m.call.flags["return_lse"] = true;
    if (!has(m, "lse")) make(m, "lse", DType::f32, {d.T, d.H}, {});
    if (p.below(2) == 0) retype(m, "lse", DType::bf16);
    else reshape(m, "lse", {d.T, d.H + 1});
    return true;
  });
  t.add(id.span, O, K::index_value, "the last token's span ends past its index array", [](Mutant& m, Pick& p) {
    const std::int64_t T = sp(m).T;
    if (T < 1) return false;
    const Csr c = one_of(csrs(m), p);
    const std::int64_t n = view(m, c.idx).numel();
    if (get_int(m, c.ptr, T - 1) > n) set(m, c.ptr, T - 1, static_cast<double>(n));
    set(m, c.ptr, T, static_cast<double>(n + 1 + p.below(3)));
    return true;
  });
  t.add(id.decreasing, O, K::index_value, "the last token's span ends before it begins", [](Mutant& m, Pick& p) {
    const std::int64_t T = sp(m).T;
    if (T < 1 || any_decreasing(m)) return false;
    const Csr c = one_of(csrs(m), p);
    set(m, c.ptr, T, static_cast<double>(get_int(m, c.ptr, T - 1) - 1 - p.below(2)));
    return true;
  });
  t.add(id.row_offset, O, K::index_value, "a selected index whose row offset reaches 2^31 elements", [](Mutant& m, Pick& p) {
    Csr c;
    std::int64_t j = 0;
    if (!pick_selected(m, p, c, j)) return false;
    const std::int64_t stride = view(m, c.src).ndim() == 2 ? view(m, c.src).stride(0) : 0;
    if (stride < 2) return false;  // the smallest overflowing row would not fit an int32 index
    // Decode's int64 ids are multiplied in 64 bits; only int32 ids can wrap there.
    if (view(m, c.idx).dtype == DType::i64) retype(m, c.idx, DType::i32);
    set(m, c.idx, j, static_cast<double>((k2Pow31 + stride - 1) / stride));
    return true;
  });
  t.add(id.index_range, O, K::index_value, "a selected index = the number of rows of its source", [](Mutant& m, Pick& p) {
    Csr c;
    std::int64_t j = 0;
    if (!pick_selected(m, p, c, j)) return false;
    set(m, c.idx, j, static_cast<double>(dim(m, c.src, 0) + p.below(2)));
    return true;
  });
  t.add(id.sink_nan, O, K::value, "attn_sink[h] = nan", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    set(m, "attn_sink", p.below(d.H), kNaN);
    return true;
  });
  t.add(id.sink_inf, O, K::value, "attn_sink[h] = +inf", [](Mutant& m, Pick& p) {
    const Sp d = sp(m);
    if (d.H < 1) return false;
    for (std::int64_t h = 0; h < d.H; ++h)
      if (get(m, "attn_sink", h) == kInf) return false;  // already warned
    set(m, "attn_sink", p.below(d.H), kInf);
    return true;
  });
  t.add(id.non_finite, O, K::value, "a NaN or Inf in q or in a selected row", [](Mutant& m, Pick& p) {
    const double bad = one_of(std::vector<double>{kNaN, kInf, -kInf}, p);
    Csr c;
    std::int64_t j = 0;
    if (p.below(2) == 0 && pick_selected(m, p, c, j)) {
      const std::int64_t row = get_int(m, c.idx, j);
      if (row >= 0) {
        const std::int64_t D = dim(m, c.src, 1);
        set(m, c.src, row * D + p.below(D), bad);
        return true;
      }
    }
    const std::int64_t n = view(m, "q").numel();
    if (n == 0) return false;
    set(m, "q", p.below(n), bad);
    return true;
  });
}

void sparse_prefill(Table& t) {
  sparse_common(t, kPrefill,
                {ids::sparse_prefill_requires_cuda_tensors, ids::sparse_prefill_q_dtype, ids::sparse_prefill_unified_kv_dtype,
                 ids::sparse_prefill_q_not_3d, ids::sparse_prefill_device_mismatch, ids::sparse_prefill_q_head_dim,
                 ids::sparse_prefill_index_dtype, ids::sparse_prefill_attn_sink_length, ids::sparse_prefill_indptr_length,
                 ids::sparse_prefill_scalar_not_finite, ids::sparse_prefill_offset_overflow, ids::sparse_prefill_out_buffer,
                 ids::sparse_prefill_lse_missing, ids::sparse_prefill_lse_buffer, ids::sparse_prefill_span_out_of_range,
                 ids::sparse_prefill_indptr_decreasing, ids::sparse_prefill_row_offset_overflow,
                 ids::sparse_prefill_index_out_of_range, ids::sparse_prefill_attn_sink_nan, ids::sparse_prefill_attn_sink_inf,
                 ids::sparse_prefill_non_finite_input});
  const auto O = ops({kPrefill});
  t.add(ids::sparse_prefill_kv_dtype, O, K::dtype, "kv float32 or the other half dtype", [](Mutant& m, Pick& p) {
    retype(m, "kv", p.below(2) ? other_half(view(m, "q").dtype) : DType::f32);
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_0d, O, K::rank, "kv or unified_kv becomes 0-D", [](Mutant& m, Pick& p) {
    reshape(m, p.below(2) ? "kv" : "unified_kv", {});
    return true;
  });
  t.add(ids::sparse_prefill_head_dim_mismatch, O, K::shape, "kv's D one larger than unified_kv's", [](Mutant& m, Pick&) {
    reshape(m, "kv", {dim(m, "kv", 0), sp(m).D + 1});
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_1d, O, K::rank, "unified_kv or kv becomes [D]", [](Mutant& m, Pick& p) {
    reshape(m, p.below(2) ? "kv" : "unified_kv", {sp(m).D});
    return true;
  });
  t.add(ids::sparse_prefill_kv_source_too_many_dims, O, K::rank, "unified_kv or kv gets a unit middle dim",
        [](Mutant& m, Pick& p) {
          const std::string name = p.below(2) ? "kv" : "unified_kv";
          reshape(m, name, {dim(m, name, 0), 1, sp(m).D});
          return true;
        });
  t.add(ids::sparse_prefill_index_int32_overflow, O, K::index_value, "an index or pointer tensor int64 with a value >= 2^31",
        [](Mutant& m, Pick& p) {
          const Csr c = one_of(csrs(m), p);
          const bool in_indices = view(m, c.idx).numel() > 0 && p.below(2) == 0;
          const std::string& name = in_indices ? c.idx : c.ptr;
          retype(m, name, DType::i64);
          // The wrapper narrows the first T+1 pointers (the kernel reads no more) and every index.
          const std::int64_t n = in_indices ? view(m, name).numel() : sp(m).T + 1;
          set(m, name, p.below(n), static_cast<double>(k2Pow31 + p.below(2)));
          return true;
        });
}

void sparse_decode(Table& t) {
  sparse_common(t, kDecode,
                {ids::sparse_decode_requires_cuda_tensors, ids::sparse_decode_q_dtype, ids::sparse_decode_unified_kv_dtype,
                 ids::sparse_decode_q_not_3d, ids::sparse_decode_device_mismatch, ids::sparse_decode_q_head_dim,
                 ids::sparse_decode_index_dtype, ids::sparse_decode_attn_sink_length, ids::sparse_decode_indptr_length,
                 ids::sparse_decode_scale_not_finite, ids::sparse_decode_offset_overflow, ids::sparse_decode_out_buffer,
                 ids::sparse_decode_lse_missing, ids::sparse_decode_lse_buffer, ids::sparse_decode_span_out_of_range,
                 ids::sparse_decode_indptr_decreasing, ids::sparse_decode_row_offset_overflow,
                 ids::sparse_decode_index_out_of_range, ids::sparse_decode_attn_sink_nan, ids::sparse_decode_attn_sink_inf,
                 ids::sparse_decode_non_finite_input});
  const auto O = ops({kDecode});
  t.add(ids::sparse_decode_unified_kv_too_few_dims, O, K::rank, "unified_kv becomes [D] or 0-D", [](Mutant& m, Pick& p) {
    if (p.below(2) == 0) reshape(m, "unified_kv", {sp(m).D});
    else reshape(m, "unified_kv", {});
    return true;
  });
  t.add(ids::sparse_decode_unified_kv_too_many_dims, O, K::rank, "unified_kv gets a unit middle dim", [](Mutant& m, Pick&) {
    reshape(m, "unified_kv", {dim(m, "unified_kv", 0), 1, sp(m).D});
    return true;
  });
  t.add(ids::sparse_decode_index_not_contiguous, O, K::stride, "kv_indices or kv_indptr not contiguous",
        [](Mutant& m, Pick& p) {
          const bool first = p.below(2) == 0;
          return noncontiguous(m, first ? "kv_indices" : "kv_indptr") || noncontiguous(m, first ? "kv_indptr" : "kv_indices");
        });
  t.add(ids::sparse_decode_index_negative, O, K::index_value, "a selected index = -1 (decode has no sentinels)",
        [](Mutant& m, Pick& p) {
          Csr c;
          std::int64_t j = 0;
          if (!pick_selected(m, p, c, j)) return false;
          set(m, c.idx, j, static_cast<double>(-1 - p.below(2)));
          return true;
        });
}

}  // namespace

void add_sparse_mutations(Table& t) {
  sparse_prefill(t);
  sparse_decode(t);
}

}  // namespace kparity::fuzz::detail
