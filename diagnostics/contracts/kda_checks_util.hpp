#pragma once
// Private helpers shared by the KDA contracts (not installed).
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kparity/core/format.hpp"
#include "kparity/core/non_finite_scan.hpp"
#include "kparity/diagnostics/catalog_ids.hpp"
#include "kparity/diagnostics/checker.hpp"
#include "kparity/diagnostics/contracts/kda_common.hpp"
#include "view_checks.hpp"

namespace kparity::kda::detail {

// Success path: no allocation. Shapes are compared through these (never through shape()), and
// every string below is built inside a failed check's c.fail(...) arguments only.
using contract_util::last_size;
using contract_util::last_stride;
using contract_util::same_shape;
using contract_util::shape_is;
using contract_util::tail_is;

inline std::string str(std::int64_t v) { return std::to_string(v); }
inline std::string tup(const TensorView& t) { return py_tuple(t.shape()); }

// C.0 item 7: `&` binds looser than `==` in C++, so the Python one-liner needs explicit parentheses.
constexpr bool is_power_of_two(std::int64_t x) noexcept { return x > 0 && ((x & (x - 1)) == 0); }

// Deep checks read index and value data; the caller guarantees the memory is host-readable (the
// launchers pass host mirrors, the examples label host memory "cuda:0"), so read through a host label.
inline TensorView readable(const TensorView& t) { return t.with_device(Device::cpu()); }

inline bool is_float_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }

inline std::string index_str(std::span<const std::int64_t> idx) {
  std::string s = "[";
  for (std::size_t i = 0; i < idx.size(); ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  return s + "]";
}

// First non-finite element in row-major order, as its multi-index.
inline std::optional<std::vector<std::int64_t>> first_non_finite(const TensorView& t) {
  if (!is_floating(t.dtype) || t.data == nullptr) return std::nullopt;
  return kparity::find_non_finite(readable(t));  // core/non_finite_scan.hpp: the same index, a row at a time
}

// Byte interval [lo, hi) a view can touch; empty views (and views without data) touch nothing.
// Computed inline from sizes[]/strides[] (what numel() and offset_range() compute).
struct ByteSpan {
  bool touches = false;
  std::uintptr_t lo = 0, hi = 0;
};
inline ByteSpan byte_span(const TensorView& t) {
  ByteSpan s;
  if (t.data == nullptr) return s;
  std::int64_t n = 1;
  for (int d = 0; d < t.rank; ++d) n *= t.sizes[d];
  if (n == 0) return s;
  std::int64_t a = 0, b = 0;
  for (int d = 0; d < t.rank; ++d) {
    const std::int64_t reach = (t.sizes[d] - 1) * t.strides[d];
    (reach < 0 ? a : b) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(t.data);
  const auto es = static_cast<std::intptr_t>(t.element_size());
  s.touches = true;
  s.lo = base + static_cast<std::uintptr_t>(a * es);
  s.hi = base + static_cast<std::uintptr_t>((b + 1) * es);
  return s;
}

// x's span is passed in, so a loop testing one output against many inputs computes it once.
inline bool overlaps(const TensorView& x, const ByteSpan& xs, const TensorView& y) {
  if (!(x.device == y.device) || !xs.touches) return false;
  const ByteSpan ys = byte_span(y);
  return ys.touches && xs.lo < ys.hi && ys.lo < xs.hi;
}
inline bool overlaps(const TensorView& x, const TensorView& y) { return overlaps(x, byte_span(x), y); }

// The C.2 walk (validate_packed_decode_inputs), shared by both decode ops. ReplaySSM passes its
// flattened `a` / `dt_bias`, or nullptr when C.1 #1-#3 left no valid flattened view (validate mode).
struct DecodeInputs {
  const TensorView& mixed_qkv;
  const TensorView* a;
  const TensorView& b;
  const TensorView& A_log;
  const TensorView* dt_bias;
  const TensorView& initial_state;
  const TensorView& out;
  const TensorView& ssm_state_indices;
};

// What the walk established; unset where a precondition failed (validate mode skips dependants).
struct DecodeFacts {
  std::optional<std::int64_t> B, H, HV, K, V;
  bool stop = false;  // first-error mode hit an error: the contract returns now
};

DecodeFacts packed_decode_walk(const DecodeInputs& in, Checker& c);

// kparity-only checks (spec C.3) that apply to both decode ops; entries owned by kda/packed_decode.
// Returns true when the contract must stop.
bool decode_shape_extras(const DecodeInputs& in, const DecodeFacts& f, double scale,
                         std::optional<double> lower_bound, Checker& c);
bool decode_deep_extras(const DecodeInputs& in, const DecodeFacts& f, Checker& c);

// The arguments both decode ops share, by upstream name (ArgBag binding of kda/packed_decode and
// kda/replayssm_decode).
template <class Args>
void bind_decode_common(const ArgBag& bag, Args& a) {
  a.mixed_qkv = bag.required("mixed_qkv");
  a.a = bag.required("a");
  a.b = bag.required("b");
  a.A_log = bag.required("A_log");
  a.dt_bias = bag.required("dt_bias");
  a.scale = bag.required_scalar("scale");
  a.initial_state = bag.required("initial_state");
  a.out = bag.required("out");
  a.ssm_state_indices = bag.required("ssm_state_indices");
  a.use_qk_l2norm_in_kernel = bag.flag("use_qk_l2norm_in_kernel");
  a.lower_bound = bag.scalar("lower_bound");
}

}  // namespace kparity::kda::detail
