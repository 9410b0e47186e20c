#pragma once
// Checks shared by the two sparse-attention contracts (paged prefill and paged decode). Each helper
// returns true when the contract must stop (Checker::fail said so). Private to diagnostics/contracts.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kparity/core/format.hpp"
#include "kparity/core/non_finite_scan.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "view_checks.hpp"

namespace kparity::sparse::detail {

// Success path: no allocation. Shapes are compared through sizes[]/rank (view_checks.hpp), and
// messages, args and notes are built only once a check has failed.
using contract_util::last_size;
using contract_util::same_shape;

inline constexpr std::int64_t k2Pow31 = std::int64_t{1} << 31;

struct Named {
  const char* name;
  const TensorView* view;
};

inline bool is_half_float(DType t) { return t == DType::bf16 || t == DType::f16; }
inline std::string num(std::int64_t v) { return std::to_string(v); }

inline std::string shape_str(const TensorView& v) {
  auto s = v.shape();
  return py_tuple(std::span<const std::int64_t>(s));
}
inline std::string strides_str(const TensorView& v) {
  auto s = v.stride_vec();
  return py_tuple(std::span<const std::int64_t>(s));
}

// Deep checks read through the view as host memory: ValidateOptions::deep requires host-readable
// views (launchers pass host mirrors that may still carry the device label of the tensor they
// mirror). A view without data (metadata only) is never read.
inline bool readable(const TensorView& v) { return v.data != nullptr || v.numel() == 0; }
inline TensorView host(const TensorView& v) { return v.with_device(Device::cpu()); }
inline std::int64_t read_int(const TensorView& v, std::int64_t i) { return host(v).load_int_flat(i); }
inline double read_float(const TensorView& v, std::int64_t i) { return host(v).load_flat(i); }

// size * |stride| without overflowing int64 (saturates).
inline std::int64_t extent(std::int64_t size, std::int64_t stride) {
  const std::int64_t s = stride < 0 ? -stride : stride;
  if (size == 0 || s == 0) return 0;
  if (s > std::numeric_limits<std::int64_t>::max() / size) return std::numeric_limits<std::int64_t>::max();
  return size * s;
}

inline bool check_devices(Checker& c, std::string_view id, const TensorView& q, std::initializer_list<Named> others) {
  for (const auto& o : others) {
    if (o.view->device == q.device) continue;
    if (c.fail(id, arg_loc(o.name, ".device"),
               {{"name", o.name}, {"device", q.device.str()}, {"other", o.view->device.str()}}))
      return true;
  }
  return false;
}

inline bool check_index_dtypes(Checker& c, std::string_view id, std::initializer_list<Named> idx) {
  for (const auto& o : idx) {
    if (is_integral(o.view->dtype)) continue;
    if (c.fail(id, arg_loc(o.name, ".dtype"), {{"name", o.name}, {"dtype", py_dtype(o.view->dtype)}},
               {"the kernel uses these values as row ids and CSR offsets"}))
      return true;
  }
  return false;
}

inline bool check_sink_length(Checker& c, std::string_view id, const TensorView& sink, std::int64_t H) {
  if (sink.numel() >= H) return false;
  return c.fail(id, arg_loc("attn_sink", ".shape"), {{"H", num(H)}, {"len", num(sink.numel())}});
}

inline bool check_indptr_length(Checker& c, std::string_view id, const char* name, const TensorView& p,
                                std::int64_t T) {
  if (p.numel() >= T + 1) return false;
  return c.fail(id, arg_loc(name, ".shape"), {{"name", name}, {"n", num(T + 1)}, {"len", num(p.numel())}},
                {"the pointers are per query token: T = q.size(0) = " + num(T)});
}

inline bool check_finite_scalar(Checker& c, std::string_view id, const char* name, double v) {
  if (std::isfinite(v)) return false;
  return c.fail(id, std::string("scalar[") + name + "]", {{"name", name}, {"v", py_float(v)}});
}

// 32-bit offset risk, per dimension (first offending dimension of each tensor). `from` skips the
// leading dimensions whose offsets depend on data (rows of a KV source).
inline bool check_offsets(Checker& c, std::string_view id, const char* name, const TensorView& v, int from = 0) {
  for (int d = from; d < v.ndim(); ++d) {
    const std::int64_t e = extent(v.sizes[d], v.strides[d]);
    if (e < k2Pow31) continue;
    return c.fail(id, arg_loc(name, ".stride[" + std::to_string(d) + "]"),
                  {{"name", name}, {"dim", std::to_string(d)}, {"off", num(e)}},
                  {"shape " + shape_str(v) + ", strides " + strides_str(v)});
  }
  return false;
}

inline bool check_out(Checker& c, std::string_view id, const TensorView& out, const TensorView& q) {
  if (same_shape(out, q) && out.dtype == q.dtype) return false;
  return c.fail(id, arg_loc("out"),
                {{"expected_shape", shape_str(q)}, {"expected_dtype", py_dtype(q.dtype)},
                 {"shape", shape_str(out)}, {"dtype", py_dtype(out.dtype)}});
}

inline bool check_lse(Checker& c, std::string_view id_missing, std::string_view id_buffer, bool return_lse,
                      const std::optional<TensorView>& lse, std::int64_t T, std::int64_t H) {
  if (!return_lse) return false;
  if (!lse) return c.fail(id_missing, arg_loc("lse"), {{"expected_shape", py_tuple({T, H})}});
  const TensorView& l = *lse;
  const bool ok = l.ndim() == 2 && l.sizes[0] == T && l.sizes[1] == H && l.dtype == DType::f32 && l.is_contiguous();
  if (ok) return false;
  return c.fail(id_buffer, arg_loc("lse"),
                {{"expected_shape", py_tuple({T, H})}, {"shape", shape_str(l)}, {"dtype", py_dtype(l.dtype)},
                 {"strides", strides_str(l)}},
                {"the kernel writes lse[t, h] at offset t * H + h"});
}

// One CSR source: pointers, indices and the rows they select. `usable` is false when a guard of the
// data checks failed (wrong dtype, too few pointers, unreadable, or a value already reported).
struct Csr {
  const char* ptr_name;
  const TensorView* indptr;
  const char* idx_name;
  const TensorView* indices;
  const char* src_name;
  const TensorView* src;
  bool usable = true;
};

inline Csr make_csr(const char* pn, const TensorView& p, const char* in, const TensorView& i, const char* sn,
                    const TensorView& s, std::int64_t T) {
  Csr r{pn, &p, in, &i, sn, &s};
  r.usable = is_integral(p.dtype) && is_integral(i.dtype) && p.numel() >= T + 1 && readable(p) && readable(i);
  return r;
}

// Calls f(t, j, v) for every index entry inside a non-empty, in-bounds span of token t < T.
template <class F>
void for_each_selected(const Csr& s, std::int64_t T, F&& f) {
  const std::int64_t n = s.indices->numel();
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = read_int(*s.indptr, t), b = read_int(*s.indptr, t + 1);
    if (b <= a || a < 0 || b > n) continue;
    for (std::int64_t j = a; j < b; ++j) f(t, j, read_int(*s.indices, j));
  }
}

