#pragma once
// Bulk element access for the references' and the rule's hot loops (issue 25): the same values as
// TensorView::load and store (core/tensor_view.hpp), element for element, without a multi-index and
// its bounds check per element. Measured: element-by-element load/store was 15-25% of a
// kernel-sized case's host time at c6c0638 (bench/results/oracle_2026-12-02.md).
//
// Callers pass element offsets they derived from the view's own sizes and strides; every function
// checks the device once (host access to a cuda view throws std::logic_error, as load() does).
#include <bit>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "kparity/core/dtype.hpp"
#include "kparity/core/tensor_view.hpp"

namespace kparity::reference::elements {

inline void require_host(const TensorView& v) {
  if (v.device.is_cuda()) throw std::logic_error("host element access on a " + v.device.str() + " tensor view");
}

// Element sizes and 16-bit widenings come from core/dtype.hpp, where they are inline.
inline std::int64_t bytes_of(DType t) noexcept { return static_cast<std::int64_t>(dtype_size(t)); }

// The element at `offset` (in elements, from v.data), as TensorView::load reads it.
inline double load_at(const TensorView& v, std::int64_t offset) noexcept {
  const std::byte* p = static_cast<const std::byte*>(v.data) + offset * bytes_of(v.dtype);
  switch (v.dtype) {
    case DType::f32: { float x; std::memcpy(&x, p, 4); return x; }
    case DType::f64: { double x; std::memcpy(&x, p, 8); return x; }
    case DType::bf16: { std::uint16_t b; std::memcpy(&b, p, 2); return bf16_bits_to_f32(b); }
    case DType::f16: { std::uint16_t b; std::memcpy(&b, p, 2); return f16_bits_to_f32(b); }
    case DType::i32: { std::int32_t x; std::memcpy(&x, p, 4); return x; }
    case DType::i64: { std::int64_t x; std::memcpy(&x, p, 8); return static_cast<double>(x); }
    case DType::boolean: { std::uint8_t x; std::memcpy(&x, p, 1); return x != 0 ? 1.0 : 0.0; }
  }
  return 0.0;
}

// Stores `x` at `offset` as TensorView::store does (one rounding into the dtype).
inline void store_at(const TensorView& v, std::int64_t offset, double x) noexcept {
  std::byte* p = static_cast<std::byte*>(v.data) + offset * bytes_of(v.dtype);
  switch (v.dtype) {
    case DType::f32: { const float y = static_cast<float>(x); std::memcpy(p, &y, 4); return; }
    case DType::f64: std::memcpy(p, &x, 8); return;
    case DType::bf16: { const std::uint16_t b = f64_to_bf16_bits(x); std::memcpy(p, &b, 2); return; }
    case DType::f16: { const std::uint16_t b = f64_to_f16_bits(x); std::memcpy(p, &b, 2); return; }
    case DType::i32: { const auto y = static_cast<std::int32_t>(round_to_dtype(x, v.dtype)); std::memcpy(p, &y, 4); return; }
    case DType::i64: { const auto y = static_cast<std::int64_t>(round_to_dtype(x, v.dtype)); std::memcpy(p, &y, 8); return; }
    case DType::boolean: { const std::uint8_t y = x != 0.0; std::memcpy(p, &y, 1); return; }
  }
}

// Contiguous runs of n 16-bit floats widened to fp64: f16_bits_to_f32 / bf16_bits_to_f32 element by element,
// the same bits, vectorised (widen_runs.cpp).
void widen_f16_run(const std::uint16_t* src, std::int64_t n, double* out) noexcept;
void widen_bf16_run(const std::uint16_t* src, std::int64_t n, double* out) noexcept;

// Contiguous runs of n fp64 values stored as 16-bit floats: f64_to_f16_bits / f64_to_bf16_bits element
// by element, the same bits, vectorised where a block holds fp32 values (narrow_runs.cpp).
void narrow_f16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept;
void narrow_bf16_run(const double* in, std::int64_t n, std::uint16_t* out) noexcept;

// A strided run of 16-bit floats: gathered into a contiguous block, then widened as one.
inline void widen_strided(const std::uint16_t* p, std::int64_t stride, std::int64_t n, double* out,
                          void (*widen)(const std::uint16_t*, std::int64_t, double*) noexcept) {
  constexpr std::int64_t kBlock = 256;
  std::uint16_t block[kBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::int64_t k = n - i0 < kBlock ? n - i0 : kBlock;
    for (std::int64_t i = 0; i < k; ++i) block[i] = p[(i0 + i) * stride];
    widen(block, k, out + i0);
  }
}

// A strided run of 16-bit floats stored: narrowed as contiguous blocks, then scattered in order (the
// same bits and the same stores as store_at element by element, a stride of 0 included).
inline void narrow_strided(const double* in, std::int64_t n, std::uint16_t* p, std::int64_t stride,
                           void (*narrow)(const double*, std::int64_t, std::uint16_t*) noexcept) {
  constexpr std::int64_t kBlock = 256;
  std::uint16_t block[kBlock];
  for (std::int64_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::int64_t k = n - i0 < kBlock ? n - i0 : kBlock;
    narrow(in + i0, k, block);
    for (std::int64_t i = 0; i < k; ++i) p[(i0 + i) * stride] = block[i];
  }
}

// n elements from `offset` on, `stride` apart, into out[0..n).
inline void load_run(const TensorView& v, std::int64_t offset, std::int64_t stride, std::int64_t n, double* out) {
  require_host(v);
  switch (v.dtype) {  // one dispatch per run
    case DType::f32: {
      const float* p = static_cast<const float*>(v.data) + offset;
      for (std::int64_t i = 0; i < n; ++i) out[i] = p[i * stride];
      return;
    }
    case DType::bf16: {
      const std::uint16_t* p = static_cast<const std::uint16_t*>(v.data) + offset;
      if (stride == 1) return widen_bf16_run(p, n, out);
      return widen_strided(p, stride, n, out, widen_bf16_run);
      return;
    }
    case DType::f16: {
      const std::uint16_t* p = static_cast<const std::uint16_t*>(v.data) + offset;
      if (stride == 1) return widen_f16_run(p, n, out);
      return widen_strided(p, stride, n, out, widen_f16_run);
      return;
    }
    default:
      for (std::int64_t i = 0; i < n; ++i) out[i] = load_at(v, offset + i * stride);
  }
}
inline void store_run(const TensorView& v, std::int64_t offset, std::int64_t stride, std::int64_t n, const double* in) {
  require_host(v);
  switch (v.dtype) {  // one dispatch per run for the wide float dtypes (the oracle's widened outputs)
    case DType::f32: {
      float* p = static_cast<float*>(v.data) + offset;
      for (std::int64_t i = 0; i < n; ++i) p[i * stride] = static_cast<float>(in[i]);
      return;
    }
    case DType::f64: {
      double* p = static_cast<double*>(v.data) + offset;
      for (std::int64_t i = 0; i < n; ++i) p[i * stride] = in[i];
      return;
    }
    case DType::f16:
      if (stride == 1) return narrow_f16_run(in, n, static_cast<std::uint16_t*>(v.data) + offset);
      return narrow_strided(in, n, static_cast<std::uint16_t*>(v.data) + offset, stride, narrow_f16_run);
    case DType::bf16:
      if (stride == 1) return narrow_bf16_run(in, n, static_cast<std::uint16_t*>(v.data) + offset);
      return narrow_strided(in, n, static_cast<std::uint16_t*>(v.data) + offset, stride, narrow_bf16_run);
    default:
      break;
  }
  for (std::int64_t i = 0; i < n; ++i) store_at(v, offset + i * stride, in[i]);
}


// The element offset of a multi-index, bounds-checked like TensorView::load (std::out_of_range).
template <std::size_t N>
std::int64_t offset_of(const TensorView& v, const std::int64_t (&idx)[N]) {
  if (v.rank != static_cast<int>(N)) throw std::out_of_range("index rank differs from the tensor's");
  std::int64_t off = 0;
  for (std::size_t d = 0; d < N; ++d) {
    if (static_cast<std::uint64_t>(idx[d]) >= static_cast<std::uint64_t>(v.sizes[d]))
      throw std::out_of_range("index out of bounds");
    off += idx[d] * v.strides[d];
  }
  return off;
}

}  // namespace kparity::reference::elements
