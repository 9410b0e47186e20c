#pragma once
// IEEE binary32 special values by bit pattern, for the outputs the kernels write on purpose (masked
// logits, an lse of -inf, the NaN of a degenerate row). The NaN is the canonical quiet NaN
// 0x7fc00000, the bits std::nanf produces on the host; CUDA's CUDART_NAN_F (math_constants.h) is
// 0x7fffffff. Writing the canonical one keeps the kernels' NaN outputs bitwise equal to a host NaN.
namespace kparity::kernels::dev {

inline constexpr int kPosInfBits = 0x7f800000;
inline constexpr int kQuietNanBits = 0x7fc00000;

__device__ __forceinline__ float pos_inf() { return __int_as_float(kPosInfBits); }
__device__ __forceinline__ float quiet_nan() { return __int_as_float(kQuietNanBits); }

}  // namespace kparity::kernels::dev
