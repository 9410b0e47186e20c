// DLTensor <-> TensorView (dlpack_views.hpp).
#include "kparity/abi/dlpack_views.hpp"

#include <stdexcept>
#include <string>

namespace kparity::abi {
namespace {

DType dtype_of(DLDataType t) {
  if (t.lanes != 1) throw std::invalid_argument("DLTensor with " + std::to_string(t.lanes) + " lanes");
  switch (t.code) {
    case kDLFloat:
      if (t.bits == 32) return DType::f32;
      if (t.bits == 16) return DType::f16;
      if (t.bits == 64) return DType::f64;
      break;
    case kDLBfloat:
      if (t.bits == 16) return DType::bf16;
      break;
    case kDLInt:
      if (t.bits == 32) return DType::i32;
      if (t.bits == 64) return DType::i64;
      break;
    case kDLUInt:
      if (t.bits == 8) return DType::boolean;  // torch exports bool as uint8 in DLPack < 1.0
      break;
    default: break;
  }
  throw std::invalid_argument("DLTensor dtype (code " + std::to_string(t.code) + ", " + std::to_string(t.bits) +
                              " bits) has no kparity dtype");
}

}  // namespace

DLDataType dl_dtype(DType t) noexcept {
  switch (t) {
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::f64: return {kDLFloat, 64, 1};
    case DType::i32: return {kDLInt, 32, 1};
    case DType::i64: return {kDLInt, 64, 1};
    case DType::boolean: return {kDLUInt, 8, 1};
  }
  return {kDLFloat, 32, 1};
}

TensorView view_of(const DLTensor& t) {
  if (t.ndim < 0 || t.ndim > kMaxRank) throw std::invalid_argument("DLTensor of rank " + std::to_string(t.ndim));
  Device dev;
  if (t.device.device_type == kDLCPU) dev = Device::cpu();
  else if (t.device.device_type == kDLCUDA) dev = Device::cuda(t.device.device_id);
  else throw std::invalid_argument("DLTensor on device type " + std::to_string(t.device.device_type));
  const DType dt = dtype_of(t.dtype);
  std::array<std::int64_t, kMaxRank> strides{};
  std::int64_t running = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    strides[d] = t.strides ? t.strides[d] : running;
    running *= t.shape[d];
  }
  void* data = static_cast<std::byte*>(t.data) + t.byte_offset;
  return TensorView(data, dt, std::span<const std::int64_t>(t.shape, static_cast<std::size_t>(t.ndim)),
                    std::span<const std::int64_t>(strides.data(), static_cast<std::size_t>(t.ndim)), dev);
}

DLView::DLView(const TensorView& v) {
  for (int d = 0; d < v.rank; ++d) {
    shape[d] = v.sizes[d];
    strides[d] = v.strides[d];
  }
  tensor.data = v.data;
  tensor.device = v.device.is_cuda() ? DLDevice{kDLCUDA, v.device.index} : DLDevice{kDLCPU, 0};
  tensor.ndim = v.rank;
  tensor.dtype = dl_dtype(v.dtype);
  tensor.shape = shape.data();
  tensor.strides = strides.data();
  tensor.byte_offset = 0;
}

}  // namespace kparity::abi
