#pragma once
// kda/packed_decode, form "wide" (KPARITY_PACKED_DECODE_FORM=wide on the small-batch path; the
// launcher picks it only where one wave of kPackedWideCtasPerSm CTAs an SM holds the whole call).
// Why another form (bench/results/decode_2026-12-05.md, ncu at B = 1): the verified small-batch
// form runs 256 CTAs x 4 warps at B = 1 (1.8 warps a scheduler, 0.21 instructions issued a cycle)
// as a chain of dependent steps - slot index, state rows into registers, a preamble with three block
// barriers, the rows' reductions, an output tile staged through shared memory behind a fourth. Here:
//  - The V tile is chosen for one wave of 4 CTAs an SM (B = 1, HV = 32, V = 128: 8 rows, 512 CTAs,
//    16 warps an SM), so every SM streams and twice the warps hide each other's latency.
//  - The CTA's whole state tile [VT][K] is in flight as soon as the slot index is known: thread 0
//    issues it as at most kPackedWideMaxStages bulk copies (TMA, one mbarrier each) into shared
//    memory, no register buffer caps it (B = 8: 32 KB a CTA, 128 KB an SM in flight), and the rows
//    of the first stage are computed while later stages land.
//  - The token preamble (q, k, gate, beta, the l2 norms) and the v entries overlap those copies and
//    cost one block barrier; the output is stored by each row's lane group directly.
// Same numerics as packed_decode_body (packed_decode_kernel.cuh), bit for bit: every value is
// computed by the same operations in the same order - the norms' sums over the same 4 warps x 32
// lanes of 128 threads (group_sum<32>, then warp 0..3 from +0 as block_sum2), q and k scaled per
// element as there (x / n or x * (1 / n), then q * scale), each state row held by the lanes of
// RowLayout<S, K> with the same per-lane fmaf chains and the same group_sum butterflies; only where
// the state bytes wait (shared memory instead of registers) and which CTA owns a row differ, and
// neither enters the arithmetic. tests/gpu_kda DecodeVariants compares the two byte for byte (the
// wide form is variant 2 there when KPARITY_PACKED_DECODE_FORM=wide).
// States whose rows are not 16-byte aligned or not contiguous ([VT][K] not one block) take no bulk
// copy: each lane group loads its rows with load_row_chunk when it reaches them (correctness path).
#include "common/bulk_copy.cuh"
#include "common/pdl.cuh"
#include "kda/device.cuh"
#include "kda/packed_decode_wide.hpp"
#include "kda/support.hpp"

