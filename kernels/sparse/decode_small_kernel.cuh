#pragma once
// The small-T sparse/paged_decode kernel (issue 31; SparseTuning::variant 3): flash-decoding with
// head groups of HG = 16 * RB heads, so that T = 1..8 spreads over the SMs. One CTA = one token x
// HG heads x one key-range split (blockIdx.x as token_rows.cuh's cta_coords); the splits' fp32
// partials go to the caller's workspace and the wide combine kernel (combine_kernel.cuh) merges
// them in split order. Same function as sparse_attn_kernel (spec sparse_attention.md C.1-C.4), same
// rounding points (products exact in fp32, -FLT_MAX running-max seed, masked keys at -inf, exp2 with
// log2 e folded at the subtraction, weights rounded to the storage dtype for P.V only, the
// denominator from unrounded weights, the sink folded in once), another accumulation order; the
// a-priori bound of reference/sparse/error_bound.cpp covers it (tiles of 64 keys: at most
// ceil(n / 64) + 2 exp2f factors per weight, fewer than the ceil(n / 32) + 3 it allows; logits from
// D-slice partials summed in a fixed order, D + 8 additions at most).
//
// Why another kernel: at T = 1 the 64-head kernels make T * ceil(H / 64) * splits CTAs that each
// load Q (64 KB at H = 64), a 64-key tile (64 KB) and store 128 KB of partials from one SM. With
// 16- or 32-head groups the same SM count carries about half those bytes, and the grid reaches the
// SM count at T = 1 with one tile per CTA. Layout, 8 warps (256 threads):
//  - Q never touches shared memory: warp w keeps the A fragments of its D slice [64 w, 64 w + 64)
//    for all HG rows in registers (16 per row block of 16 heads).
//  - S = Q.K^T per D slice (warp w: HG x 64 keys over its 64 columns, K read once per CTA), the
//    slices' partials summed through shared memory in slice order by the warp that owns those keys
//    (warp w: keys 8 w .. 8 w + 7), so the row sums cost 2 x 32 KB of shared traffic per row block,
//    not 8 x that (every warp summing every key, as the 64-head mma.sync kernel's D slices do).
//  - The owning warp takes its keys through the softmax: the tile's row max from the 8 warps' maxima,
//    the weights, their row sums (8 partials, summed in warp order by every warp: the same bits
//    everywhere) and P rounded to the storage dtype in shared memory.
//  - O += P.V: warp w owns O's columns [64 w, 64 w + 64) for all HG rows (32 * RB registers).
// KV tiles of 64 rows x 512 columns (pitch 520 elements: ldmatrix rows on distinct banks), two
// stages, gathered either with 16-byte cp.async (kBulk false) or one bulk copy per row on an
// mbarrier per stage (kBulk true, bulk_copy.cuh). Rows and their flags come from the row-address
// table of the wgmma kernel (64-bit global address, bit 0 live, bit 1 extend).
#include <cfloat>
#include <cstdint>

#include <cooperative_groups.h>

#include "common/limits.hpp"
#include "common/pdl.cuh"
#include "common/bulk_copy.cuh"
#include "sparse/mma.cuh"
#include "sparse/params.hpp"
#include "sparse/softmax.cuh"
#include "sparse/token_rows.cuh"

