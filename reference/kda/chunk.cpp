// kda/chunk (fla/ops/kda/chunk.py @bc3b101d): each batch row of the call is one kda/recurrent call
// (the packed row with cu_seqlens, one sequence per row without), with fla's options mapped onto
// kda/recurrent's arguments. kparity/reference/kda_chunk.hpp says what the precisions mean.
#include <cmath>
#include <utility>

#include "chunk_fla.hpp"
#include "chunk_kparity.hpp"
#include "kparity/core/tensor.hpp"
#include "kparity/reference/precision_profile.hpp"
#include "kparity/reference/kda.hpp"
#include "kparity/reference/kda_chunk.hpp"

namespace kparity::reference::kda {
namespace {

using kparity::kda::ChunkDims;
using kparity::kda::RecurrentArgs;

// [N, HV, K, V] seen as kda/recurrent's [N, HV, V, K] (and a V-first state as it is).
TensorView v_first(TensorView s, bool already) {
  if (!already) {
    std::swap(s.sizes[2], s.sizes[3]);
    std::swap(s.strides[2], s.strides[3]);
  }
  return s;
}

// Rows [b, b + 1) of dimension 0, keeping the dimension.
TensorView row(TensorView s, std::int64_t b) {
  s.data = static_cast<std::byte*>(s.data) + b * s.strides[0] * static_cast<std::int64_t>(s.element_size());
  s.sizes[0] = 1;
  return s;
}

// allow_neg_eigval's beta = 2 * sigmoid(b) (fla/ops/common/gate.py, fused_beta_sigmoid_fwd_kernel),
// computed in R and stored as fp32 as upstream stores it.
template <class R>
Tensor doubled_sigmoid(const TensorView& b) {
  Tensor out(DType::f32, b.shape());
  const TensorView o = out.view();
  for_each_element(b, [&](std::span<const std::int64_t> idx, std::int64_t) {
    const R x = static_cast<R>(b.load(idx));
    o.store(idx, static_cast<double>(R(2) * (R(1) / (R(1) + std::exp(-x)))));
  });
  return out;
}

}  // namespace

void chunk(const ChunkArgs& a, Precision p, const ValidateOptions& options) {
  kparity::kda::check_chunk(a, options);
  const ChunkDims d = kparity::kda::chunk_dims(a);
  const Device dev = a.q.device;

  // Stand-ins for what upstream's in-kernel gate leaves out: without A_log the bounded gate is
  // lower_bound * sigmoid(x), i.e. exp(A_log) = 1; without dt_bias nothing is added (gate.py).
  Tensor zero_A_log, zero_dt_bias, beta_fp32;
  if (a.use_gate_in_kernel && !a.A_log) zero_A_log = Tensor(DType::f32, {d.HV}).fill(0.0);
  if (a.use_gate_in_kernel && !a.dt_bias) zero_dt_bias = Tensor(DType::f32, {d.HV * d.K}).fill(0.0);
  const bool doubled = a.use_beta_sigmoid_in_kernel && a.allow_neg_eigval;
  if (doubled) beta_fp32 = p == Precision::oracle ? doubled_sigmoid<double>(a.beta) : doubled_sigmoid<float>(a.beta);

  const bool varlen = a.cu_seqlens.has_value();
  const bool writes_final = a.output_final_state && a.final_state;
  for (std::int64_t b = 0; b < d.B; ++b) {
    RecurrentArgs r;
    r.q = a.q.select(0, b);
    r.k = a.k.select(0, b);
    r.v = a.v.select(0, b);
    if (a.use_gate_in_kernel) {
      r.a = a.g.select(0, b);
      r.A_log = a.A_log ? *a.A_log : zero_A_log.view_on(dev);
      r.dt_bias = a.dt_bias ? *a.dt_bias : zero_dt_bias.view_on(dev);
      r.lower_bound = a.lower_bound;
    } else {
      r.g = a.g.select(0, b);  // lower_bound plays no part without the in-kernel gate
    }
    if (doubled) {
      r.beta = beta_fp32.view_on(dev).select(0, b);
    } else {
      r.beta = a.beta.select(0, b);
      r.beta_is_logits = a.use_beta_sigmoid_in_kernel;
    }
    r.use_qk_l2norm_in_kernel = a.use_qk_l2norm_in_kernel;
    r.scale = a.scale;
    // Varlen: the one row holds all N sequences; otherwise row b is sequence b.
    if (a.initial_state) r.initial_state = v_first(varlen ? *a.initial_state : row(*a.initial_state, b), d.state_v_first);
    if (writes_final) r.final_state = v_first(varlen ? *a.final_state : row(*a.final_state, b), d.state_v_first);
    r.out = a.out.select(0, b);
    r.cu_seqlens = a.cu_seqlens;
    if (p == Precision::faithful && precision_profile() == PrecisionProfile::fla_chunk) {
      // fla's chunked pipeline with its rounding points (chunk_fla.cpp), instead of the recurrence's.
      detail::chunk_fla_faithful(r, a.chunk_size ? static_cast<std::int64_t>(*a.chunk_size) : 64, a.safe_gate);
      continue;
    }
    if (p == Precision::faithful && precision_profile() == PrecisionProfile::kparity_chunk) {
      detail::chunk_kparity_faithful(r);  // kparity's chunked kernel's form and rounding points (chunk_kparity.cpp)
      continue;
    }
    // check_chunk accepted the call, so these structural checks pass; they stay as a guard.
    recurrent(r, p, ValidateOptions{Entry::reference, false, false});
  }
}

}  // namespace kparity::reference::kda
