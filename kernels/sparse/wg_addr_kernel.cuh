#pragma once
// wgmma split-S kernel with a row-address table (SparseTuning::variant 2, the default where it
// applies; sm_90a). Tiles and shared layouts are described in wg_common.cuh. Compared with a plain
// split-S wgmma loop (bench/results/sparse_2026-11-29.md, variants 2/3 of that day), three changes,
// all in how the KV gather is fed:
//  1. The 64 index threads decode each selected row once into its 64-bit global byte address with
//     two flag bits (bit 0 live, bit 1 extend row; masked rows are 0) in shared memory, instead of a
//     row code that each of the 64 copying threads of the row decoded again (64-bit multiply by a
//     run-time-indexed stride per 16-byte chunk). The issue loop is a shared load, a select, an add
//     and the cp.async per chunk.
//  2. Per tile the QK wgmma group is committed first; the gather of tile it + 1 and the index work
//     for tiles it + 2 / it + 3 run while the tensor cores compute S.
//  3. The prologue issues tiles 0 and 1 (both stages are free at the start).
// Shared memory: Q 64 KB, 2 stages of 64 KB, 4 address slots of 512 B, 32 KB of S partials, up to
// 1 KB of alignment pad: 232448 bytes, the sm_90 per-block limit.
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "common/limits.hpp"
#include "common/pdl.cuh"
#include "sparse/wg_common.cuh"

