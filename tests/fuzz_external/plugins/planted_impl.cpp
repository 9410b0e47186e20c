// The example CPU plugin with one planted bug in kda/packed_decode, chosen by KPARITY_TEST_BUG when
// tests/abi/abi.cmake builds it (one library per bug). Each bug must be caught by `kparity fuzz
// --impl` with its failure class; the other four ops stay correct.
#define KPARITY_EXAMPLE_NO_EXPORTS
#include "../../../examples/impl_plugins/cpu_impl.cpp"

#include <chrono>
#include <csignal>
#include <thread>

#include <unistd.h>

namespace {

enum Bug {
  wrong_values = 1,
  wrote_outside_outputs,
  crashed,
  timed_out,
  rejected_valid_call,
  not_deterministic,
  drops_fifth_key,    // sparse/paged_decode: the last key of a token with five or more left out (issue 33)
  ignores_inf_sink,   // sparse/paged_decode: a +inf sink read as -inf (no sink)
  ignores_q_strides,  // sparse/paged_decode: q read as compact from its first element
  wrong_last_chunk,   // kda/recurrent: the outputs of each sequence's last 64-token chunk 1/16 too large
};

const kparity_impl_info kPlantedInfo{KPARITY_IMPL_ABI_VERSION, "planted-" KPARITY_TEST_BUG_NAME, kDLCPU};

bool any_padding_row(const View& idx) {
  for (I b = 0; b < idx.size(0); ++b)
    if (idx.ldi(idx.off({b})) < 0) return true;
  return false;
}

}  // namespace

extern "C" {

KPARITY_IMPL_EXPORT const kparity_impl_info* kparity_impl_get_info(void) { return &kPlantedInfo; }

KPARITY_IMPL_EXPORT int kparity_impl_kda_packed_decode KPARITY_IMPL_KDA_PACKED_DECODE_PARAMS {
  const View idx(ssm_state_indices), O(out), S0(initial_state);
  if (KPARITY_TEST_BUG == rejected_valid_call && idx.kind == Kind::i64)  // insists on int32 slots
    return kparity_impl_fail(ctx, KPARITY_IMPL_REJECTED, "`ssm_state_indices` must be int32.");
  if (KPARITY_TEST_BUG == crashed && any_padding_row(idx)) std::raise(SIGSEGV);  // a padding row derefs a bad slot
  if (KPARITY_TEST_BUG == timed_out && lower_bound) std::this_thread::sleep_for(std::chrono::seconds(20));
  const int st = packed_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                               use_qk_l2norm_in_kernel, lower_bound, ctx);
  if (st != KPARITY_IMPL_OK) return st;
  const I n = O.size(0) * O.size(1) * O.size(2) * O.size(3);
  if (KPARITY_TEST_BUG == wrong_values)  // a constant off by 2^-6: every output 1.6 % too large
    for (I i = 0; i < n; ++i) O.st(O.flat_off(i), O.ld(O.flat_off(i)) * (1.f + 1.f / 64));
  if (KPARITY_TEST_BUG == wrote_outside_outputs && n > 0)  // the vector tail stored one element too far
    O.st(O.flat_off(n - 1) + 1, 0.f);
  if (KPARITY_TEST_BUG == not_deterministic && S0.kind == Kind::f32) {
    // A racy reduction: the low bits of each slot's first state element depend on the call (the
    // fuzzer runs a CPU plugin in a fresh child process per call, so the clock stands in for a race;
    // at most 15 ulp, inside the differential rule's floor).
    const auto tick = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
    const std::uint32_t flip = 1u + static_cast<std::uint32_t>((tick ^ static_cast<std::uint64_t>(getpid())) % 15);
    for (I b = 0; b < idx.size(0); ++b)
      if (const I s = idx.ldi(idx.off({b})); s >= 0) *(reinterpret_cast<std::uint32_t*>(S0.base()) + S0.off({s, 0, 0, 0})) ^= flip;
  }
  return KPARITY_IMPL_OK;
}

