#pragma once
// Sparse MQA attention with a zero-value sink (spec sparse_attention.md C.1-C.4). One CTA = one token
// x HT heads (x one key range under split-K). All heads of a token share its selected rows, so the
// CTA gathers kBK rows at a time into shared memory (cp.async, kStages deep) and runs S = Q.K^T and
// O += P.V on tensor cores (mma.sync m16n8k16, fp32 accumulation). Warps form RB row blocks of 16
// heads x DS slices of D: each warp computes its D-slice's partial of S (summed through shared
// memory) and owns the O columns of that slice, so a 64 x 512 fp32 O fits in registers.
// The loop mirrors sglang unified_kv_kernels/paged_prefill.py: -FLT_MAX running-max seed, masked
// weights forced to 0, weights rounded to the storage dtype for P.V only, sink folded in at the end.
// The token's rows (token_rows.cuh) and the online softmax and epilogue (softmax.cuh) are shared
// with the wgmma kernel (wg_addr_kernel.cuh).
#include <cfloat>
#include <cstdint>

#include "common/limits.hpp"
#include "common/pdl.cuh"
#include "sparse/mma.cuh"
#include "sparse/params.hpp"
#include "sparse/softmax.cuh"
#include "sparse/token_rows.cuh"

namespace kparity::kernels::sparse {

inline constexpr int kThreads = 256, kWarps = 8, kBK = 32, kStages = 3;
inline constexpr int kSlots = kStages + 1;  // decoded row codes: written one iteration before use
static_assert(kBK == kKeysPerTileMma, "the decode launcher sizes splits in these tiles (params.hpp)");

template <int DP, int HT, int ELEM>
struct Geo {
  static constexpr int RB = HT / 16;        // row blocks of 16 heads
  static constexpr int DS = kWarps / RB;    // D slices
  static constexpr int SL = DP / DS;        // D columns per warp
  static constexpr int LD = DP + 8;         // +16 bytes per row: ldmatrix rows hit distinct banks
  static constexpr int CPR = DP / 8;        // 16-byte chunks per row
  static constexpr int KCH = kBK * CPR / kThreads;  // KV chunks per thread per tile
  static constexpr int RSTEP = kThreads / CPR;       // rows between one thread's chunks
  static constexpr int NTO = SL / 8;        // n8 tiles of O per warp
  static_assert(SL >= 16 && SL % 16 == 0 && KCH >= 1, "unsupported (DP, HT)");
  static constexpr std::size_t q_bytes = std::size_t(HT) * LD * ELEM;
  static constexpr std::size_t kv_bytes = std::size_t(kStages) * kBK * LD * ELEM;
  static constexpr std::size_t x_bytes = DS > 1 ? std::size_t(kWarps) * 16 * 32 * 4 : 0;
  static constexpr std::size_t smem = q_bytes + kv_bytes + x_bytes + std::size_t(kStages + kSlots) * kBK * 4;
  static_assert(smem <= kSmemOptinPerBlock, "the tile does not fit the shared memory of an SM");
};

template <class T, int DP, int HT>
__global__ void __launch_bounds__(kThreads, 1) sparse_attn_kernel(const AttnParams p) {
  using G = Geo<DP, HT, sizeof(T)>;
  using Op = dev::MmaOp<T>;
  extern __shared__ __align__(16) unsigned char smem[];
  T* sQ = reinterpret_cast<T*>(smem);
  T* sKV = reinterpret_cast<T*>(smem + G::q_bytes);
  float* sX = reinterpret_cast<float*>(smem + G::q_bytes + G::kv_bytes);
  int* sF = reinterpret_cast<int*>(smem + G::q_bytes + G::kv_bytes + G::x_bytes);
  int* sCode = sF + kStages * kBK;

  kernels::dev::pdl_entry();  // before the first global access (common/pdl.cuh)
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int rb = warp % G::RB, ds = warp / G::RB;
  const dev::CtaCoords cta = dev::cta_coords(p, HT);
  const long long t = cta.t, h0 = cta.h0, split = cta.split;
  const long long D = p.D;

  const dev::TokenSpans sp = dev::token_spans<kBK>(p, t, split);
  const int ntiles = sp.ntiles;

  // Warp 0 loads one entry per lane a tile ahead and decodes it into shared memory an iteration
  // later, so no thread ever waits on an index load (a per-thread fetch serialised 8 round trips).
  // Row code: >= 0 prefix row, <= -2 extend row (-code - 2), -1 masked (past the range, or any
  // negative entry: C.1 item 3).
  auto load_raw = [&](int k) { return dev::load_raw_index(p, sp, sp.j0 + static_cast<long long>(k) * kBK + lane); };
  auto decode = [&](const dev::RawIndex& r, int k) {
    const long long v = dev::raw_index_row(p, r);
    const int code = v < 0 ? -1 : r.kind == 1 ? static_cast<int>(v) : static_cast<int>(-v - 2);
    sCode[(k % kSlots) * kBK + lane] = code;
  };

  const int col8 = tid % G::CPR, row0 = tid / G::CPR;
  auto issue = [&](int k) {
    const int stage = k % kStages;
    const int* codes = sCode + (k % kSlots) * kBK;
    T* base = sKV + stage * kBK * G::LD;
#pragma unroll
    for (int i = 0; i < G::KCH; ++i) {
      const int r = row0 + i * G::RSTEP, code = codes[r];
      if (col8 == 0) sF[stage * kBK + r] = code == -1 ? 0 : (code >= 0 ? 1 : 2);
      T* dst = base + r * G::LD + col8 * 8;
      const bool valid = code != -1 && col8 * 8 < D;
      const T* src = static_cast<const T*>(p.q);
      long long sd = 0;
      if (valid) {
        const int s = code >= 0 ? 0 : 1;
        const long long row = code >= 0 ? code : -static_cast<long long>(code) - 2;
        sd = p.src_sd[s];
        src = static_cast<const T*>(p.src[s]) + row * p.src_sr[s] + col8 * 8 * sd;
      }
      if (p.vec_kv) {
        dev::cp_async16(dst, src, valid ? 16 : 0);  // masked rows become zeros: 0 * garbage could be NaN
      } else {
#pragma unroll
        for (int e = 0; e < 8; ++e) dst[e] = (valid && col8 * 8 + e < D) ? src[e * sd] : Op::from_f(0.f);
      }
    }
  };

  // Q tile (heads past H and channels past D are zeros, so they add nothing to S).
  for (int c = tid; c < HT * G::CPR; c += kThreads) {
    const int r = c / G::CPR, cc = c % G::CPR;
    T* dst = sQ + r * G::LD + cc * 8;
    const bool valid = h0 + r < p.H && cc * 8 < D;
    const T* src = valid ? static_cast<const T*>(p.q) + t * p.q_st + (h0 + r) * p.q_sh + cc * 8 * p.q_sd
                         : static_cast<const T*>(p.q);
    if (p.vec_q) {
      dev::cp_async16(dst, src, valid ? 16 : 0);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = (valid && cc * 8 + e < D) ? src[e * p.q_sd] : Op::from_f(0.f);
    }
  }
  dev::RawIndex raw;
  if (warp == 0) {
    const dev::RawIndex r0 = load_raw(0), r1 = load_raw(1), r2 = load_raw(2);
    decode(r0, 0);
    decode(r1, 1);
    decode(r2, 2);
    raw = load_raw(3);
  }
  static_assert(kStages == 3, "the prologue decodes kStages tiles");
  __syncthreads();
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < ntiles) issue(s);
    dev::cp_async_commit();
  }

  float o[G::NTO][4];