namespace kparity::kernels::sparse {

// Alignment pad, Q and two KV stages, the address slots, and S partials of both warpgroups.
inline constexpr std::size_t kWgAddrSmem = kWgAlign + 3 * std::size_t(kWgTile) +
                                           std::size_t(kWgSlots) * kWgBK * sizeof(unsigned long long) +
                                           2 * std::size_t(kWgHeads) * kWgBK * sizeof(float);
static_assert(kWgAddrSmem <= kSmemOptinPerBlock, "the wgmma kernel's tiles exceed the shared memory of an SM");

// The issue loop's thread -> (chunk, rows) map: a thread copies chunk cc of rows rq, rq + 4, ...
inline constexpr int kWgRowGroups = kWgThreads / kWgChunks;  // rows one sweep of the block covers
static_assert(kWgRowGroups == 4 && kWgBK % kWgRowGroups == 0,
              "rq + 4i has (row % 8) = rq + 4 (i % 2): two swizzle bases per thread");

template <class T>
__global__ void __launch_bounds__(kWgThreads, 1) sparse_attn_wg_addr_kernel(const AttnParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  using W = dev::Wgmma<std::is_same_v<T, __nv_bfloat16>>;
  using Op = dev::MmaOp<T>;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const std::uint32_t raw_s = dev::smem_u32(smem_raw);
  const std::uint32_t pad = ((raw_s + (kWgAlign - 1)) & ~(kWgAlign - 1)) - raw_s;
  unsigned char* sQ = smem_raw + pad;
  unsigned char* sKV = sQ + kWgTile;
  unsigned long long* sAddr = reinterpret_cast<unsigned long long*>(sQ + 3 * kWgTile);
  float4* sX = reinterpret_cast<float4*>(sAddr + kWgSlots * kWgBK);  // [2][8][128] float4
  const std::uint32_t q_s = raw_s + pad, kv_s = q_s + kWgTile;

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, wg = warp >> 2, wq = warp & 3;
  const dev::CtaCoords cta = dev::cta_coords(p, kWgHeads);
  const long long t = cta.t, h0 = cta.h0, split = cta.split;
  const long long D = p.D;

  const dev::TokenSpans sp = dev::token_spans<kWgBK>(p, t, split);
  const int ntiles = sp.ntiles;

  // Threads 0-63 load one index entry each a tile ahead and decode it into slot k % 4 an iteration
  // later: tile k's addresses are written at iteration k - 2 and read up to iteration k.
  auto load_raw = [&](int k) { return dev::load_raw_index(p, sp, sp.j0 + static_cast<long long>(k) * kWgBK + tid); };
  auto decode = [&](const dev::RawIndex& r, int k) { sAddr[(k % kWgSlots) * kWgBK + tid] = dev::row_address<T>(p, r); };

  // Each thread copies one 16-byte column chunk of 16 rows (rows rq, rq + 4, ...): a warp covers half
  // a 1 KB row, coalesced. Masked rows and chunks past D are written as zeros (src-size 0). Row
  // rq + 4i has (row % 8) = rq + 4 (i % 2), so its swizzled offset is one of two bases + 512 i.
  const int cc = tid & (kWgChunks - 1), rq = tid >> kWgChunksLog2;
  const bool col_ok = cc * 8 < D;
  const std::uint32_t sw_e =
      static_cast<std::uint32_t>((cc >> 3) * kWgBlockBytes + rq * kWgRowBytes + (((cc & 7) ^ rq) << 4));
  const std::uint32_t sw_o =
      static_cast<std::uint32_t>((cc >> 3) * kWgBlockBytes + rq * kWgRowBytes + ((((cc & 7) ^ rq) ^ 4) << 4));
  const unsigned long long dummy = reinterpret_cast<unsigned long long>(p.q);  // not read when src-size is 0
  auto issue = [&](int k) {
    const unsigned long long* rows = sAddr + (k % kWgSlots) * kWgBK;
    const std::uint32_t dst = kv_s + (k & 1) * kWgTile;
#pragma unroll
    for (int i = 0; i < kWgBK / kWgRowGroups; ++i) {
      const unsigned long long a = rows[rq + kWgRowGroups * i];
      const bool valid = (a & 1ull) != 0 && col_ok;
      const unsigned long long src = valid ? (a & ~3ull) + static_cast<unsigned>(cc * 16) : dummy;
      dev::cp_async16_at(dst + ((i & 1) ? sw_o : sw_e) + static_cast<std::uint32_t>(i * kWgRowGroups * kWgRowBytes),
                         src, valid ? 16 : 0);
    }
  };

  dev::RawIndex raw;
  if (tid < kWgBK) {
    decode(load_raw(0), 0);
    decode(load_raw(1), 1);
    raw = load_raw(2);
  }
#pragma unroll
  for (int i = 0; i < kWgHeads / kWgRowGroups; ++i) {  // Q tile: heads past H and channels past D are zeros
    const int r = rq + kWgRowGroups * i;
    const bool valid = h0 + r < p.H && col_ok;
    const T* src = valid ? static_cast<const T*>(p.q) + t * p.q_st + (h0 + r) * p.q_sh + cc * 8 : static_cast<const T*>(p.q);
    dev::cp_async16(sQ + dev::sw_off(r, cc), src, valid ? 16 : 0);
  }
  __syncthreads();  // addresses of tiles 0 and 1 visible
  if (ntiles > 0) issue(0);
  dev::cp_async_commit();  // group: Q + tile 0
  if (ntiles > 1) issue(1);
  dev::cp_async_commit();  // group: tile 1

  float o[128];
#pragma unroll
  for (int i = 0; i < 128; ++i) o[i] = 0.f;
  dev::RowPairStats st;
  const float scale = p.scale, shift = p.shift;

  for (int it = 0; it < ntiles; ++it) {
    if (it == 0)
      dev::cp_async_wait<1>();  // Q and tile 0; tile 1 may still be in flight
    else
      dev::cp_async_wait<0>();
    dev::fence_proxy_async();  // cp.async (generic proxy) writes -> wgmma (async proxy) reads
    __syncthreads();           // tile `it` landed everywhere; both warpgroups are done with the other stage
    const std::uint32_t st_s = kv_s + (it & 1) * kWgTile;

    float s[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) s[i] = 0.f;
    dev::wg_fence();
#pragma unroll
    for (int kk = 0; kk < 16; ++kk) {
      const int ks = wg * 16 + kk;
      const std::uint32_t off = (ks >> 2) * kWgBlockBytes + (ks & 3) * 32;  // 4 k-steps of 16 columns per block
      W::ss_n64(s, dev::desc_sw128(q_s + off, 16, kWgAlign), dev::desc_sw128(st_s + off, 16, kWgAlign), kk > 0 ? 1 : 0);
    }
    dev::wg_commit();
    // While S is computed: the gather of tile it + 1 (tile 1 went out in the prologue) into the stage
    // that PV of tile it - 1 released before the barrier, and the index work two and three tiles ahead.
    if (it >= 1 && it + 1 < ntiles) issue(it + 1);
    dev::cp_async_commit();
    if (tid < kWgBK && it + 2 < ntiles) {
      decode(raw, it + 2);
      raw = load_raw(it + 3);
    }
    dev::wg_wait0();
    dev::pin(s);
    {
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
    // key 8j + 2(lane % 4) + (e & 1). Flags: the low word of the key's address entry.
    const unsigned* flags = reinterpret_cast<const unsigned*>(sAddr + (it % kWgSlots) * kWgBK);
    const float2 resc = dev::softmax_tile<8>([&](int j, int e) -> float& { return s[4 * j + e]; },
                                             [&](int i) {
                                               const unsigned f = flags[2 * i];
                                               return dev::KeyFlags{(f & 1u) != 0, (f & 2u) != 0};
                                             },
                                             lane, scale, shift, st);
    dev::rescale_rows<32>([&](int n, int e) -> float& { return o[4 * n + e]; }, resc);
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
      W::rs_n256_tb(o, pa[kk],
                    dev::desc_sw128(st_s + wg * 4 * kWgBlockBytes + kk * 16 * kWgRowBytes, kWgBlockBytes, kWgAlign));
    dev::wg_commit();
    dev::wg_wait0();
    dev::pin(o);
  }
  dev::cp_async_wait<0>();

  st.l0 = dev::quad_sum(st.l0);
  st.l1 = dev::quad_sum(st.l1);
  const int orow = wq * 16 + (lane >> 2);
  const long long hr0 = h0 + orow, hr1 = hr0 + 8;
  const int cbase = wg * 256 + 2 * (lane & 3);
  const bool writes_stats = wg == 0 && (lane & 3) == 0;  // one thread per row
  const auto acc = [&](int n, int e) -> float& { return o[4 * n + e]; };

  if (p.splits > 1) {  // split-K: raw partials, the combine kernel folds the sink in
    dev::store_partials<32>(p, acc, st, split, t, hr0, cbase, D, writes_stats);
    return;
  }

  const dev::RowFinal f0 = dev::finalize(dev::sink_of(p, hr0), st.m0, st.l0);
  const dev::RowFinal f1 = dev::finalize(dev::sink_of(p, hr1), st.m1, st.l1);
  __syncthreads();  // every warpgroup is done reading the KV stages (and every copy landed): output staging
  T* sO = reinterpret_cast<T*>(sKV);
#pragma unroll
  for (int n = 0; n < 32; ++n) {
    const int c = cbase + n * 8;
    const float2 v0 = f0(o[4 * n], o[4 * n + 1]), v1 = f1(o[4 * n + 2], o[4 * n + 3]);
    *reinterpret_cast<std::uint32_t*>(sO + orow * kWgOutLd + c) = Op::pack(v0.x, v0.y);
    *reinterpret_cast<std::uint32_t*>(sO + (orow + 8) * kWgOutLd + c) = Op::pack(v1.x, v1.y);
  }
  if (p.has_lse && writes_stats) dev::store_lse(p, t, hr0, f0.lse, f1.lse);
  __syncthreads();
  dev::store_out_tile<T, kWgHeads, kWgChunks, kWgOutLd, kWgThreads>(p, sO, tid, t, h0, D);
#else
  __trap();  // wgmma needs sm_90a (cmake/KparityCuda.cmake's default); other builds: SparseTuning::variant = 1
#endif
}

}  // namespace kparity::kernels::sparse
