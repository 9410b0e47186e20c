#pragma once
// wgmma path of the sparse attention kernel (sm_90a): D padded to 512, 64 heads per CTA, q and the
// KV sources 16-byte loadable. Same function as sparse_attn_kernel (spec sparse_attention.md C.1-C.4),
// same rounding points, another accumulation order.
//
// One CTA = one token x 64 heads (x one key range under split-K), 256 threads = 2 warpgroups.
// Q (64 x 512) sits in shared memory for the whole CTA; KV rows are gathered 64 at a time with
// 16-byte cp.async into a 128-byte-swizzled tile, two stages (64 KB each; 3 x 64 KB + codes, + 32 KB
// of S partials for kSplitS, fit the 227 KB limit). Per tile the warpgroups compute S = Q.K^T
// (64 x 64, wgmma m64n64k16, A and B from shared memory): either each the whole S (32 k-steps,
// redundant, 1.5x the counted FLOPs, no exchange) or, with kSplitS, each the partial over its D half
// (16 k-steps) summed through shared memory. Both ways the two warpgroups hold bitwise-identical S
// and softmax statistics. Then warpgroup w adds P.V for its half of D (m64n256k16, P from registers,
// V = the same tile read N-major). O is 64 x 256 fp32 per warpgroup = 128 registers per thread.
//
// Shared layout of a 64-row x 512-column tile: 8 blocks of 64 columns (8 KB each); in a block, row r
// is 128 bytes at r * 128 and its 16-byte chunk c sits at chunk position c ^ (r % 8) (Swizzle<3,4,3>,
// tiles 1024-byte aligned). K-major operand descriptors (Q, K): SBO = 1024 (8-row groups), a k-step
// of 16 columns advances the start by 32 bytes inside the swizzled row. N-major descriptor (V):
// LBO = 8192 (next 64 columns), SBO = 1024 (next 8 keys).
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "sparse/attn_kernel.cuh"
#include "sparse/wgmma_ops.cuh"

