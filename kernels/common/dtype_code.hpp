#pragma once
// Run-time element-type codes of the kernel params structs (kda/params.hpp, sparse/params.hpp). The
// small inputs of both kernel families are loaded through a switch on these, so a params struct stays
// a POD and one template instance serves every dtype mix of those inputs. Host-only types: no CUDA.
#include <optional>

#include "kparity/core/dtype.hpp"

namespace kparity::kernels {

enum DtCode : int { kF32 = 0, kF16 = 1, kBF16 = 2, kI32 = 3, kI64 = 4 };

// The code of a float or index dtype; -1 for bool, which no kernel loads.
constexpr int dt_code(DType t) {
  switch (t) {
    case DType::f32: return kF32;
    case DType::f16: return kF16;
    case DType::bf16: return kBF16;
    case DType::i32: return kI32;
    case DType::i64: return kI64;
    default: return -1;
  }
}

// The inverse, for errors that name a dispatched dtype; nullopt for a code no dtype has.
constexpr std::optional<DType> dtype_of_code(int code) {
  switch (code) {
    case kF32: return DType::f32;
    case kF16: return DType::f16;
    case kBF16: return DType::bf16;
    case kI32: return DType::i32;
    case kI64: return DType::i64;
    default: return std::nullopt;
  }
}

}  // namespace kparity::kernels
