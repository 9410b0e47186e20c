#pragma once
// What the KDA kernels are compiled for, in one place: the launchers' support checks, the dispatch
// switches of dispatch_impl.cuh (which static_assert against these bounds) and the messages that
// list the supported set all read it (public summary: kparity/kernels/kda.hpp).
#include <cstdint>
#include <string_view>

#include "kparity/core/dtype.hpp"

namespace kparity::kernels::kda {

// K and V: powers of two in [kMinHeadDim, kMaxHeadDim], one template instance per K (V is a run-time
// tile count).
inline constexpr int kMinHeadDim = 16, kMaxHeadDim = 256;
constexpr bool supported_head_dim(std::int64_t d) {
  return d >= kMinHeadDim && d <= kMaxHeadDim && (d & (d - 1)) == 0;
}
inline constexpr std::string_view kHeadDimsText = "powers of two from 16 to 256";

// Every float input, the state and the output: loaded and stored through f32/f16/bf16 paths only.
constexpr bool float_dtype(DType t) { return t == DType::f32 || t == DType::f16 || t == DType::bf16; }
inline constexpr std::string_view kFloatDtypesText = "torch.float32, torch.float16, torch.bfloat16";

}  // namespace kparity::kernels::kda