namespace kparity::kernels::sparse {

inline constexpr int kWgThreads = 256, kWgBK = 64, kWgSlots = 4;
inline constexpr std::uint32_t kWgTile = 64u * 1024u;  // 64 rows x 512 columns x 2 bytes
inline constexpr int kWgOutLd = 512 + 8;                // output staging row (elements), conflict-free
inline constexpr std::size_t kWgSmem = 1024 + 3 * std::size_t(kWgTile) + std::size_t(kWgSlots) * kWgBK * 4;
inline constexpr std::size_t kWgSplitSmem = kWgSmem + 2 * 64 * 64 * 4;  // + the two partial-S buffers
template <bool kSplitS>
inline constexpr std::size_t wg_smem() { return kSplitS ? kWgSplitSmem : kWgSmem; }

namespace dev {

__device__ __forceinline__ std::uint32_t sw_off(int r, int c) {
  return static_cast<std::uint32_t>((c >> 3) * 8192 + r * 128 + (((c & 7) ^ (r & 7)) << 4));
}
__device__ __forceinline__ std::uint64_t desc_sw128(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((addr & 0x3FFFFu) >> 4) | (static_cast<std::uint64_t>(lbo >> 4) << 16) |
         (static_cast<std::uint64_t>(sbo >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wg_wait0() { asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory"); }
__device__ __forceinline__ void fence_proxy_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Pins accumulator registers at this point: reads after a wgmma wait stay after it.
template <int N>
__device__ __forceinline__ void pin(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

}  // namespace dev

// kSplitS: warpgroup w computes S's partial over D half w (16 k-steps instead of 32) and the two
// partials are summed through shared memory (own + other: IEEE addition commutes, so both warpgroups
// still hold bitwise-identical S). Halves the QK tensor work and its shared-memory reads for one
// more barrier and 64 KB of exchange traffic per tile.
template <class T, bool kSplitS>
__global__ void __launch_bounds__(kWgThreads, 1) sparse_attn_wg_kernel(const AttnParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using W = dev::Wgmma<std::is_same_v<T, __nv_bfloat16>>;
  using Op = dev::MmaOp<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const std::uint32_t raw_s = dev::smem_u32(smem_raw);
  const std::uint32_t pad = ((raw_s + 1023u) & ~1023u) - raw_s;
  unsigned char* sQ = smem_raw + pad;
  unsigned char* sKV = sQ + kWgTile;
  int* sCode = reinterpret_cast<int*>(sQ + 3 * kWgTile);
  float4* sX = reinterpret_cast<float4*>(sCode + kWgSlots * kWgBK);  // kSplitS: [2][8][128] float4
  const std::uint32_t q_s = raw_s + pad, kv_s = q_s + kWgTile;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wq = warp & 3;
  long long bid = blockIdx.x;
  const long long split = bid % p.splits;
  bid /= p.splits;
  const long long h0 = (bid % p.n_head_tiles) * 64, t = bid / p.n_head_tiles;
  const long long D = p.D;

  const long long pb = dev::ld_int(p.ptr[0], p.ptr_dt[0], t * p.ptr_s[0]);
  const long long np = max(0LL, dev::ld_int(p.ptr[0], p.ptr_dt[0], (t + 1) * p.ptr_s[0]) - pb);
  long long eb = 0, ne = 0;
  if (p.ptr[1] != nullptr) {
    eb = dev::ld_int(p.ptr[1], p.ptr_dt[1], t * p.ptr_s[1]);
    ne = max(0LL, dev::ld_int(p.ptr[1], p.ptr_dt[1], (t + 1) * p.ptr_s[1]) - eb);
  }
  const long long n_all = np + ne;
  const long long per = ((n_all + kWgBK - 1) / kWgBK + p.splits - 1) / p.splits * kWgBK;
  const long long j0 = split * per, j1 = min(n_all, j0 + per);
  const int ntiles = j1 > j0 ? static_cast<int>((j1 - j0 + kWgBK - 1) / kWgBK) : 0;

  // Threads 0-63 (warps 0-1) load one index entry each a tile ahead and decode it into shared
  // memory an iteration later (row codes as in sparse_attn_kernel: >= 0 prefix row, <= -2 extend
  // row -code - 2, -1 masked). Slot k % 4 holds tile k's codes from iteration k - 2 to iteration k.
  struct Raw { int lo = 0, hi = 0, kind = 0; };
  auto load_raw = [&](int k) {
    Raw r;
    const long long j = j0 + static_cast<long long>(k) * kWgBK + tid;
    if (j < j1) {
      const bool pre = j < np;
      const int s = pre ? 0 : 1;
      const bool wide = p.idx_dt[s] == kSpI64;
      const char* a = static_cast<const char*>(p.idx[s]) + (pre ? pb + j : eb + j - np) * p.idx_s[s] * (wide ? 8 : 4);
      r.lo = __ldg(reinterpret_cast<const int*>(a));
      r.hi = __ldg(reinterpret_cast<const int*>(a + (wide ? 4 : 0)));
      r.kind = pre ? 1 : 2;
    }
    return r;
  };
  auto decode = [&](const Raw& r, int k) {
    int code = -1;
    if (r.kind != 0) {
      const bool wide = p.idx_dt[r.kind - 1] == kSpI64;
      const long long v = wide ? static_cast<long long>((static_cast<unsigned long long>(static_cast<unsigned>(r.hi)) << 32) |
                                                        static_cast<unsigned>(r.lo))
                               : static_cast<long long>(r.lo);
      if (v >= 0 && v <= 0x7ffffffdLL) code = r.kind == 1 ? static_cast<int>(v) : static_cast<int>(-v - 2);
    }
    sCode[(k % kWgSlots) * kWgBK + tid] = code;
  };

  // Each thread copies one 16-byte column chunk of 16 rows (rows rq, rq + 4, ...): a warp covers half
  // a 1 KB row, coalesced. Masked rows and chunks past D are written as zeros (src-size 0).
  const int cc = tid & 63, rq = tid >> 6;
  const bool col_ok = cc * 8 < D;
  auto issue = [&](int k) {
    const int* codes = sCode + (k % kWgSlots) * kWgBK;
    unsigned char* dst = sKV + (k & 1) * kWgTile;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      const int r = rq + 4 * i, code = codes[r];
      const bool valid = code != -1 && col_ok;
      const T* src = static_cast<const T*>(p.q);  // not read when src-size is 0
      if (valid) {
        const int s = code >= 0 ? 0 : 1;
        const long long row = code >= 0 ? code : -static_cast<long long>(code) - 2;
        src = static_cast<const T*>(p.src[s]) + row * p.src_sr[s] + cc * 8;  // vec_kv: unit column stride
      }
      dev::cp_async16(dst + dev::sw_off(r, cc), src, valid ? 16 : 0);
    }
  };

  Raw raw;
  if (tid < kWgBK) {
    decode(load_raw(0), 0);
    decode(load_raw(1), 1);
    raw = load_raw(2);
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) {  // Q tile: heads past H and channels past D are zeros
    const int r = rq + 4 * i;
    const bool valid = h0 + r < p.H && col_ok;
    const T* src = valid ? static_cast<const T*>(p.q) + t * p.q_st + (h0 + r) * p.q_sh + cc * 8 : static_cast<const T*>(p.q);
    dev::cp_async16(sQ + dev::sw_off(r, cc), src, valid ? 16 : 0);
  }
  __syncthreads();  // codes of tiles 0 and 1 visible
  if (ntiles > 0) issue(0);
  dev::cp_async_commit();

  float o[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.f;
  float m0 = -FLT_MAX, m1 = -FLT_MAX, l0 = 0.f, l1 = 0.f;  // finite seed: empty sets stay NaN-free
  const float scale = p.scale, shift = p.shift;

  for (int it = 0; it < ntiles; ++it) {
    dev::cp_async_wait<0>();
    dev::fence_proxy_async();  // cp.async (generic proxy) writes -> wgmma (async proxy) reads
    __syncthreads();           // tile `it` landed everywhere; both warpgroups are done with the other stage
    if (it + 1 < ntiles) issue(it + 1);
    dev::cp_async_commit();
    if (tid < kWgBK && it + 2 < ntiles) {
      decode(raw, it + 2);
      raw = load_raw(it + 3);
    }
    const std::uint32_t st_s = kv_s + (it & 1) * kWgTile;

    float s[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) s[i] = 0.f;
    dev::wg_fence();
    constexpr int kSteps = kSplitS ? 16 : 32;
#pragma unroll
    for (int kk = 0; kk < kSteps; ++kk) {
      const int ks = kSplitS ? wg * 16 + kk : kk;
      const std::uint32_t off = (ks >> 2) * 8192 + (ks & 3) * 32;
      W::ss_n64(s, dev::desc_sw128(q_s + off, 16, 1024), dev::desc_sw128(st_s + off, 16, 1024), kk > 0 ? 1 : 0);
    }
    dev::wg_commit();
    dev::wg_wait0();
    dev::pin(s);
    if constexpr (kSplitS) {
      // Thread k of either warpgroup holds the same (row, key) elements: exchange register by register.
      const int k = tid & 127;
      float4* mine = sX + wg * 1024 + k;
#pragma unroll
      for (int i = 0; i < 8; ++i) mine[i * 128] = make_float4(s[4 * i], s[4 * i + 1], s[4 * i + 2], s[4 * i + 3]);
      __syncthreads();
      const float4* other = sX + (1 - wg) * 1024 + k;
#pragma unroll
      for (int i = 0; i < 8; ++i) {
        const float4 v = other[i * 128];
        s[4 * i] += v.x;
        s[4 * i + 1] += v.y;
        s[4 * i + 2] += v.z;
        s[4 * i + 3] += v.w;
      }
    }

    // Softmax on the m64n64 accumulator: s[4j + e] is row wq*16 + lane/4 (e < 2) or + 8 (e >= 2),
    // key 8j + 2(lane % 4) + (e & 1).
    const int* codes = sCode + (it % kWgSlots) * kWgBK;
    float mx0 = -__int_as_float(0x7f800000), mx1 = mx0;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int code = codes[j * 8 + 2 * (lane & 3) + e];
        const float add = code <= -2 ? shift : 0.f;  // replicated_logit_shift: extend rows only (C.1 item 5)
        const bool live = code != -1;
        s[4 * j + e] = live ? s[4 * j + e] * scale + add : -__int_as_float(0x7f800000);
        s[4 * j + 2 + e] = live ? s[4 * j + 2 + e] * scale + add : -__int_as_float(0x7f800000);
        mx0 = fmaxf(mx0, s[4 * j + e]);
        mx1 = fmaxf(mx1, s[4 * j + 2 + e]);
      }
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 1));
    mx0 = fmaxf(mx0, __shfl_xor_sync(0xffffffffu, mx0, 2));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 1));
    mx1 = fmaxf(mx1, __shfl_xor_sync(0xffffffffu, mx1, 2));
    const float mn0 = fmaxf(m0, mx0), mn1 = fmaxf(m1, mx1);
    const float a0 = exp2f((m0 - mn0) * kLog2e), a1 = exp2f((m1 - mn1) * kLog2e);
    m0 = mn0;
    m1 = mn1;
    float rs0 = 0.f, rs1 = 0.f;
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        s[4 * j + e] = exp2f((s[4 * j + e] - mn0) * kLog2e);
        s[4 * j + 2 + e] = exp2f((s[4 * j + 2 + e] - mn1) * kLog2e);
        rs0 += s[4 * j + e];
        rs1 += s[4 * j + 2 + e];
      }
    l0 = l0 * a0 + rs0;  // unrounded weights in the denominator (C.4 item 4)
    l1 = l1 * a1 + rs1;
#pragma unroll
    for (int n = 0; n < 32; ++n) {
      o[4 * n] *= a0;
      o[4 * n + 1] *= a0;
      o[4 * n + 2] *= a1;
      o[4 * n + 3] *= a1;
    }
    std::uint32_t pa[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      pa[kk][0] = Op::pack(s[8 * kk], s[8 * kk + 1]);
      pa[kk][1] = Op::pack(s[8 * kk + 2], s[8 * kk + 3]);
      pa[kk][2] = Op::pack(s[8 * kk + 4], s[8 * kk + 5]);
      pa[kk][3] = Op::pack(s[8 * kk + 6], s[8 * kk + 7]);
    }
    dev::pin(o);
    dev::wg_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      W::rs_n256_tb(o, pa[kk], dev::desc_sw128(st_s + wg * 4 * 8192 + kk * 2048, 8192, 1024));
    dev::wg_commit();
    dev::wg_wait0();
    dev::pin(o);
  }
  dev::cp_async_wait<0>();