#pragma unroll
  for (int n = 0; n < G::NTO; ++n) o[n][0] = o[n][1] = o[n][2] = o[n][3] = 0.f;
  dev::RowPairStats st;
  const float scale = p.scale, shift = p.shift;
  const int qrow = rb * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, qcol = ((lane >> 4) & 1) * 8;
  const int krow = (lane & 7) + ((lane >> 4) & 1) * 8, kcol = ((lane >> 3) & 1) * 8;
  const int vrow = (lane & 7) + ((lane >> 3) & 1) * 8, vcol = ((lane >> 4) & 1) * 8;

  for (int it = 0; it < ntiles; ++it) {
    dev::cp_async_wait<kStages - 2>();
    __syncthreads();  // tile `it` landed; every warp is done with the stage refilled next
    {
      const int nx = it + kStages - 1;
      if (nx < ntiles) issue(nx);
      dev::cp_async_commit();
      if (warp == 0 && nx + 1 < ntiles) {  // read by the issue of the next iteration, after its barrier
        decode(raw, nx + 1);
        raw = load_raw(nx + 2);
      }
    }
    const int stage = it % kStages;
    const T* sK = sKV + stage * kBK * G::LD;

    float s[4][4];
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
    for (int kk = 0; kk < G::SL / 16; ++kk) {
      const int k0 = ds * G::SL + kk * 16;
      std::uint32_t a[4];
      dev::ldsm_x4(a, sQ + qrow * G::LD + k0 + qcol);
#pragma unroll
      for (int np2 = 0; np2 < 2; ++np2) {
        std::uint32_t b[4];
        dev::ldsm_x4(b, sK + (np2 * 16 + krow) * G::LD + k0 + kcol);
        Op::run(s[2 * np2], a, b[0], b[1]);
        Op::run(s[2 * np2 + 1], a, b[2], b[3]);
      }
    }
    if constexpr (G::DS > 1) {
      // Sum the D-slice partials in a fixed order so every warp of a row block holds identical S.
      float* mine = sX + warp * 16 * 32 + lane;
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) mine[(j * 4 + e) * 32] = s[j][e];
      __syncthreads();
#pragma unroll
      for (int j = 0; j < 4; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
      for (int d = 0; d < G::DS; ++d) {
        const float* src = sX + (d * G::RB + rb) * 16 * 32 + lane;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) s[j][e] += src[(j * 4 + e) * 32];
      }
    }

    // Row codes of the tile as key flags: 0 masked, 1 prefix row, 2 extend row.
    const int* fl = sF + stage * kBK;
    const float2 resc = dev::softmax_tile<4>([&](int j, int e) -> float& { return s[j][e]; },
                                             [&](int i) { return dev::KeyFlags{fl[i] != 0, fl[i] == 2}; }, lane,
                                             scale, shift, st);
    dev::rescale_rows<G::NTO>([&](int n, int e) -> float& { return o[n][e]; }, resc);