namespace kparity::kernels::sparse {

inline constexpr int kDsThreads = 256, kDsWarps = 8, kDsBK = 64, kDsStages = 2, kDsSlots = 4;
inline constexpr int kDsD = 512;                 // D padded to this
inline constexpr int kDsSlice = kDsD / kDsWarps;  // D columns per warp
inline constexpr int kDsLd = kDsD + 8;           // KV row pitch (elements): 16 bytes of pad
inline constexpr int kDsXLd = kDsBK + 8;         // S-partial row pitch (floats): conflict-free float2 access
inline constexpr int kDsPLd = kDsBK + 8;         // P row pitch (elements): 144 bytes, ldmatrix-aligned
static_assert(kDsBK == kKeysPerTileSmall, "the decode launcher sizes splits in these tiles (params.hpp)");
static_assert(kDsSlice == 64 && kDsBK == 8 * kDsWarps, "warp w: D slice of 64 columns, keys 8w..8w+7");

// Shared-memory layout for HG = 16 * RB heads (16-byte element types: bf16 / f16).
template <int RB>
struct DsGeo {
  static constexpr int HG = 16 * RB;
  static constexpr std::size_t kv_bytes = std::size_t(kDsStages) * kDsBK * kDsLd * 2;
  static constexpr std::size_t x_bytes = std::size_t(kDsWarps) * HG * kDsXLd * 4;
  static constexpr std::size_t p_bytes = std::size_t(HG) * kDsPLd * 2;
  static constexpr std::size_t stat_bytes = 2 * std::size_t(kDsWarps) * HG * 4;
  static constexpr std::size_t addr_bytes = std::size_t(kDsSlots) * kDsBK * 8;
  static constexpr std::size_t bar_bytes = 16 * ((kDsStages * 8 + 15) / 16);
  static constexpr std::size_t smem = kv_bytes + x_bytes + p_bytes + stat_bytes + addr_bytes + bar_bytes;
  // The cluster merge stages the rows [HG][kDsD] and their (max, sum) where the KV tiles were.
  static_assert(std::size_t(HG) * (kDsD + 2) * 4 <= kv_bytes, "the cluster merge's rows fit the KV stages");
  static_assert(kv_bytes % 16 == 0 && x_bytes % 16 == 0 && p_bytes % 16 == 0 && stat_bytes % 16 == 0,
                "every region starts 16-byte aligned (ldmatrix rows, 16-byte copies, mbarriers)");
};

namespace dev {

using kernels::dev::bulk_g2s;
using kernels::dev::fence_proxy_async_smem;
using kernels::dev::mbar_arrive_expect_tx;
using kernels::dev::mbar_init;
using kernels::dev::mbar_init_fence;
using kernels::dev::mbar_wait;

template <class T>
__device__ __forceinline__ std::uint32_t raw_bits(T v) {
  return static_cast<std::uint32_t>(*reinterpret_cast<const unsigned short*>(&v));
}

// Element (h, d) of token t's q as raw 16 bits, 0 past H or D (zero rows and columns add nothing to S).
template <class T>
__device__ __forceinline__ std::uint32_t q_bits(const AttnParams& p, long long t, long long h, long long d) {
  if (h >= p.H || d >= p.D) return 0u;
  return raw_bits(static_cast<const T*>(p.q)[t * p.q_st + h * p.q_sh + d * p.q_sd]);
}

}  // namespace dev

namespace dev {

// The split-K merge inside a thread-block cluster (SparseTuning::decode_combine 2, AttnParams::cluster):
// the p.splits CTAs of one (token, head group) are one cluster (split = rank: cta_coords takes the
// split from blockIdx.x % splits and the cluster spans splits consecutive CTAs). Each CTA has staged
// its unnormalised rows o [HG][kDsD] and their (max, sum) in its own shared memory; CTA `rank` merges
// rows rank, rank + S, ... reading every split's copy through distributed shared memory, in split
// order, with the combine kernel's arithmetic (combine_kernel.cuh): M = max_s m_s, w_s = exp2f((m_s -
// M) log2 e), per channel acc = fmaf(o_s, w_s, acc) over s = 0 .. S-1 from 0, then the sink folded in
// once (RowFinal). Only the row sum l = sum_s l_s w_s is added in split order here (the kernel's is
// a fixed shuffle tree): another fixed order of the same S terms, which the a-priori bound counts
// the same way. No workspace and no second launch: the partials never leave the cluster.
template <class T, int HG>
__device__ __forceinline__ void cluster_merge(const AttnParams& p, const float* sO, const float* sML, long long t,
                                              long long h0) {
  namespace cg = cooperative_groups;
  cg::cluster_group cl = cg::this_cluster();
  const int S = static_cast<int>(p.splits), rank = static_cast<int>(cl.block_rank()), tid = threadIdx.x;
  const long long D = p.D;
  const float* o_of[kMaxClusterSplits];
  const float* ml_of[kMaxClusterSplits];
#pragma unroll
  for (int s = 0; s < kMaxClusterSplits; ++s)
    if (s < S) o_of[s] = cl.map_shared_rank(sO, s), ml_of[s] = cl.map_shared_rank(sML, s);
  for (int row = rank; row < HG; row += S) {
    const long long h = h0 + row;
    if (h >= p.H) break;
    float w[kMaxClusterSplits];
    float M = -FLT_MAX;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < S) M = fmaxf(M, ml_of[s][2 * row]);
    float l = 0.f;
#pragma unroll
    for (int s = 0; s < kMaxClusterSplits; ++s)
      if (s < S) {
        w[s] = exp2f((ml_of[s][2 * row] - M) * kLog2e);
        l = __fadd_rn(l, __fmul_rn(ml_of[s][2 * row + 1], w[s]));
      }
    const RowFinal f = finalize(sink_of(p, h), M, l);
    T* out = static_cast<T*>(p.out) + t * p.out_st + h * p.out_sh;
    for (long long d = tid; d < D; d += kDsThreads) {
      float acc = 0.f;
#pragma unroll
      for (int s = 0; s < kMaxClusterSplits; ++s)
        if (s < S) acc = fmaf(o_of[s][row * kDsD + d], w[s], acc);
      out[d * p.out_sd] = MmaOp<T>::from_f(f(acc));
    }
    if (p.has_lse && tid == 0) p.lse[t * p.lse_st + h * p.lse_sh] = f.lse;
  }
}

}  // namespace dev