inline std::vector<std::string> more_note(std::int64_t more, const char* name, const char* what) {
  if (more <= 0) return {};
  return {std::to_string(more) + " more entr" + (more == 1 ? "y" : "ies") + " of " + name + " " + what};
}

inline bool check_spans(Checker& c, std::string_view id, const Csr& s, std::int64_t T) {
  if (!s.usable) return false;
  const std::int64_t n = s.indices->numel();
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = read_int(*s.indptr, t), b = read_int(*s.indptr, t + 1);
    if (b <= a || (a >= 0 && b <= n)) continue;
    if (c.fail(id, arg_loc(s.ptr_name, "[" + num(t) + "]"),
               {{"name", s.ptr_name}, {"t", num(t)}, {"t2", num(t + 2)}, {"a", num(a)}, {"b", num(b)},
                {"len", num(n)}, {"indices", s.idx_name}}))
      return true;
  }
  return false;
}

inline bool check_decreasing(Checker& c, std::string_view id, const Csr& s, std::int64_t T) {
  if (!s.usable) return false;
  std::int64_t first = -1, count = 0, fa = 0, fb = 0;
  for (std::int64_t t = 0; t < T; ++t) {
    const std::int64_t a = read_int(*s.indptr, t), b = read_int(*s.indptr, t + 1);
    if (b >= a) continue;
    if (count++ == 0) first = t, fa = a, fb = b;
  }
  if (count == 0) return false;
  return c.fail(id, arg_loc(s.ptr_name, "[" + num(first) + "]"),
                {{"name", s.ptr_name}, {"t", num(first)}, {"a", num(fa)}, {"b", num(fb)}},
                count > 1 ? std::vector<std::string>{std::to_string(count - 1) + " more decreasing step(s)"}
                          : std::vector<std::string>{});
}

// Reports the first selected entry for which bad(v) holds (one diagnostic per index tensor, with a
// count of the others), using make_args(t, j, v) for the message arguments.
template <class Bad, class Args>
bool check_selected(Checker& c, std::string_view id, const Csr& s, std::int64_t T, Bad&& bad, Args&& make_args,
                    const char* what) {
  if (!s.usable) return false;
  std::int64_t count = 0, ft = 0, fj = 0, fv = 0;
  for_each_selected(s, T, [&](std::int64_t t, std::int64_t j, std::int64_t v) {
    if (!bad(v)) return;
    if (count++ == 0) ft = t, fj = j, fv = v;
  });
  if (count == 0) return false;
  auto notes = more_note(count - 1, s.idx_name, what);
  notes.insert(notes.begin(), "selected by token " + num(ft));
  return c.fail(id, arg_loc(s.idx_name, "[" + num(fj) + "]"), make_args(ft, fj, fv), std::move(notes));
}