#pragma unroll
    for (int kk = 0; kk < kBK / 16; ++kk) {
      const std::uint32_t a[4] = {Op::pack(s[2 * kk][0], s[2 * kk][1]), Op::pack(s[2 * kk][2], s[2 * kk][3]),
                                  Op::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                                  Op::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int n2 = 0; n2 < G::NTO / 2; ++n2) {
        std::uint32_t b[4];
        dev::ldsm_x4_t(b, sK + (kk * 16 + vrow) * G::LD + ds * G::SL + n2 * 16 + vcol);
        Op::run(o[2 * n2], a, b[0], b[1]);
        Op::run(o[2 * n2 + 1], a, b[2], b[3]);
      }
    }
  }
  dev::cp_async_wait<0>();

  st.l0 = dev::quad_sum(st.l0);
  st.l1 = dev::quad_sum(st.l1);
  const long long hr0 = h0 + rb * 16 + (lane >> 2), hr1 = hr0 + 8;
  const int cbase = ds * G::SL + 2 * (lane & 3);
  const bool writes_stats = ds == 0 && (lane & 3) == 0;  // one thread per row
  const auto acc = [&](int n, int e) -> float& { return o[n][e]; };

  if (p.splits > 1) {  // split-K: raw partials, the combine kernel folds the sink in
    dev::store_partials<G::NTO>(p, acc, st, split, t, hr0, cbase, D, writes_stats);
    return;
  }

  const dev::RowFinal f0 = dev::finalize(dev::sink_of(p, hr0), st.m0, st.l0);
  const dev::RowFinal f1 = dev::finalize(dev::sink_of(p, hr1), st.m1, st.l1);
  __syncthreads();  // every warp is done reading sQ: it becomes the output staging tile
  const int orow = rb * 16 + (lane >> 2);
#pragma unroll
  for (int n = 0; n < G::NTO; ++n) {
    const int c = cbase + n * 8;
    const float2 v0 = f0(o[n][0], o[n][1]), v1 = f1(o[n][2], o[n][3]);
    sQ[orow * G::LD + c] = Op::from_f(v0.x);
    sQ[(orow + 8) * G::LD + c] = Op::from_f(v1.x);
    sQ[orow * G::LD + c + 1] = Op::from_f(v0.y);
    sQ[(orow + 8) * G::LD + c + 1] = Op::from_f(v1.y);
  }
  if (p.has_lse && writes_stats) dev::store_lse(p, t, hr0, f0.lse, f1.lse);
  __syncthreads();
  dev::store_out_tile<T, HT, G::CPR, G::LD, kThreads>(p, sQ, tid, t, h0, D);
}

}  // namespace kparity::kernels::sparse
