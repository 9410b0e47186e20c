/* kparity/impl_abi.h: the C ABI of an implementation that `kparity fuzz --impl lib.so --op OP`
 * (and tests/abi) load with dlopen and fuzz against kparity's references.
 *
 * A plugin is a shared library that exports
 *   - kparity_impl_get_info(): its ABI version, a name for reports, and where its tensors live
 *     (kDLCPU: host memory; kDLCUDA: device memory of the current device);
 *   - one entry point per op it implements, named kparity_impl_<family>_<op>, with the signature
 *     declared below. An op whose symbol is absent is not implemented; the fuzzer says so.
 *
 * Arguments follow the op's upstream signature (kparity's op table, ops/README.md): tensors in
 * upstream positional order as DLPack DLTensors (NULL for an absent optional tensor, `None`
 * upstream), then kparity's keyword-only extras. Required scalars are doubles (the value the Python
 * caller passed; the kernels see them as fp32 constants), optional ones `const double*` (NULL:
 * None), flags `int` (0 or 1). Outputs that upstream allocates itself (sparse `out`/`lse`, the
 * recurrence's `out`/`final_state`) are passed preallocated by the caller here: C has no tensor
 * allocator to return them with.
 *
 * DLTensor conventions: `data + byte_offset` is element [0, ..., 0]; `strides` are in elements and
 * never NULL (the caller always passes them: views keep their real layouts, offsets and padding);
 * dtypes are float32/bfloat16/float16 and int32/int64 as the op's contract allows. Tensors the op
 * writes are declared non-const. An implementation must write nothing else: the fuzzer surrounds
 * every buffer with guard bands, poisons pure outputs with NaN before the call, and fails a call
 * that touches a guard band, an input, or the padding between the elements of a strided output.
 *
 * Every entry point returns a kparity_impl_status and, for anything but KPARITY_IMPL_OK, writes a
 * NUL-terminated message into ctx->message (truncated to ctx->message_size bytes). A CUDA plugin
 * launches on ctx->stream (a cudaStream_t; NULL is the legacy default stream) and need not
 * synchronise: the fuzzer synchronises and checks for errors after the call.
 *
 * DLPack comes from the Debian package libdlpack-dev (<dlpack/dlpack.h>, v0.6 or newer; only
 * DLTensor, DLDevice and DLDataType are used, whose layout every version since 0.6 shares). To use
 * another copy (PyTorch ships one as <ATen/dlpack.h>), define KPARITY_IMPL_ABI_DLPACK_HEADER as its
 * name in quotes or angle brackets before including this header.
 */
#ifndef KPARITY_IMPL_ABI_H
#define KPARITY_IMPL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef KPARITY_IMPL_ABI_DLPACK_HEADER
#include KPARITY_IMPL_ABI_DLPACK_HEADER
#else
#include <dlpack/dlpack.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define KPARITY_IMPL_ABI_VERSION 1

#if defined(_WIN32)
#define KPARITY_IMPL_EXPORT __declspec(dllexport)
#else
#define KPARITY_IMPL_EXPORT __attribute__((visibility("default")))
#endif

typedef enum kparity_impl_status {
  KPARITY_IMPL_OK = 0,
  /* The call is invalid and was refused before anything was written: what upstream's input checks
   * do (ValueError/RuntimeError in Python). The message should be upstream's, byte for byte, if the
   * plugin mirrors upstream's checks (the fuzzer can compare it with kparity's catalog). */
  KPARITY_IMPL_REJECTED = 1,
  /* A valid call outside what this implementation supports (a head dim, a dtype): Python's
   * NotImplementedError. Nothing was written; the fuzzer counts the case as unsupported. */
  KPARITY_IMPL_UNSUPPORTED = 2,
  /* Anything else: an internal failure (a CUDA error, an allocation that failed). */
  KPARITY_IMPL_ERROR = 3
} kparity_impl_status;

typedef struct kparity_impl_info {
  uint32_t abi_version;     /* KPARITY_IMPL_ABI_VERSION of the header the plugin was built with */
  const char* name;         /* shown in reports and property names, e.g. "my-triton-port" */
  DLDeviceType device_type; /* kDLCPU or kDLCUDA: where every tensor argument lives */
} kparity_impl_info;

typedef struct kparity_impl_context {
  void* stream;        /* cudaStream_t for a kDLCUDA plugin; NULL otherwise */
  char* message;       /* buffer for the message of a non-OK status */
  size_t message_size; /* its size in bytes, NUL included */
} kparity_impl_context;

/* The one function every plugin exports. The pointer must stay valid while the library is loaded. */
#define KPARITY_IMPL_GET_INFO_PARAMS (void)
typedef const kparity_impl_info* (*kparity_impl_get_info_fn) KPARITY_IMPL_GET_INFO_PARAMS;
KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info KPARITY_IMPL_GET_INFO_PARAMS;

/* kda/recurrent: flash-linear-attention's fused_recurrent_kda without the batch axis (kparity's op
 * table). q, k [T, H, K]; v [T, HV, V]; the gate either as `g` [T, HV, K] (log-decay) or as kparity's
 * in-kernel form `a` [T, HV, K] + `dt_bias` [HV, K] + `A_log` [HV] (+ `lower_bound`); `beta` [T, HV]
 * (probabilities, or logits with beta_is_logits); `scale` NULL: K^-0.5; `initial_state`
 * [N, HV, V, K] (V-first) or NULL: zeros; `cu_seqlens` [N+1] or NULL: one sequence. Writes `out`
 * [T, HV, V] and, when not NULL, `final_state` [N, HV, V, K] (upstream's output_final_state). */