  l0 += __shfl_xor_sync(0xffffffffu, l0, 1);
  l0 += __shfl_xor_sync(0xffffffffu, l0, 2);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 1);
  l1 += __shfl_xor_sync(0xffffffffu, l1, 2);
  const int orow = wq * 16 + (lane >> 2);
  const long long hr0 = h0 + orow, hr1 = hr0 + 8;
  const int cbase = wg * 256 + 2 * (lane & 3);

  if (p.ws_acc != nullptr) {  // split-K: raw partials, the combine kernel folds the sink in
    const long long w0 = (split * p.T + t) * p.H + hr0, w1 = w0 + 8;
#pragma unroll
    for (int n = 0; n < 32; ++n)
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long c = cbase + n * 8 + e;
        if (c < D && hr0 < p.H) p.ws_acc[w0 * D + c] = o[4 * n + e];
        if (c < D && hr1 < p.H) p.ws_acc[w1 * D + c] = o[4 * n + 2 + e];
      }
    if (wg == 0 && (lane & 3) == 0) {
      if (hr0 < p.H) p.ws_ml[2 * w0] = m0, p.ws_ml[2 * w0 + 1] = l0;
      if (hr1 < p.H) p.ws_ml[2 * w1] = m1, p.ws_ml[2 * w1 + 1] = l1;
    }
    return;
  }

  float fa0, den0, lse0, fa1, den1, lse1;
  const int k0 = dev::finalize(dev::sink_of(p, hr0), m0, l0, fa0, den0, lse0);
  const int k1 = dev::finalize(dev::sink_of(p, hr1), m1, l1, fa1, den1, lse1);
  __syncthreads();  // every warpgroup is done reading the KV stages: they become the output staging tile
  T* sO = reinterpret_cast<T*>(sKV);
  const float nan = __int_as_float(0x7fc00000);
