// An implementation plugin that forwards every op to kparity's own CUDA kernels (kparity/impl_abi.h
// on one side, kparity::kernels through the op -> launcher table of kparity/judge/kernel_launch.hpp
// on the other): the smallest useful kDLCUDA plugin, and the pattern
// for wrapping a kernel library that has its own launchers. `kparity fuzz --impl
// libkparity_example_cuda_impl.so --op kda/replayssm_decode` must agree with `kparity fuzz --backend
// cuda` on the same seed.
#include <kparity/impl_abi.h>

#include <exception>
#include <string>

#include "kparity/abi/dlpack_views.hpp"
#include "kparity/diagnostics/contracts/kda_packed_decode.hpp"
#include "kparity/diagnostics/contracts/kda_recurrent.hpp"
#include "kparity/diagnostics/contracts/kda_replayssm_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_decode.hpp"
#include "kparity/diagnostics/contracts/sparse_paged_prefill.hpp"
#include "kparity/judge/kernel_launch.hpp"

namespace {

using kparity::ArgBag;
using kparity::ErrorClass;
using kparity::Status;

void put(ArgBag& bag, const char* name, const DLTensor* t) {
  if (t) bag.tensors[name] = kparity::abi::view_of(*t);
}

// The arguments the two decode ops share (sglang's packed decode signature).
ArgBag decode_bag(const DLTensor* mixed_qkv, const DLTensor* a, const DLTensor* b, const DLTensor* A_log,
                  const DLTensor* dt_bias, double scale, const DLTensor* initial_state, const DLTensor* out,
                  const DLTensor* ssm_state_indices, int use_qk_l2norm_in_kernel, const double* lower_bound) {
  ArgBag bag;
  put(bag, "mixed_qkv", mixed_qkv), put(bag, "a", a), put(bag, "b", b), put(bag, "A_log", A_log);
  put(bag, "dt_bias", dt_bias), put(bag, "initial_state", initial_state), put(bag, "out", out);
  put(bag, "ssm_state_indices", ssm_state_indices);
  bag.scalars["scale"] = scale;
  if (lower_bound) bag.scalars["lower_bound"] = *lower_bound;
  bag.flags["use_qk_l2norm_in_kernel"] = use_qk_l2norm_in_kernel != 0;
  return bag;
}

// The launchers check the call (upstream's checks at the kernel entry): a violation is a rejected
// call with upstream's message, NotImplementedError an unsupported one.
int answer(const Status& st, const kparity_impl_context* ctx) {
  if (st.ok()) return KPARITY_IMPL_OK;
  const kparity::Diagnostic& d = *st.first_error();
  const std::string text = d.render_text();
  const int status = d.error_class == ErrorClass::NotImplementedError ? KPARITY_IMPL_UNSUPPORTED : KPARITY_IMPL_REJECTED;
  return kparity_impl_fail(ctx, status, text.c_str());
}

template <class F>
int guarded(const kparity_impl_context* ctx, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    return kparity_impl_fail(ctx, KPARITY_IMPL_ERROR, e.what());
  }
}

cudaStream_t stream_of(const kparity_impl_context* ctx) { return static_cast<cudaStream_t>(ctx ? ctx->stream : nullptr); }

// The op's kparity kernel on the plugin's stream, with the launcher's default options (upstream's checks).
Status launch(std::string_view op, const ArgBag& bag, const kparity_impl_context* ctx) {
  return kparity::judging::launch_kernel(op, bag, stream_of(ctx), {});
}

const kparity_impl_info kInfo{KPARITY_IMPL_ABI_VERSION, "example-cuda-forward", kDLCUDA};

}  // namespace

extern "C" {

KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info(void) { return &kInfo; }

KPARITY_IMPL_EXPORT int kparity_impl_kda_recurrent KPARITY_IMPL_KDA_RECURRENT_PARAMS {
  return guarded(ctx, [&] {
    ArgBag bag;
    put(bag, "q", q), put(bag, "k", k), put(bag, "v", v), put(bag, "g", g), put(bag, "beta", beta);
    put(bag, "initial_state", initial_state), put(bag, "cu_seqlens", cu_seqlens), put(bag, "a", a);
    put(bag, "dt_bias", dt_bias), put(bag, "A_log", A_log), put(bag, "out", out), put(bag, "final_state", final_state);
    if (scale) bag.scalars["scale"] = *scale;
    if (lower_bound) bag.scalars["lower_bound"] = *lower_bound;
    bag.flags["use_qk_l2norm_in_kernel"] = use_qk_l2norm_in_kernel != 0;
    bag.flags["beta_is_logits"] = beta_is_logits != 0;
    return answer(launch(kparity::kda::kRecurrentOp, bag, ctx), ctx);
  });
}

KPARITY_IMPL_EXPORT int kparity_impl_kda_packed_decode KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS {
  return guarded(ctx, [&] {
    const ArgBag bag = decode_bag(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                                  use_qk_l2norm_in_kernel, lower_bound);
    return answer(launch(kparity::kda::kPackedDecodeOp, bag, ctx), ctx);
  });
}

KPARITY_IMPL_EXPORT int kparity_impl_kda_replayssm_decode KPARITY_IMPL_KDA_REPLAYSSM_DECODE_PARAMS {
  return guarded(ctx, [&] {
    ArgBag bag = decode_bag(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                            use_qk_l2norm_in_kernel, lower_bound);
    put(bag, "d_cache", d_cache), put(bag, "k_cache", k_cache), put(bag, "g_cache", g_cache);
    put(bag, "write_pos", write_pos), put(bag, "force_flush", force_flush);
    bag.flags["beta_in_fp32"] = beta_in_fp32 != 0;
    return answer(launch(kparity::kda::kReplaySsmDecodeOp, bag, ctx), ctx);
  });
}

KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_prefill KPARITY_IMPL_SPARSE_PAGED_PREFILL_PARAMS {
  return guarded(ctx, [&] {
    ArgBag bag;
    put(bag, "q", q), put(bag, "unified_kv", unified_kv), put(bag, "kv_indices_prefix", kv_indices_prefix);
    put(bag, "kv_indptr_prefix", kv_indptr_prefix), put(bag, "kv", kv), put(bag, "kv_indices_extend", kv_indices_extend);
    put(bag, "kv_indptr_extend", kv_indptr_extend), put(bag, "attn_sink", attn_sink), put(bag, "out", out);
    put(bag, "lse", lse);
    bag.scalars["softmax_scale"] = softmax_scale;
    bag.scalars["replicated_logit_shift"] = replicated_logit_shift;
    bag.flags["return_lse"] = return_lse != 0;
    return answer(launch(kparity::sparse::kPagedPrefillOp, bag, ctx), ctx);
  });
}

KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_decode KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS {
  return guarded(ctx, [&] {
    ArgBag bag;
    put(bag, "q", q), put(bag, "unified_kv", unified_kv), put(bag, "kv_indices", kv_indices);
    put(bag, "kv_indptr", kv_indptr), put(bag, "attn_sink", attn_sink), put(bag, "out", out), put(bag, "lse", lse);
    bag.scalars["softmax_scale"] = softmax_scale;
    bag.flags["return_lse"] = return_lse != 0;
    return answer(launch(kparity::sparse::kPagedDecodeOp, bag, ctx), ctx);
  });
}

}  // extern "C"
