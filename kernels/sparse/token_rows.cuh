#pragma once
// The selected rows of one query token, shared by both sparse attention kernels (attn_kernel.cuh,
// wg_addr_kernel.cuh): the CSR spans of the two sources and a split's share of them, the index
// entries loaded ahead as raw words and decoded later, and the sink logit (spec
// sparse_attention.md C.1).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/float_bits.cuh"
#include "sparse/params.hpp"

namespace kparity::kernels::sparse::dev {

using kernels::dev::pos_inf;

__device__ __forceinline__ long long ld_int(const void* p, int dt, long long i) {
  return dt == kI64 ? __ldg(static_cast<const long long*>(p) + i) : static_cast<long long>(__ldg(static_cast<const int*>(p) + i));
}
__device__ __forceinline__ float ld_float(const void* p, int dt, long long i) {
  if (dt == kF32) return static_cast<const float*>(p)[i];
  if (dt == kBF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  return __half2float(static_cast<const __half*>(p)[i]);
}

// The CTA's place in the grid: blockIdx.x = (t * n_head_tiles + head tile) * splits + split, so the
// splits of one (token, head tile) are neighbours and share its rows in L2.
struct CtaCoords {
  long long t, h0, split;  // token, first head, key-range split
};
__device__ __forceinline__ CtaCoords cta_coords(const AttnParams& p, int heads_per_cta) {
  long long bid = blockIdx.x;
  const long long split = bid % p.splits;
  bid /= p.splits;
  return {bid / p.n_head_tiles, (bid % p.n_head_tiles) * heads_per_cta, split};
}

// The selected rows of query token t and this CTA's share of them: the prefix span [pb, pb + np)
// and the extend span [eb, eb + ne) of the two CSR sources (a decreasing pair is an empty span,
// C.1 item 1), concatenated, and split `split` of p.splits takes [j0, j1) in whole tiles of kTile.
struct TokenSpans {
  long long pb, np, eb = 0, ne = 0, j0, j1;
  int ntiles;
};
template <int kTile>
__device__ __forceinline__ TokenSpans token_spans(const AttnParams& p, long long t, long long split) {
  TokenSpans sp;
  sp.pb = ld_int(p.ptr[0], p.ptr_dt[0], t * p.ptr_s[0]);
  sp.np = max(0LL, ld_int(p.ptr[0], p.ptr_dt[0], (t + 1) * p.ptr_s[0]) - sp.pb);
  if (p.has_extend) {
    sp.eb = ld_int(p.ptr[1], p.ptr_dt[1], t * p.ptr_s[1]);
    sp.ne = max(0LL, ld_int(p.ptr[1], p.ptr_dt[1], (t + 1) * p.ptr_s[1]) - sp.eb);
  }
  const long long n_all = sp.np + sp.ne;
  const long long per = ((n_all + kTile - 1) / kTile + p.splits - 1) / p.splits * kTile;
  sp.j0 = split * per;
  sp.j1 = min(n_all, sp.j0 + per);
  sp.ntiles = sp.j1 > sp.j0 ? static_cast<int>((sp.j1 - sp.j0 + kTile - 1) / kTile) : 0;
  return sp;
}

// Entry j of the concatenated list as raw words, loaded without waiting for them (the index
// threads load a tile ahead and decode an iteration later): int64 entries as two words, int32 ones
// the same word twice; kind 0 past the share, 1 prefix, 2 extend.
struct RawIndex {
  int lo = 0, hi = 0, kind = 0;
};
__device__ __forceinline__ RawIndex load_raw_index(const AttnParams& p, const TokenSpans& sp, long long j) {
  RawIndex r;
  if (j < sp.j1) {
    const bool pre = j < sp.np;
    const int s = pre ? 0 : 1;
    const bool wide = p.idx_dt[s] == kI64;
    const char* a = static_cast<const char*>(p.idx[s]) + (pre ? sp.pb + j : sp.eb + j - sp.np) * p.idx_s[s] * (wide ? 8 : 4);
    r.lo = __ldg(reinterpret_cast<const int*>(a));
    r.hi = __ldg(reinterpret_cast<const int*>(a + (wide ? 4 : 0)));
    r.kind = pre ? 1 : 2;
  }
  return r;
}
// The entry's row in its source, or -1 when masked: past the share, negative (C.1 item 3), or too
// large for the int32 row codes.
__device__ __forceinline__ long long raw_index_row(const AttnParams& p, const RawIndex& r) {
  if (r.kind == 0) return -1;
  const bool wide = p.idx_dt[r.kind - 1] == kI64;
  const long long v = wide ? static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(r.hi)) << 32) |
                                                    static_cast<unsigned>(r.lo))
                           : static_cast<long long>(r.lo);
  return v >= 0 && v <= 0x7ffffffdLL ? v : -1;
}

// The row-address table entry of the wgmma and small-T decode kernels: the selected row's 64-bit
// global byte address with flag bits (bit 0 live, bit 1 extend row; rows are 16-byte aligned, so the
// low bits are free), or 0 when masked (past the share, negative, too large).
template <class T>
__device__ __forceinline__ unsigned long long row_address(const AttnParams& p, const RawIndex& r) {
  const long long v = raw_index_row(p, r);
  if (v < 0) return 0ull;
  const bool ext = r.kind == 2;
  const T* base = static_cast<const T*>(ext ? p.src[1] : p.src[0]);
  const long long sr = ext ? p.src_sr[1] : p.src_sr[0];
  return reinterpret_cast<unsigned long long>(base + v * sr) | (ext ? 3ull : 1ull);
}

__device__ __forceinline__ float sink_of(const AttnParams& p, long long h) {
  return h < p.H ? ld_float(p.sink, p.sink_dt, h * p.sink_s) + p.shift : -pos_inf();
}

}  // namespace kparity::kernels::sparse::dev
