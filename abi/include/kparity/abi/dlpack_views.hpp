#pragma once
// kparity's TensorView and DLPack's DLTensor, one as the other, without copies: how the plugin
// loader (plugin.hpp) hands a call to a plugin, and how a plugin written with kparity's types (the
// CUDA example, examples/impl_plugins/) reads its arguments.
#include <array>
#include <cstdint>

#include "kparity/core/tensor_view.hpp"
#include "kparity/impl_abi.h"

namespace kparity::abi {

// The view of a DLTensor (data + byte_offset, its strides; contiguous strides when NULL). Throws
// std::invalid_argument for a dtype kparity has no name for (bits/lanes other than its f32, bf16,
// f16, f64, i32, i64, bool), a device other than CPU or CUDA, or more than kMaxRank dimensions.
TensorView view_of(const DLTensor& t);

// A DLTensor describing `v` (the view's own shape and strides, byte_offset 0), with the arrays it
// points into: keep the DLView alive while the DLTensor is in use.
struct DLView {
  DLTensor tensor{};
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> strides{};

  explicit DLView(const TensorView& v);
  DLView(const DLView&) = delete;
  DLView& operator=(const DLView&) = delete;
};

DLDataType dl_dtype(DType t) noexcept;

}  // namespace kparity::abi