#define KPARITY_IMPL_KDA_RECURRENT_PARAMS                                                                   \
  (const DLTensor* q, const DLTensor* k, const DLTensor* v, const DLTensor* g, const DLTensor* beta,       \
   const double* scale, const DLTensor* initial_state, int use_qk_l2norm_in_kernel,                        \
   const DLTensor* cu_seqlens, const DLTensor* a, const DLTensor* dt_bias, const DLTensor* A_log,          \
   const double* lower_bound, int beta_is_logits, DLTensor* out, DLTensor* final_state,                    \
   const kparity_impl_context* ctx)
typedef int (*kparity_impl_kda_recurrent_fn) KPARITY_IMPL_KDA_RECURRENT_PARAMS;
KPARITY_IMPL_EXPORT int kparity_impl_kda_recurrent KPARITY_IMPL_KDA_RECURRENT_PARAMS;

/* kda/packed_decode: sglang helion_fused_recurrent_kda_packed_decode (kda.md B.1). Updates `out`
 * [B, 1, HV, V] and the state slots of `initial_state` [slots, HV, V, K] in place. */
#define KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS                                                               \
  (const DLTensor* mixed_qkv, const DLTensor* a, const DLTensor* b, const DLTensor* A_log,                 \
   const DLTensor* dt_bias, double scale, DLTensor* initial_state, DLTensor* out,                          \
   const DLTensor* ssm_state_indices, int use_qk_l2norm_in_kernel, const double* lower_bound,              \
   const kparity_impl_context* ctx)
typedef int (*kparity_impl_kda_packed_decode_fn) KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS;
KPARITY_IMPL_EXPORT int kparity_impl_kda_packed_decode KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS;

/* kda/replayssm_decode: sglang helion_fused_recurrent_kda_replayssm_decode (kda.md B.2). Updates
 * `out`, the checkpoint slots of `initial_state` (flush rows) and the rings `d_cache`, `k_cache`,
 * `g_cache` (append rows) in place; `force_flush` may be NULL. `beta_in_fp32` is kparity's keyword
 * for the fixed beta rounding (kda.md A.4 item 6; 0 is the Helion behaviour). */
#define KPARITY_IMPL_KDA_REPLAYSSM_DECODE_PARAMS                                                            \
  (const DLTensor* mixed_qkv, const DLTensor* a, const DLTensor* b, const DLTensor* A_log,                 \
   const DLTensor* dt_bias, double scale, DLTensor* initial_state, DLTensor* d_cache, DLTensor* k_cache,   \
   DLTensor* g_cache, DLTensor* out, const DLTensor* ssm_state_indices, const DLTensor* write_pos,         \
   const DLTensor* force_flush, int use_qk_l2norm_in_kernel, const double* lower_bound, int beta_in_fp32,  \
   const kparity_impl_context* ctx)
typedef int (*kparity_impl_kda_replayssm_decode_fn) KPARITY_IMPL_KDA_REPLAYSSM_DECODE_PARAMS;
KPARITY_IMPL_EXPORT int kparity_impl_kda_replayssm_decode KPARITY_IMPL_KDA_REPLAYSSM_DECODE_PARAMS;

/* sparse/paged_prefill: sglang sparse_attn_v4_paged_prefill, V-lse (sparse_attention.md A.2, C).
 * Writes `out` [T, H, D] and, with return_lse, `lse` [T, H] fp32 (NULL otherwise). */
#define KPARITY_IMPL_SPARSE_PAGED_PREFILL_PARAMS                                                            \
  (const DLTensor* q, const DLTensor* unified_kv, const DLTensor* kv_indices_prefix,                       \
   const DLTensor* kv_indptr_prefix, const DLTensor* kv, const DLTensor* kv_indices_extend,                \
   const DLTensor* kv_indptr_extend, const DLTensor* attn_sink, double softmax_scale, int return_lse,      \
   double replicated_logit_shift, DLTensor* out, DLTensor* lse, const kparity_impl_context* ctx)
typedef int (*kparity_impl_sparse_paged_prefill_fn) KPARITY_IMPL_SPARSE_PAGED_PREFILL_PARAMS;
KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_prefill KPARITY_IMPL_SPARSE_PAGED_PREFILL_PARAMS;

/* sparse/paged_decode: sglang sparse_attn_v4_paged_decode (sparse_attention.md F.0; no kv_scales).
 * Writes `out` [T, H, D] and, with return_lse, `lse` [T, H] fp32 (NULL otherwise). */
#define KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS                                                             \
  (const DLTensor* q, const DLTensor* unified_kv, const DLTensor* kv_indices, const DLTensor* kv_indptr,   \
   const DLTensor* attn_sink, double softmax_scale, int return_lse, DLTensor* out, DLTensor* lse,          \
   const kparity_impl_context* ctx)
typedef int (*kparity_impl_sparse_paged_decode_fn) KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS;
KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_decode KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS;

/* Fills ctx->message (if any) and returns `status`: `return kparity_impl_fail(ctx, 1, "...");`. */
static inline int kparity_impl_fail(const kparity_impl_context* ctx, int status, const char* message) {
  if (ctx && ctx->message && ctx->message_size > 0) {
    size_t i = 0;
    for (; message && message[i] && i + 1 < ctx->message_size; ++i) ctx->message[i] = message[i];
    ctx->message[i] = '\0';
  }
  return status;
}

#ifdef __cplusplus
}
#endif

#endif /* KPARITY_IMPL_ABI_H */