namespace kparity::kernels::kda {

template <class S, class O, int K>
__global__ void __launch_bounds__(kPackedThreads, kPackedWideCtasPerSm) packed_decode_wide_kernel(const PackedParams p) {
  using namespace dev;
  using kernels::dev::bulk_g2s;
  using kernels::dev::mbar_arrive_expect_tx;
  using kernels::dev::mbar_init;
  using kernels::dev::mbar_init_fence;
  using kernels::dev::mbar_wait;
  using kernels::dev::smem_u32;
  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  using Lay = RowLayout<S, K>;
  constexpr int kT = kPackedThreads, kWarps = kT / 32, kU = kPackedWideRowsUnroll;
  constexpr int kItRows = kWarps * Lay::kRowsPerWarp * kU;
  static_assert(packed_wide_iter_rows(sizeof(S), K) == kItRows, "launcher and kernel agree on the iteration");
  static_assert(kT == 128, "the norms' reduction tree is block_sum2's over 4 warps (packed_decode_kernel.cuh)");
  constexpr int kVPer = (kMaxHeadDim + kT - 1) / kT;  // v entries a thread loads (VT <= V <= 256)
  const DecodeInputs& in = p.in;
  extern __shared__ __align__(128) unsigned char wide_smem[];
  const int VT = static_cast<int>(in.vtile);
  std::uint64_t* bars = reinterpret_cast<std::uint64_t*>(wide_smem);
  float* s_q = reinterpret_cast<float*>(wide_smem + 8 * kPackedWideMaxStages);  // q_s
  float* s_kh = s_q + K;                                                          // k_hat
  float* s_al = s_kh + K;                                                         // alpha
  float* s_red = s_al + K;                                                        // norm partials
  float* s_v = s_red + 2 * kWarps;                                                // v [VT]
  const S* tile = reinterpret_cast<const S*>(wide_smem + packed_wide_tile_offset(K, VT));

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  // Grid (V tiles, HV, B): the coordinates need no division before the slot index's load (the
  // verified form's flat index costs three 64-bit divisions, a subroutine call each, there).
  const std::int64_t vt = blockIdx.x, hv = blockIdx.y, b = blockIdx.z, v0 = vt * VT;
  const std::int64_t h = static_cast<int>(blockIdx.y) / static_cast<int>(in.G);  // 32-bit: inline
  O* out = static_cast<O*>(in.out) + b * in.out_s0 + hv * in.out_s2;
  // Every load that needs no other load's answer leaves now, in one round trip: the slot index, the
  // token inputs (raw bits, as the verified form) and this tile's v entries. Warp 0 (thread 0 issues
  // the tile's copies, which wait for the index) asks for the index first, the other warps last:
  // with one load of s written first for every warp, ptxas moved s into uniform registers right
  // behind the load, which waits for it, so every warp's token loads left one round trip later; and
  // with it written last for every warp, warp 0 issued it ~250 instructions in. The two definitions
  // meet after the token loads, so no warp waits for s before its loads are out.
  std::int64_t s = 0;
  if (warp == 0) s = ld_index_raw(in.idx, in.idx_dt, b * in.idx_s0);
  constexpr int kCh = TokenBits<K, kT>::kCh;
  TokenBits<K, kT> tok;
  tok.load(in, b, hv, h, tid);
  const char* qkv = static_cast<const char*>(in.qkv);
  const std::int64_t v_base = b * in.qkv_s0 + (2 * in.H * K + hv * in.V + v0) * in.qkv_s1;
  std::uint32_t v_raw[kVPer];
#pragma unroll
  for (int i = 0; i < kVPer; ++i) {
    const int j = tid + i * kT;
    v_raw[i] = j < VT ? ld_raw(qkv, in.qkv_dt, v_base + j * in.qkv_s1) : 0u;
  }
  if (warp != 0) s = ld_index_raw(in.idx, in.idx_dt, b * in.idx_s0);

  // The tile's first row, whether it is one 16-byte-aligned [VT][K] block (bulk) or rows for
  // load_row_chunk (vec: 16-byte rows): in thread 0's branch below, and by everyone after the barrier.
  const auto tile_src = [&] { return static_cast<S*>(in.state) + s * in.st_s0 + hv * in.st_s1 + v0 * in.st_s2; };
  const auto rows_vec = [&](const S* st) { return aligned16(st) && ((in.st_s2 * sizeof(S)) % kVecBytes == 0); };
  const int stage_rows = static_cast<int>(packed_wide_stage_rows(VT, kItRows));
  if (tid == 0 && s >= 0 && rows_vec(tile_src()) && in.st_s2 == K) {
    // The tile in stages; the issuing thread initialised the barriers, so its own copies need only
    // the init fence (no block barrier). Waiters meet them after the preamble's barrier.
    S* st = tile_src();
    const int n_st = VT / stage_rows;
    const std::uint32_t stage_bytes = static_cast<std::uint32_t>(stage_rows * K * sizeof(S));
    for (int k = 0; k < n_st; ++k) mbar_init(smem_u32(bars + k), 1);
    mbar_init_fence();
    for (int k = 0; k < n_st; ++k) {
      mbar_arrive_expect_tx(smem_u32(bars + k), stage_bytes);
      bulk_g2s(smem_u32(tile) + k * stage_bytes, reinterpret_cast<std::uint64_t>(st + std::int64_t(k) * stage_rows * K),
               stage_bytes, smem_u32(bars + k));
    }
  }

  // The token preamble, operation for operation as packed_decode_body's (see the header comment).
  float ssq = 0.f, ssk = 0.f;
#pragma unroll
  for (int u = 0; u < kCh; ++u) {
    const int k = tid + u * kT;
    if (k >= K) continue;
    const float q = raw_f(tok.q[u], in.qkv_dt);
    const float kk = raw_f(tok.k[u], in.qkv_dt);
    const float x = tok.gate_x(in, u);
    s_q[k] = q;
    s_kh[k] = kk;
    s_al[k] = expf(gate(x, raw_f(tok.A_log, in.A_dt), in.has_lower_bound, in.lower_bound));
    ssq += q * q;
    ssk += kk * kk;
  }
  if (in.l2norm) {  // block_sum2's first half: each warp's butterfly, lane 0 posts it
    ssq = group_sum<32>(ssq);
    ssk = group_sum<32>(ssk);
    if (lane == 0) { s_red[warp] = ssq; s_red[kWarps + warp] = ssk; }
  }
#pragma unroll
  for (int i = 0; i < kVPer; ++i)
    if (tid + i * kT < VT) s_v[tid + i * kT] = raw_f(v_raw[i], in.qkv_dt);
  __syncthreads();  // the only block barrier
  if (s < 0) {  // B.1 item 1 (s is the same for the whole CTA: no copy was issued)
    for (int j = tid; j < VT; j += kT) out[(v0 + j) * in.out_s3] = from_f<O>(0.f);
    return;
  }
  S* st = tile_src();
  const bool vec = rows_vec(st);
  const bool bulk = vec && in.st_s2 == K;  // thread 0 issued the bulk copies
  float nq = 1.f, nk = 1.f, rq = 1.f, rk = 1.f;
  if (in.l2norm) {  // block_sum2's second half (warps in order from +0), then A.5 as there
    float2 n{0.f, 0.f};
#pragma unroll
    for (int i = 0; i < kWarps; ++i) { n.x += s_red[i]; n.y += s_red[kWarps + i]; }
    nq = sqrtf(n.x + 1e-6f);
    nk = sqrtf(n.y + 1e-6f);
    rq = 1.f / nq;
    rk = 1.f / nk;
  }
  const float beta = sigmoid(raw_f(tok.b_logit, in.b_dt));  // B.1 item 3: fp32

  const int rig = lane / Lay::kLanes, lir = lane % Lay::kLanes;
  float fq[Lay::kEpl], fk[Lay::kEpl], fa[Lay::kEpl];
#pragma unroll
  for (int ch = 0; ch < Lay::kChunks; ++ch)
#pragma unroll
    for (int e = 0; e < Lay::kV; ++e) {
      const int k = Lay::channel(lir, ch, e);
      float q = s_q[k], kk = s_kh[k];
      if (in.l2norm) {  // A.5 table: divide by sqrt(n), or multiply by 1/sqrt(n) for a bf16 state
        q = p.norm_multiply ? q * rq : q / nq;
        kk = p.norm_multiply ? kk * rk : kk / nk;
      }
      fq[ch * Lay::kV + e] = q * in.scale;  // A.6
      fk[ch * Lay::kV + e] = kk;
      fa[ch * Lay::kV + e] = s_al[k];
    }

  for (int rb = 0; rb < VT; rb += kItRows) {
    if (bulk) mbar_wait(smem_u32(bars + rb / stage_rows), 0u);  // this iteration's stage has landed
    float acc[kU][Lay::kEpl];
    int j[kU];
#pragma unroll
    for (int u = 0; u < kU; ++u) {
      j[u] = rb + (u * kWarps + warp) * Lay::kRowsPerWarp + rig;
      if (j[u] < VT) {
#pragma unroll
        for (int ch = 0; ch < Lay::kChunks; ++ch) {
          float t[Lay::kV];
          if (bulk) {
            const uint4 raw = *reinterpret_cast<const uint4*>(tile + j[u] * K + Lay::channel(lir, ch, 0));
#pragma unroll
            for (int e = 0; e < Lay::kV; ++e) t[e] = raw_elem<S>(raw, e);
          } else {
            load_row_chunk<S>(st + j[u] * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
          }
#pragma unroll
          for (int e = 0; e < Lay::kV; ++e) acc[u][ch * Lay::kV + e] = t[e];
        }
      } else {
#pragma unroll
        for (int e = 0; e < Lay::kEpl; ++e) acc[u][e] = 0.f;
      }
    }
#pragma unroll
    for (int u = 0; u < kU; ++u) {  // packed_decode_body's process(), row for row
      const float vj = j[u] < VT ? s_v[j[u]] : 0.f;
      float pk = 0.f;
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) {
        acc[u][e] = __fmul_rn(acc[u][e], fa[e]);  // A.7 step 1: decay
        pk = fmaf(acc[u][e], fk[e], pk);           // step 2: predict from the decayed state
      }
      pk = group_sum<Lay::kLanes>(pk);
      const float d = beta * (vj - pk);  // step 3
      float pq = 0.f;
#pragma unroll
      for (int e = 0; e < Lay::kEpl; ++e) {
        acc[u][e] = __fadd_rn(acc[u][e], __fmul_rn(d, fk[e]));  // step 4: rank-1 update
        pq = fmaf(acc[u][e], fq[e], pq);                         // step 5: readout
      }
      pq = group_sum<Lay::kLanes>(pq);
      if (j[u] >= VT) continue;
      if (lir == 0) out[(v0 + j[u]) * in.out_s3] = from_f<O>(pq);
#pragma unroll
      for (int ch = 0; ch < Lay::kChunks; ++ch) {
        float t[Lay::kV];
#pragma unroll
        for (int e = 0; e < Lay::kV; ++e) t[e] = acc[u][ch * Lay::kV + e];
        store_row_chunk<S>(st + j[u] * in.st_s2 + Lay::channel(lir, ch, 0), vec, t);
      }
    }
  }
}

}  // namespace kparity::kernels::kda