inline bool check_row_offsets(Checker& c, std::string_view id, const Csr& s, std::int64_t T) {
  if (!s.usable || s.src->ndim() != 2) return false;
  const std::int64_t stride = s.src->stride(0);
  return check_selected(
      c, id, s, T, [&](std::int64_t v) { return v >= 0 && extent(v, stride) >= k2Pow31; },
      [&](std::int64_t, std::int64_t j, std::int64_t v) {
        return std::vector<DiagArg>{{"name", s.idx_name}, {"j", num(j)}, {"v", num(v)},
                                    {"off", num(extent(v, stride))}, {"source", s.src_name}};
      },
      "also overflow");
}

inline bool check_row_range(Checker& c, std::string_view id, const Csr& s, std::int64_t T) {
  if (!s.usable || s.src->ndim() != 2) return false;
  const std::int64_t rows = s.src->size(0);
  return check_selected(
      c, id, s, T, [&](std::int64_t v) { return v >= rows; },
      [&](std::int64_t, std::int64_t j, std::int64_t v) {
        return std::vector<DiagArg>{{"name", s.idx_name}, {"j", num(j)}, {"v", num(v)}, {"rows", num(rows)}};
      },
      "are out of range");
}

inline bool check_sink_values(Checker& c, std::string_view id_nan, std::string_view id_inf, const TensorView& sink,
                              std::int64_t H) {
  if (sink.numel() < H || !readable(sink)) return false;
  for (std::int64_t h = 0; h < H; ++h) {
    const double v = read_float(sink, h);
    if (std::isnan(v) && c.fail(id_nan, arg_loc("attn_sink", "[" + num(h) + "]"), {{"h", num(h)}, {"v", py_float(v)}}))
      return true;
  }
  for (std::int64_t h = 0; h < H; ++h) {
    const double v = read_float(sink, h);
    if (std::isinf(v) && v > 0 &&
        c.fail(id_inf, arg_loc("attn_sink", "[" + num(h) + "]"), {{"h", num(h)}, {"v", py_float(v)}},
               {"the sink takes all of the softmax mass; lse is -inf for this head"}))
      return true;
  }
  return false;
}

inline std::string nonfinite_str(double v) { return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf"); }

// NaN/Inf in q (first element) and in each source's selected rows (first hit per source).
inline bool check_nonfinite(Checker& c, std::string_view id, const TensorView& q, std::initializer_list<const Csr*> csrs,
                            std::int64_t T) {
  if (q.ndim() != 3 || !readable(q)) return false;
  // q's first non-finite element in index order (core/non_finite_scan.hpp reads the bits a row at a
  // time: element by element this scan was an eighth of a kernel-sized case's oracle, issue 25).
  if (const auto hit = find_non_finite(q)) {
    const std::vector<std::int64_t>& idx = *hit;
    const double v = host(q).load(idx);
    if (c.fail(id, arg_loc("q", "[" + num(idx[0]) + "][" + num(idx[1]) + "][" + num(idx[2]) + "]"),
               {{"name", "q"}, {"v", nonfinite_str(v)}, {"index", py_tuple({idx[0], idx[1], idx[2]})},
                {"t", num(idx[0])}}))
      return true;
  }
  const std::int64_t Dq = q.size(2);
  for (const Csr* s : csrs) {
    if (!s->usable || s->src->ndim() != 2 || !readable(*s->src)) continue;
    const TensorView& src = *s->src;
    const std::int64_t rows = src.size(0), cols = std::min(Dq, src.size(1));
    std::vector<bool> seen(static_cast<std::size_t>(rows), false);
    bool found = false;
    std::int64_t ft = 0, fr = 0, fd = 0;
    double fv = 0;
    const TensorView hs = host(src);
    for_each_selected(*s, T, [&](std::int64_t t, std::int64_t, std::int64_t r) {
      if (found || r < 0 || r >= rows || seen[static_cast<std::size_t>(r)]) return;
      seen[static_cast<std::size_t>(r)] = true;
      for (std::int64_t d = 0; d < cols; ++d) {
        const double v = hs.at({r, d});
        if (!std::isfinite(v)) {
          found = true, ft = t, fr = r, fd = d, fv = v;
          return;
        }
      }
    });
    if (found && c.fail(id, arg_loc(s->src_name, "[" + num(fr) + "][" + num(fd) + "]"),
                        {{"name", s->src_name}, {"v", nonfinite_str(fv)}, {"index", py_tuple({fr, fd})}, {"t", num(ft)}},
                        {"row " + num(fr) + " is selected through " + s->idx_name}))
      return true;
  }
  return false;
}

}  // namespace kparity::sparse::detail