template <class T, int RB, bool kBulk, bool kCluster = false>
__global__ void __launch_bounds__(kDsThreads, 1) sparse_decode_small_kernel(const AttnParams p) {
  using G = DsGeo<RB>;
  using Op = dev::MmaOp<T>;
  constexpr int HG = G::HG;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sKV = reinterpret_cast<T*>(smem);
  float* sX = reinterpret_cast<float*>(smem + G::kv_bytes);
  T* sP = reinterpret_cast<T*>(smem + G::kv_bytes + G::x_bytes);
  float* sMax = reinterpret_cast<float*>(smem + G::kv_bytes + G::x_bytes + G::p_bytes);
  float* sSum = sMax + kDsWarps * HG;
  unsigned long long* sAddr = reinterpret_cast<unsigned long long*>(sMax + 2 * kDsWarps * HG);
  unsigned long long* sBar = sAddr + kDsSlots * kDsBK;

  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, g = lane >> 2, c = lane & 3;
  const dev::CtaCoords cta = dev::cta_coords(p, HG);
  const long long t = cta.t, h0 = cta.h0, split = cta.split;
  const long long D = p.D;
  const dev::TokenSpans sp = dev::token_spans<kDsBK>(p, t, split);
  const int ntiles = sp.ntiles;

  // Threads 0-63 load one index entry a tile ahead and decode it into slot k % 4 an iteration later
  // (the wgmma kernel's scheme): tile k's addresses are written at iteration k - 2, read up to k.
  auto load_raw = [&](int k) { return dev::load_raw_index(p, sp, sp.j0 + static_cast<long long>(k) * kDsBK + tid); };
  auto decode = [&](const dev::RawIndex& r, int k) { sAddr[(k % kDsSlots) * kDsBK + tid] = dev::row_address<T>(p, r); };

  const std::uint32_t row_bytes = static_cast<std::uint32_t>(D) * 2u;  // D % 8 == 0 (the launcher's vec_kv)
  auto issue = [&](int k) {
    const unsigned long long* rows = sAddr + (k % kDsSlots) * kDsBK;
    T* stage = sKV + (k & 1) * kDsBK * kDsLd;
    if constexpr (kBulk) {
      if (tid < kDsBK) {
        const unsigned long long a = rows[tid];
        const std::uint32_t bar = dev::smem_u32(sBar + (k & 1));
        T* dst = stage + tid * kDsLd;
        dev::fence_proxy_async_smem();  // the block's ldmatrix reads of this stage (before the barrier) first
        dev::mbar_arrive_expect_tx(bar, (a & 1ull) ? row_bytes : 0u);
        if (a & 1ull) {
          dev::bulk_g2s(dev::smem_u32(dst), a & ~3ull, row_bytes, bar);
        } else {  // masked row: zeros (a stale row could hold inf, and 0 * inf is NaN in P.V)
          for (long long cc = 0; cc * 8 < D; ++cc) reinterpret_cast<uint4*>(dst)[cc] = make_uint4(0u, 0u, 0u, 0u);
        }
      }
    } else {
      // Thread -> 16-byte chunk cc of rows rq, rq + 4, ...: a warp copies half a row, coalesced.
      const int cc = tid & (kDsD / 8 - 1), rq = tid >> 6;
      const bool col_ok = cc * 8 < D;
      const unsigned long long dummy = reinterpret_cast<unsigned long long>(p.q);  // not read: src-size 0
#pragma unroll
      for (int i = 0; i < kDsBK / 4; ++i) {
        const int r = rq + 4 * i;
        const unsigned long long a = rows[r];
        const bool valid = (a & 1ull) != 0 && col_ok;
        dev::cp_async16_at(dev::smem_u32(stage + r * kDsLd + cc * 8), valid ? (a & ~3ull) + 16ull * cc : dummy,
                           valid ? 16 : 0);
      }
    }
  };

  if constexpr (kBulk) {
    if (tid == 0) {
      for (int s = 0; s < kDsStages; ++s) dev::mbar_init(dev::smem_u32(sBar + s), kDsBK);
      dev::mbar_init_fence();
    }
    // Columns past D are never copied (a bulk copy moves the row's 2D bytes): zeros once, so the zero
    // columns of Q meet finite values.
    if (D < kDsD)
      for (int i = tid; i < kDsStages * kDsBK * (kDsD / 8); i += kDsThreads) {
        const int r = i / (kDsD / 8), cc = i % (kDsD / 8);
        if (cc * 8 >= D) *reinterpret_cast<uint4*>(sKV + r * kDsLd + cc * 8) = make_uint4(0u, 0u, 0u, 0u);
      }
  }
  dev::RawIndex raw;
  if (tid < kDsBK) {
    decode(load_raw(0), 0);
    decode(load_raw(1), 1);
    raw = load_raw(2);
  }
  // Q's A fragments (m16n8k16 row-major A: reg 0 row g cols 2c, 2c + 1; reg 1 row g + 8; regs 2, 3
  // the same rows 8 columns on), for the warp's D slice, every row block, its 4 k-steps.
  std::uint32_t qa[RB][4][4];
#pragma unroll
  for (int rb = 0; rb < RB; ++rb)
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const long long r0 = h0 + rb * 16 + g, col = warp * kDsSlice + kk * 16 + 2 * c;
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const long long r = r0 + (q & 1) * 8, d = col + (q >> 1) * 8;
        qa[rb][kk][q] = dev::q_bits<T>(p, t, r, d) | (dev::q_bits<T>(p, t, r, d + 1) << 16);
      }
    }
  __syncthreads();  // addresses of tiles 0 and 1 (and the barriers, the zero columns) visible
  if (ntiles > 0) issue(0);
  if constexpr (!kBulk) dev::cp_async_commit();
  if (ntiles > 1) issue(1);
  if constexpr (!kBulk) dev::cp_async_commit();

  float o[RB][8][4];
