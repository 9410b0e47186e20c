#pragma once
// Precision profiles of the faithful reference: which upstream kernel's rounding points it models
// where kernels differ. The oracle never changes; a profile only moves the faithful model, and with
// it the bound of the fuzzer's differential rule (2 * |faithful - oracle|), at the named points and
// nowhere else, so a correct kernel of that family passes while a real bug still stands out.
//
//   faithful  (default) the rounding points of the specs (kda.md B.2.9, sparse_attention.md C.5).
//   tf32-dot  (alias sglang-triton) sglang's Triton ReplaySSM decode
//             (fla/fused_recurrent_linear_replayssm.py @03a70bf3), at its two rounding points that
//             the specs' faithful model does not have:
//             1. with an fp32 `out`, its reconstruction dot tl.dot(d, k*W) runs on tensor cores in
//                TF32 (kda.md B.2.4 item 2), so both operands lose their 13 low mantissa bits; the
//                model truncates them (what the MMA does with fp32 registers; a kernel that rounds to
//                nearest instead errs by half as much, inside the rule's factor 2);
//             2. the k ring entry is stored as rt(rt(k_hat, out dtype), k_cache dtype): line 414
//                `k_c.to(p_o.dtype.element_ty)` rounds k_hat to out's dtype, then the store converts
//                to the ring's (measured on the H200: a bf16 `out` with an fp32 ring stored
//                -0.255859375 = bf16(-0.2567891...); kda.md B.2.6 "Triton difference"). It matters
//                when the ring is wider than `out`; the oracle keeps the op's contract (k_hat rounded
//                once, at the store), and the rule's 2 |faithful - oracle| and the a-priori bound
//                (reference/kda/error_bound.cpp) then admit the second rounding.
//             The name stays for existing users; "sglang-triton" says what it stands for.
//   fla-chunk fla's chunk_kda (fla/ops/kda/chunk_fwd.py @bc3b101d): kda/chunk's faithful model runs
//             fla's chunked pipeline instead of the recurrence, with the intermediates it stores in
//             the inputs' dtypes (normalised q and k, Aqk, (I + Akk)^-1, w, u, kg, the per-chunk
//             states, v_new) and its TF32 dots (reference/kda/chunk_fla.cpp says where). Other ops
//             are unchanged under it.
//   kparity-chunk kparity's own chunked kda/chunk CUDA kernel (kernels/kda/chunk*, docs/kda_chunk_kernel.md):
//             kda/chunk's faithful model runs that kernel's chunked form (16-token chunks, TF32
//             tensor-core operands with fp32 accumulation, exact fp32 decays where a chunk's gate
//             span is unsafe, fp32 state; reference/kda/chunk_kparity.cpp follows the doc's rounding
//             points one by one). Other ops are unchanged under it.
//
// The profile is per thread and set by a scope, like planted_fault.hpp; the ReplaySSM reference
// applies it through dot_operand() at its two reconstruction operands and k_ring_entry() at the k
// ring store (reference/kda/replayssm_decode.cpp), its a-priori bound through k_ring_through_out().
#include <optional>
#include <string_view>
#include <type_traits>

#include "kparity/core/dtype.hpp"

namespace kparity::reference {

enum class PrecisionProfile { faithful, tf32_dot, fla_chunk, kparity_chunk };

// "faithful", "tf32-dot", "fla-chunk", "kparity-chunk"
std::string_view profile_name(PrecisionProfile p) noexcept;
// "faithful", "tf32-dot" or its alias "sglang-triton", "fla-chunk", "kparity-chunk".
std::optional<PrecisionProfile> parse_profile(std::string_view s) noexcept;
PrecisionProfile precision_profile() noexcept;

class PrecisionProfileScope {
 public:
  explicit PrecisionProfileScope(PrecisionProfile p) noexcept;
  ~PrecisionProfileScope();
  PrecisionProfileScope(const PrecisionProfileScope&) = delete;
  PrecisionProfileScope& operator=(const PrecisionProfileScope&) = delete;

 private:
  PrecisionProfile previous_;
};

// x (fp32) truncated to TF32: sign, exponent and the 10 high mantissa bits; NaN and inf unchanged.
float truncate_to_tf32(float x) noexcept;

// A tensor-core dot operand rounded to the I/O dtype `io` (kda.md B.2.4 item 1), and under the
// tf32-dot profile an fp32 `io` operand truncated to TF32. R = double (the oracle) is untouched.
template <class R>
R dot_operand(R x, DType io) noexcept {
  if constexpr (std::is_same_v<R, float>) {
    const float r = round_through(x, io);
    return io == DType::f32 && precision_profile() == PrecisionProfile::tf32_dot ? truncate_to_tf32(r) : r;
  } else {
    return x;
  }
}

// Whether the current profile stores the ReplaySSM k ring through `out`'s dtype first (item 2 above).
inline bool k_ring_through_out() noexcept { return precision_profile() == PrecisionProfile::tf32_dot; }

// The value the faithful ReplaySSM hands to the k ring's store (which rounds it to the ring dtype):
// k_hat itself, or under tf32-dot k_hat rounded to `out`'s dtype first. R = double (the oracle) is
// untouched.
template <class R>
R k_ring_entry(R k_hat, DType out) noexcept {
  if constexpr (std::is_same_v<R, float>) {
    return k_ring_through_out() ? round_through(k_hat, out) : k_hat;
  } else {
    return k_hat;
  }
}

}  // namespace kparity::reference