KPARITY_IMPL_EXPORT int kparity_impl_sparse_paged_decode KPARITY_IMPL_SPARSE_PAGED_DECODE_PARAMS {
  if (KPARITY_TEST_BUG == ignores_inf_sink && attn_sink) {
    // The sink copied to fp32 with every +inf made -inf: a kernel that folds the sink in as
    // exp(sink - m) and takes +inf for "no sink".
    const View S(attn_sink);
    std::vector<float> vals(static_cast<std::size_t>(S.size(0)));
    for (I h = 0; h < S.size(0); ++h) {
      const float x = S.ld(S.off({h}));
      vals[static_cast<std::size_t>(h)] = x == INFINITY ? -INFINITY : x;
    }
    std::int64_t shape = S.size(0), stride = 1;
    DLTensor copy = *attn_sink;
    copy.data = vals.data();
    copy.byte_offset = 0;
    copy.dtype = DLDataType{kDLFloat, 32, 1};
    copy.shape = &shape;
    copy.strides = &stride;
    return paged_decode(q, unified_kv, kv_indices, kv_indptr, &copy, softmax_scale, return_lse, out, lse, ctx);
  }
  if (KPARITY_TEST_BUG == ignores_q_strides) {
    // q's strides replaced by the compact ones: a kernel handed the pointer and the shape only.
    std::vector<std::int64_t> compact(static_cast<std::size_t>(q->ndim));
    std::int64_t st = 1;
    for (int d = q->ndim - 1; d >= 0; --d) compact[static_cast<std::size_t>(d)] = st, st *= q->shape[d];
    DLTensor copy = *q;
    copy.strides = compact.data();
    return paged_decode(&copy, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, return_lse, out, lse, ctx);
  }
  if (KPARITY_TEST_BUG != drops_fifth_key)
    return paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, return_lse, out, lse, ctx);
  // A key loop whose tile of four is handled and whose remainder is not: the example's own loop,
  // each token's keys read from its span with the fifth and later one short.
  const View Q(q), U(unified_kv), idx(kv_indices), ptr(kv_indptr), sink(attn_sink), O(out), Lse(lse);
  if (const char* why = check_sparse(Q, O)) return kparity_impl_fail(ctx, KPARITY_IMPL_UNSUPPORTED, why);
  std::vector<Key> keys;
  for (I t = 0; t < Q.size(0); ++t) {
    keys.clear();
    const auto [b, e] = span(ptr, t);
    for (I j = b; j < e; ++j) keys.push_back({&U, idx.ldi_flat(j), false});
    if (keys.size() >= 5) keys.pop_back();
    attend(Q, sink, O, return_lse && lse ? &Lse : nullptr, t, keys, softmax_scale, 0.0, true);
  }
  return KPARITY_IMPL_OK;
}

#if KPARITY_TEST_BUG == 10  // wrong_last_chunk: the only variant that exports kda/recurrent
KPARITY_IMPL_EXPORT int kparity_impl_kda_recurrent KPARITY_IMPL_KDA_RECURRENT_PARAMS {
  const int st = recurrent(q, k, v, g, beta, scale, initial_state, use_qk_l2norm_in_kernel, cu_seqlens, a, dt_bias,
                           A_log, lower_bound, beta_is_logits, out, final_state, ctx);
  if (st != KPARITY_IMPL_OK) return st;
  // A chunked implementation whose tail chunk (the last 64 tokens or fewer of each sequence) is
  // scaled by a stale factor: out 1/16 too large there, the state right.
  const View O(out), cu(cu_seqlens);
  std::vector<I> bounds{0, O.size(0)};
  if (cu) {
    bounds.resize(static_cast<std::size_t>(cu.size(0)));
    for (I n = 0; n < cu.size(0); ++n) bounds[static_cast<std::size_t>(n)] = cu.ldi(cu.off({n}));
  }
  for (std::size_t n = 0; n + 1 < bounds.size(); ++n) {
    const I b = bounds[n], e = bounds[n + 1];
    if (e <= b) continue;
    for (I t = b + (e - 1 - b) / 64 * 64; t < e; ++t)
      for (I h = 0; h < O.size(1); ++h)
        for (I j = 0; j < O.size(2); ++j) O.st(O.off({t, h, j}), O.ld(O.off({t, h, j})) * (1.f + 1.f / 16));
  }
  return KPARITY_IMPL_OK;
}
#endif

}  // extern "C"