#pragma unroll
  for (int rb = 0; rb < RB; ++rb)
#pragma unroll
    for (int n = 0; n < 8; ++n) o[rb][n][0] = o[rb][n][1] = o[rb][n][2] = o[rb][n][3] = 0.f;
  // Running max and sum of rows rb * 16 + g (index 0) and + 8 (index 1): the same in every warp.
  float m[RB][2], l[RB][2];
#pragma unroll
  for (int rb = 0; rb < RB; ++rb) m[rb][0] = m[rb][1] = -FLT_MAX, l[rb][0] = l[rb][1] = 0.f;
  const float scale = p.scale, shift = p.shift;
  const int krow = (lane & 7) + ((lane >> 4) & 1) * 8, kcol = ((lane >> 3) & 1) * 8;
  const int prow = (lane & 7) + ((lane >> 3) & 1) * 8, pcol = ((lane >> 4) & 1) * 8;
  const int vrow = (lane & 7) + ((lane >> 3) & 1) * 8, vcol = ((lane >> 4) & 1) * 8;

  for (int it = 0; it < ntiles; ++it) {
    if constexpr (kBulk) {
      dev::mbar_wait(dev::smem_u32(sBar + (it & 1)), static_cast<std::uint32_t>((it >> 1) & 1));
    } else {
      if (it == 0)
        dev::cp_async_wait<1>();  // tile 0; tile 1 may still be in flight
      else
        dev::cp_async_wait<0>();
    }
    __syncthreads();  // tile `it` landed everywhere; every warp is done with the other stage and with sX, sP
    if (it >= 1 && it + 1 < ntiles) issue(it + 1);
    if constexpr (!kBulk) dev::cp_async_commit();
    if (tid < kDsBK && it + 2 < ntiles) {
      decode(raw, it + 2);
      raw = load_raw(it + 3);
    }
    const T* sK = sKV + (it & 1) * kDsBK * kDsLd;

    // S partial over the warp's D slice: s[rb][j] is keys 8j .. 8j + 7 (m16n8 accumulator layout).
    float s[RB][8][4];
#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
#pragma unroll
      for (int j = 0; j < 8; ++j) s[rb][j][0] = s[rb][j][1] = s[rb][j][2] = s[rb][j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const int k0 = warp * kDsSlice + kk * 16;
#pragma unroll
      for (int np2 = 0; np2 < kDsBK / 16; ++np2) {
        std::uint32_t b[4];
        dev::ldsm_x4(b, sK + (np2 * 16 + krow) * kDsLd + k0 + kcol);
#pragma unroll
        for (int rb = 0; rb < RB; ++rb) {
          Op::run(s[rb][2 * np2], qa[rb][kk], b[0], b[1]);
          Op::run(s[rb][2 * np2 + 1], qa[rb][kk], b[2], b[3]);
        }
      }
    }
#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        float* dst = sX + (warp * HG + rb * 16 + g) * kDsXLd + 8 * j + 2 * c;
        *reinterpret_cast<float2*>(dst) = make_float2(s[rb][j][0], s[rb][j][1]);
        *reinterpret_cast<float2*>(dst + 8 * kDsXLd) = make_float2(s[rb][j][2], s[rb][j][3]);
      }
    __syncthreads();  // every slice's partial in sX

    // This warp's keys 8 warp + 2c + {0, 1}: the slices summed in slice order, then the logits.
    const unsigned* flags = reinterpret_cast<const unsigned*>(sAddr + (it % kDsSlots) * kDsBK);
    const int key = 8 * warp + 2 * c;
    bool live[2], ext[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const unsigned f = flags[2 * (key + e)];
      live[e] = (f & 1u) != 0, ext[e] = (f & 2u) != 0;
    }
    float x[RB][4];