#pragma unroll
  for (int n = 0; n < 32; ++n) {
    const int c = cbase + n * 8;
    const float v00 = k0 == 0 ? (o[4 * n] * fa0) / den0 : (k0 == 1 ? 0.f : nan);
    const float v01 = k0 == 0 ? (o[4 * n + 1] * fa0) / den0 : (k0 == 1 ? 0.f : nan);
    const float v10 = k1 == 0 ? (o[4 * n + 2] * fa1) / den1 : (k1 == 1 ? 0.f : nan);
    const float v11 = k1 == 0 ? (o[4 * n + 3] * fa1) / den1 : (k1 == 1 ? 0.f : nan);
    *reinterpret_cast<std::uint32_t*>(sO + orow * kWgOutLd + c) = Op::pack(v00, v01);
    *reinterpret_cast<std::uint32_t*>(sO + (orow + 8) * kWgOutLd + c) = Op::pack(v10, v11);
  }
  if (p.lse != nullptr && wg == 0 && (lane & 3) == 0) {
    if (hr0 < p.H) p.lse[t * p.lse_st + hr0 * p.lse_sh] = lse0;
    if (hr1 < p.H) p.lse[t * p.lse_st + hr1 * p.lse_sh] = lse1;
  }
  __syncthreads();
  const long long hn = min(64LL, p.H - h0);
  for (int c = tid; c < 64 * 64; c += kWgThreads) {
    const int r = c >> 6, ch = c & 63;
    if (r >= hn || ch * 8 >= D) continue;
    T* dst = static_cast<T*>(p.out) + t * p.out_st + (h0 + r) * p.out_sh + ch * 8 * p.out_sd;
    const T* src = sO + r * kWgOutLd + ch * 8;
    if (p.vec_out) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(src);
    } else {
      for (int e = 0; e < 8 && ch * 8 + e < D; ++e) dst[e * p.out_sd] = src[e];
    }
  }
#else
  __trap();  // wgmma needs sm_90a (cmake/KparityCuda.cmake's default); other builds: SparseTuning::variant = 1
#endif
}

}  // namespace kparity::kernels::sparse