#pragma unroll
    for (int rb = 0; rb < RB; ++rb) {
      x[rb][0] = x[rb][1] = x[rb][2] = x[rb][3] = 0.f;
#pragma unroll
      for (int w = 0; w < kDsWarps; ++w) {
        const float* src = sX + (w * HG + rb * 16 + g) * kDsXLd + key;
        const float2 u = *reinterpret_cast<const float2*>(src);
        const float2 v = *reinterpret_cast<const float2*>(src + 8 * kDsXLd);
        x[rb][0] += u.x, x[rb][1] += u.y, x[rb][2] += v.x, x[rb][3] += v.y;
      }
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float add = ext[e] ? shift : 0.f;
        x[rb][e] = live[e] ? x[rb][e] * scale + add : -dev::pos_inf();
        x[rb][e + 2] = live[e] ? x[rb][e + 2] * scale + add : -dev::pos_inf();
      }
      const float mx0 = dev::quad_max(fmaxf(x[rb][0], x[rb][1])), mx1 = dev::quad_max(fmaxf(x[rb][2], x[rb][3]));
      if (c == 0) sMax[warp * HG + rb * 16 + g] = mx0, sMax[warp * HG + rb * 16 + g + 8] = mx1;
    }
    __syncthreads();  // the warps' maxima in sMax

    // The tile's row max (max is exact in any order), the rescale factors, this warp's weights.
    float a[RB][2];
#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float mx = -dev::pos_inf();
#pragma unroll
        for (int w = 0; w < kDsWarps; ++w) mx = fmaxf(mx, sMax[w * HG + rb * 16 + g + 8 * i]);
        const float mn = fmaxf(m[rb][i], mx);
        a[rb][i] = exp2f((m[rb][i] - mn) * kLog2e);
        m[rb][i] = mn;
      }
#pragma unroll
    for (int rb = 0; rb < RB; ++rb) {
#pragma unroll
      for (int e = 0; e < 4; ++e) x[rb][e] = exp2f((x[rb][e] - m[rb][e >> 1]) * kLog2e);
      const float rs0 = dev::quad_sum(x[rb][0] + x[rb][1]), rs1 = dev::quad_sum(x[rb][2] + x[rb][3]);
      if (c == 0) sSum[warp * HG + rb * 16 + g] = rs0, sSum[warp * HG + rb * 16 + g + 8] = rs1;
      T* pr = sP + (rb * 16 + g) * kDsPLd + key;
      *reinterpret_cast<std::uint32_t*>(pr) = Op::pack(x[rb][0], x[rb][1]);  // storage-dtype weights for P.V
      *reinterpret_cast<std::uint32_t*>(pr + 8 * kDsPLd) = Op::pack(x[rb][2], x[rb][3]);
    }
    __syncthreads();  // P and the warps' row sums in shared memory

#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        float rs = 0.f;  // unrounded weights in the denominator (C.4 item 4), summed in warp order
#pragma unroll
        for (int w = 0; w < kDsWarps; ++w) rs += sSum[w * HG + rb * 16 + g + 8 * i];
        l[rb][i] = l[rb][i] * a[rb][i] + rs;
      }
#pragma unroll
    for (int rb = 0; rb < RB; ++rb)
      dev::rescale_rows<8>([&](int n, int e) -> float& { return o[rb][n][e]; }, make_float2(a[rb][0], a[rb][1]));
#pragma unroll
    for (int kk = 0; kk < kDsBK / 16; ++kk) {
      std::uint32_t pa[RB][4];
#pragma unroll
      for (int rb = 0; rb < RB; ++rb) dev::ldsm_x4(pa[rb], sP + (rb * 16 + prow) * kDsPLd + kk * 16 + pcol);
#pragma unroll
      for (int n2 = 0; n2 < kDsSlice / 16; ++n2) {
        std::uint32_t b[4];
        dev::ldsm_x4_t(b, sK + (kk * 16 + vrow) * kDsLd + warp * kDsSlice + n2 * 16 + vcol);
#pragma unroll
        for (int rb = 0; rb < RB; ++rb) {
          Op::run(o[rb][2 * n2], pa[rb], b[0], b[1]);
          Op::run(o[rb][2 * n2 + 1], pa[rb], b[2], b[3]);
        }
      }
    }
  }
  if constexpr (!kBulk) dev::cp_async_wait<0>();

  const int cbase = warp * kDsSlice + 2 * c;
  const bool writes_stats = warp == 0 && c == 0;  // one thread per row
  if constexpr (kCluster) {
    // The rows and their (max, sum) staged where the KV tiles were (every warp is past its last P.V
    // after the barrier), then merged across the cluster (dev::cluster_merge). The second cluster
    // barrier keeps each CTA's shared memory alive until every rank has read it.
    namespace cg = cooperative_groups;
    float* sO = reinterpret_cast<float*>(smem);
    float* sML = sO + HG * kDsD;
    __syncthreads();
#pragma unroll
    for (int rb = 0; rb < RB; ++rb) {
      const int r0 = rb * 16 + g;
#pragma unroll
      for (int n = 0; n < 8; ++n) {
        const int col = cbase + 8 * n;
        *reinterpret_cast<float2*>(sO + r0 * kDsD + col) = make_float2(o[rb][n][0], o[rb][n][1]);
        *reinterpret_cast<float2*>(sO + (r0 + 8) * kDsD + col) = make_float2(o[rb][n][2], o[rb][n][3]);
      }
      if (writes_stats) {
        sML[2 * r0] = m[rb][0], sML[2 * r0 + 1] = l[rb][0];
        sML[2 * (r0 + 8)] = m[rb][1], sML[2 * (r0 + 8) + 1] = l[rb][1];
      }
    }
    cg::this_cluster().sync();
    dev::cluster_merge<T, HG>(p, sO, sML, t, h0);
    cg::this_cluster().sync();
  } else {
#pragma unroll
  for (int rb = 0; rb < RB; ++rb) {
    const long long hr0 = h0 + rb * 16 + g, hr1 = hr0 + 8;
    const auto acc = [&](int n, int e) -> float& { return o[rb][n][e]; };
    if (p.splits > 1) {  // split-K: raw partials, the combine kernel folds the sink in
      dev::RowPairStats st;
      st.m0 = m[rb][0], st.m1 = m[rb][1], st.l0 = l[rb][0], st.l1 = l[rb][1];
      dev::store_partials<8>(p, acc, st, split, t, hr0, cbase, D, writes_stats);
      continue;
    }
    const dev::RowFinal f0 = dev::finalize(dev::sink_of(p, hr0), m[rb][0], l[rb][0]);
    const dev::RowFinal f1 = dev::finalize(dev::sink_of(p, hr1), m[rb][1], l[rb][1]);
    T* out = static_cast<T*>(p.out) + t * p.out_st;
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      const long long col = cbase + 8 * n;  // D is even: col < D covers col + 1
      if (col >= D) continue;
      const float2 v0 = f0(o[rb][n][0], o[rb][n][1]), v1 = f1(o[rb][n][2], o[rb][n][3]);
      if (hr0 < p.H) {
        out[hr0 * p.out_sh + col * p.out_sd] = Op::from_f(v0.x);
        out[hr0 * p.out_sh + (col + 1) * p.out_sd] = Op::from_f(v0.y);
      }
      if (hr1 < p.H) {
        out[hr1 * p.out_sh + col * p.out_sd] = Op::from_f(v1.x);
        out[hr1 * p.out_sh + (col + 1) * p.out_sd] = Op::from_f(v1.y);
      }
    }
    if (p.has_lse && writes_stats) dev::store_lse(p, t, hr0, f0.lse, f1.lse);
  }
  }  // kCluster
}

}  // namespace kparity::kernels::sparse
