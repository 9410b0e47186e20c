// KDA decode benchmark (issue 5): ReplaySSM and packed decode on the same token stream, timed as
// CUDA-graph replays over rotating input sets larger than L2, with counted bytes and the ratio to
// a device-to-device copy measured in the same run, next to the peers measured in the same device
// call (bench/peers/run_peers.py: sglang's Triton ReplaySSM for the ReplaySSM rows, fla's
// fused_recurrent_kda_fwd in serving form for the packed rows), or "not measured in this run".
// Prints a markdown table.  Usage: kda_decode_bench [table.md] [--peers peers.json]
// (default KPARITY_PEERS_JSON).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/gpu_bench.hpp"
#include "common/peers.hpp"
#include "kparity/kernels/kda.hpp"

#ifdef KPARITY_REPLAY_TRACE
extern "C" int kparity_replay_trace_dump(const char* path, int ctas);
#endif

namespace {
using namespace kparity;
using bench::check;

constexpr std::int64_t K = 128, V = 128, L = 16;

struct Buf {
  void* p = nullptr;
  std::size_t bytes = 0;
  Buf(std::size_t n, DType t, float lo, float hi, unsigned seed) : bytes(n * dtype_size(t)) {
    check(cudaMalloc(&p, bytes), "malloc");
    const int code = t == DType::f32 ? 0 : t == DType::f16 ? 1 : t == DType::bf16 ? 2 : -1;
    if (code >= 0) bench::fill_uniform(p, n, code, lo, hi, seed);
  }
  Buf(const Buf&) = delete;
  Buf(Buf&& o) noexcept : p(o.p), bytes(o.bytes) { o.p = nullptr; }
  ~Buf() { cudaFree(p); }
  TensorView view(DType t, Shape s) const { return TensorView(p, t, s, Device::cuda(0)); }
};

// Times per LaunchOptions::decode_variant: [0] the established launches (1), [1] the small-batch
// paths (2); graph replay and eager launches.
struct Row {
  std::int64_t B, HV;
  double replay_us[2], packed_us[2], replay_eager[2], packed_eager[2], replay_mb, packed_mb;
};

Row run(std::int64_t B, std::int64_t HV, double l2_bytes) {
  const std::int64_t H = HV;
  const double set_bytes = double(B) * HV * V * K * 4 + double(B) * (HV * L * V * 2 + H * L * K * 2 + HV * L * K * 4);
  const int sets = static_cast<int>(std::clamp(std::ceil(4 * l2_bytes / set_bytes), 2.0, 512.0));
  const std::int64_t slots = B * sets;
  Buf state(slots * HV * V * K, DType::f32, -0.02f, 0.02f, 1), d(slots * HV * L * V, DType::bf16, -0.02f, 0.02f, 2),
      k(slots * H * L * K, DType::bf16, -1.f, 1.f, 3), g(slots * HV * L * K, DType::f32, -0.1f, 0.f, 4);
  const std::int64_t qkv_w = 2 * H * K + HV * V;
  Buf qkv(sets * B * qkv_w, DType::bf16, -1.f, 1.f, 5), a(sets * B * HV * K, DType::bf16, -1.f, 1.f, 6),
      b(sets * B * HV, DType::bf16, -1.f, 1.f, 7), out(sets * B * HV * V, DType::bf16, 0.f, 0.f, 8),
      A_log(HV, DType::f32, -0.5f, 0.5f, 9), dt_bias(HV * K, DType::f32, -0.1f, 0.1f, 10);
  Buf idx(sets * B, DType::i32, 0, 0, 0), wp(B, DType::i32, 0, 0, 0);
  std::vector<std::int32_t> hidx(sets * B), hwp(B);
  for (std::int64_t i = 0; i < sets * B; ++i) hidx[i] = static_cast<std::int32_t>(i);
  // KDA_BENCH_CURSORS=append (no row flushes) or flush (every row flushes) isolates the two CTA kinds;
  // the default spreads the cursors over [0, L-1], so one row in L flushes.
  static const std::string cursors = std::getenv("KDA_BENCH_CURSORS") ? std::getenv("KDA_BENCH_CURSORS") : "";
  for (std::int64_t r = 0; r < B; ++r)
    hwp[r] = static_cast<std::int32_t>(cursors == "flush" ? L - 1 : (r * 5 + 7) % (cursors == "append" ? L - 1 : L));
  check(cudaMemcpy(idx.p, hidx.data(), hidx.size() * 4, cudaMemcpyHostToDevice), "idx");
  check(cudaMemcpy(wp.p, hwp.data(), hwp.size() * 4, cudaMemcpyHostToDevice), "wp");
  check(cudaDeviceSynchronize(), "fill");

  const auto at = [](const Buf& buf, std::int64_t off_elems, DType t, Shape s) {
    return TensorView(static_cast<char*>(buf.p) + off_elems * dtype_size(t), t, s, Device::cuda(0));
  };
  const auto replay_args = [&](int set) {
    kda::ReplaySsmDecodeArgs r;
    r.mixed_qkv = at(qkv, set * B * qkv_w, DType::bf16, {B, qkv_w});
    r.a = at(a, set * B * HV * K, DType::bf16, {B, HV, K});
    r.b = at(b, set * B * HV, DType::bf16, {B, HV});
    r.A_log = A_log.view(DType::f32, {HV});
    r.dt_bias = dt_bias.view(DType::f32, {HV, K});
    r.scale = 1.0 / std::sqrt(double(K));
    r.initial_state = state.view(DType::f32, {slots, HV, V, K});
    r.d_cache = d.view(DType::bf16, {slots, HV, L, V});
    r.k_cache = k.view(DType::bf16, {slots, H, L, K});
    r.g_cache = g.view(DType::f32, {slots, HV, L, K});
    r.out = at(out, set * B * HV * V, DType::bf16, {B, 1, HV, V});
    r.ssm_state_indices = at(idx, set * B, DType::i32, {B});
    r.write_pos = wp.view(DType::i32, {B});
    r.use_qk_l2norm_in_kernel = true;
    return r;
  };
  const auto packed_args = [&](int set) {
    const kda::ReplaySsmDecodeArgs r = replay_args(set);
    kda::PackedDecodeArgs p;
    p.mixed_qkv = r.mixed_qkv;
    p.a = at(a, set * B * HV * K, DType::bf16, {B, HV * K});
    p.b = r.b; p.A_log = r.A_log;
    p.dt_bias = dt_bias.view(DType::f32, {HV * K});
    p.scale = r.scale; p.initial_state = r.initial_state; p.out = r.out; p.ssm_state_indices = r.ssm_state_indices;
    p.use_qk_l2norm_in_kernel = true;
    return p;
  };
  const auto must = [](const Status& s) {
    if (!s.ok()) {
      std::fprintf(stderr, "launch failed: %s\n", s.first_error()->message.c_str());
      std::exit(1);
    }
  };
  const int reps = 30;
  // KDA_BENCH_REPLAY_ONLY=1 skips the packed decode (ReplaySSM-only sweeps).
  static const bool replay_only = std::getenv("KDA_BENCH_REPLAY_ONLY") != nullptr;
  double rep_us[2], pk_us[2], rep_eager[2], pk_eager[2];
  for (int v = 0; v < 2; ++v) {
    kernels::LaunchOptions opt{};
    opt.decode_variant = v + 1;
    const auto rep = [&](int i, cudaStream_t s) { must(kernels::kda::replayssm_decode(replay_args(i % sets), s, opt)); };
    const auto pk = [&](int i, cudaStream_t s) { must(kernels::kda::packed_decode(packed_args(i % sets), s, opt)); };
    rep_us[v] = bench::median_us_per_call(rep, sets, 3, reps);
#ifdef KPARITY_REPLAY_TRACE
    if (const char* tp = std::getenv("KDA_BENCH_TRACE")) {  // debug builds: per-CTA phase trace of one graph replay
      const std::string path = std::string(tp) + "_" + std::to_string(B) + "_" + std::to_string(HV) + "_v" +
                               std::to_string(v + 1) + ".csv";
      kparity_replay_trace_dump(path.c_str(), static_cast<int>(B * HV));
    }
#endif
    rep_eager[v] = bench::median_us_per_call_eager(rep, sets, 10);
    pk_us[v] = replay_only ? std::nan("") : bench::median_us_per_call(pk, sets, 3, reps);
    pk_eager[v] = replay_only ? std::nan("") : bench::median_us_per_call_eager(pk, sets, 10);
  }

  // Bytes each call moves (counted, not measured): state read, valid ring read, ring/state writes.
  const double act = double(qkv_w) * 2 + HV * K * 2 + HV * 2 + HV * V * 2 + 8;
  const double state_b = double(HV) * V * K * 4, ring_entry = double(HV) * V * 2 + H * K * 2 + HV * K * 4;
  double rep_b = 0, pk_b = 0;
  for (std::int64_t r = 0; r < B; ++r) {
    const std::int64_t c = hwp[r];
    rep_b += act + state_b + c * ring_entry + (c == L - 1 ? state_b : ring_entry);
    pk_b += act + 2 * state_b;
  }
  return {B, HV, {rep_us[0], rep_us[1]}, {pk_us[0], pk_us[1]}, {rep_eager[0], rep_eager[1]}, {pk_eager[0], pk_eager[1]},
          rep_b / 1e6, pk_b / 1e6};
}

// One call on two copies of the same inputs whose states differ only in alignment: one 16-byte
// aligned (the ReplaySSM kernel's vector path, and the path a faster kernel restricted to aligned
// views would take), one offset by one float (the element-by-element path). The results must agree
// bit for bit (same lanes, same order, same roundings), so every byte of out, state and the three
// rings is compared, on bench-sized calls with padding rows, natural and forced flushes and
// permuted slots. Returns the number of differing bytes.
std::size_t verify(std::int64_t B, std::int64_t HV) {
  const std::int64_t H = HV, slots = B, qkv_w = 2 * H * K + HV * V;
  const std::size_t n_state = slots * HV * V * K;
  struct Side {
    Buf state, d, k, g, out;
    float* st;
  };
  const auto make = [&](std::int64_t shift) {
    Side x{Buf(n_state + 4, DType::f32, 0, 0, 0), Buf(slots * HV * L * V, DType::bf16, -0.02f, 0.02f, 22),
           Buf(slots * H * L * K, DType::bf16, -1.f, 1.f, 23), Buf(slots * HV * L * K, DType::f32, -0.1f, 0.f, 24),
           Buf(B * HV * V, DType::bf16, 0, 0, 0), nullptr};
    x.st = static_cast<float*>(x.state.p) + shift;
    bench::fill_uniform(x.st, n_state, 0, -0.02f, 0.02f, 21);
    return x;
  };
  Side fast = make(4), gen = make(1);  // aligned, offset by one float
  Buf qkv(B * qkv_w, DType::bf16, -1.f, 1.f, 25), a(B * HV * K, DType::bf16, -1.f, 1.f, 26),
      b(B * HV, DType::bf16, -1.f, 1.f, 27), A_log(HV, DType::f32, -0.5f, 0.5f, 28),
      dt_bias(HV * K, DType::f32, -0.1f, 0.1f, 29), idx(B, DType::i32, 0, 0, 0), wp(B, DType::i32, 0, 0, 0),
      ff(B, DType::i32, 0, 0, 0);
  std::vector<std::int32_t> hidx(B), hwp(B), hff(B);
  for (std::int64_t r = 0; r < B; ++r) {
    hidx[r] = r % 11 == 5 ? -1 : static_cast<std::int32_t>(B - 1 - r);  // padding rows, permuted slots
    hwp[r] = static_cast<std::int32_t>((r * 5 + 7) % L);
    hff[r] = r % 7 == 3;
  }
  check(cudaMemcpy(idx.p, hidx.data(), B * 4, cudaMemcpyHostToDevice), "idx");
  check(cudaMemcpy(wp.p, hwp.data(), B * 4, cudaMemcpyHostToDevice), "wp");
  check(cudaMemcpy(ff.p, hff.data(), B * 4, cudaMemcpyHostToDevice), "ff");
  for (Side* x : {&fast, &gen}) {
    kda::ReplaySsmDecodeArgs r;
    r.mixed_qkv = qkv.view(DType::bf16, {B, qkv_w});
    r.a = a.view(DType::bf16, {B, HV, K});
    r.b = b.view(DType::bf16, {B, HV});
    r.A_log = A_log.view(DType::f32, {HV});
    r.dt_bias = dt_bias.view(DType::f32, {HV, K});
    r.scale = 1.0 / std::sqrt(double(K));
    r.initial_state = TensorView(x->st, DType::f32, {slots, HV, V, K}, Device::cuda(0));
    r.d_cache = x->d.view(DType::bf16, {slots, HV, L, V});
    r.k_cache = x->k.view(DType::bf16, {slots, H, L, K});
    r.g_cache = x->g.view(DType::f32, {slots, HV, L, K});
    r.out = x->out.view(DType::bf16, {B, 1, HV, V});
    r.ssm_state_indices = idx.view(DType::i32, {B});
    r.write_pos = wp.view(DType::i32, {B});
    r.force_flush = ff.view(DType::i32, {B});
    r.use_qk_l2norm_in_kernel = true;
    const Status st = kernels::kda::replayssm_decode(r, nullptr, kernels::LaunchOptions{});
    if (!st.ok()) {
      std::fprintf(stderr, "verify launch failed: %s\n", st.first_error()->message.c_str());
      std::exit(1);
    }
  }
  check(cudaDeviceSynchronize(), "verify");
  const auto diff = [](const void* x, const void* y, std::size_t bytes) {
    std::vector<unsigned char> hx(bytes), hy(bytes);
    check(cudaMemcpy(hx.data(), x, bytes, cudaMemcpyDeviceToHost), "d2h");
    check(cudaMemcpy(hy.data(), y, bytes, cudaMemcpyDeviceToHost), "d2h");
    std::size_t n = 0;
    for (std::size_t i = 0; i < bytes; ++i) n += hx[i] != hy[i];
    return n;
  };
  const std::size_t d_out = diff(fast.out.p, gen.out.p, fast.out.bytes),
                    d_state = diff(fast.st, gen.st, n_state * 4), d_d = diff(fast.d.p, gen.d.p, fast.d.bytes),
                    d_k = diff(fast.k.p, gen.k.p, fast.k.bytes), d_g = diff(fast.g.p, gen.g.p, fast.g.bytes);
  std::printf("verify B=%lld HV=%lld aligned vs offset state: differing bytes out %zu state %zu d %zu k %zu g %zu\n",
              (long long)B, (long long)HV, d_out, d_state, d_d, d_k, d_g);
  return d_out + d_state + d_d + d_k + d_g;
}

}  // namespace

int main(int argc, char** argv) {
  std::string md_path, peers_path;
  if (!bench::parse_bench_args(argc, argv, md_path, peers_path, "kda_decode_bench [table.md] [--peers peers.json]"))
    return 2;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  // KDA_BENCH_VERIFY=1: the aligned-vs-offset bit-identity check only (no timing).
  if (std::getenv("KDA_BENCH_VERIFY") != nullptr) {
    std::size_t bad = 0;
    for (const auto& [B, HV] : {std::pair<std::int64_t, std::int64_t>{1, 32}, {8, 32}, {64, 32}, {256, 12}, {300, 32}})
      bad += verify(B, HV);
    std::printf("verify: %s\n", bad == 0 ? "bit-identical" : "MISMATCH");
    return bad == 0 ? 0 : 1;
  }
  const bench::PeerFigures peers = bench::PeerFigures::load(peers_path);
  const double copy = bench::copy_gbps(std::size_t(1) << 30, 10);
  const double read = bench::read_gbps(std::size_t(1) << 30, 10);
  std::string md;
  char line[1024];
  std::snprintf(line, sizeof line,
                "GPU: %s (%d SMs, %.0f MB L2). Device-to-device copy: %.0f GB/s (read+write, 1 GiB, median of 10); "
                "read-only stream: %.0f GB/s (1 GiB, whole-line 16-byte loads, bench/common/read_ceiling.cu, median of 10).\n"
                "Shapes: H = HV, K = V = 128, L = 16, fp32 state, bf16 activations and rings, L2 norm on, softplus "
                "gate, cursors (5b+7) mod 16, CUDA-graph replays over rotating sets (>= 4x L2), median of 30.\n%s.\n\n"
                "Variant 1: the established launches; 2: the small-batch paths of issue 31 (LaunchOptions::decode_variant: "
                "PDL launches; packed: state loads issued before the token preamble). Eager: the same calls launched "
                "back to back without a graph, median of 10.\n\n"
                "| B | HV | kernel | variant | graph us | eager us | MB moved | GB/s | %% of copy | %% of read | peer (us) | "
                "peer / kparity |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|\n",
                prop.name, prop.multiProcessorCount, prop.l2CacheSize / 1e6, copy, read, peers.source().c_str());
  md += line;
  std::string used_peers;
  const auto note_peer = [&](const std::string& key, const char* rows) {
    const std::string d = peers.describe(key);
    if (!d.empty() && used_peers.find(rows) == std::string::npos) used_peers += std::string("- ") + rows + ": " + d + "\n";
  };
  const std::int64_t Bs[] = {1, 2, 4, 8, 64, 256};
  for (std::int64_t HV : {32, 12}) {
    for (const std::int64_t B : Bs) {
      // KDA_BENCH_SHAPES="B:HV,..." restricts the run to those shapes (profiling one kernel).
      if (const char* only = std::getenv("KDA_BENCH_SHAPES")) {
        const std::string want = std::to_string(B) + ":" + std::to_string(HV);
        const std::string list = std::string(",") + only + ",";
        if (list.find("," + want + ",") == std::string::npos) continue;
      }
      const Row r = run(B, HV, prop.l2CacheSize);
      const auto gbps = [](double mb, double us) { return mb * 1e6 / (us * 1e-6) / 1e9; };
      const std::string shape = " B=" + std::to_string(r.B) + " HV=" + std::to_string(r.HV);
      const auto peer_rep = peers.get("kda/replayssm_decode" + shape), peer_pk = peers.get("kda/packed_decode" + shape);
      note_peer("kda/replayssm_decode" + shape, "replayssm rows");
      note_peer("kda/packed_decode" + shape, "packed rows");
      const std::size_t rows_at = md.size();
      for (int v = 0; v < 2; ++v) {
        std::snprintf(line, sizeof line,
                      "| %lld | %lld | replayssm | %d | %.2f | %.2f | %.2f | %.0f | %.0f%% | %.0f%% | %s | %s |\n",
                      (long long)r.B, (long long)r.HV, v + 1, r.replay_us[v], r.replay_eager[v], r.replay_mb,
                      gbps(r.replay_mb, r.replay_us[v]), 100 * gbps(r.replay_mb, r.replay_us[v]) / copy,
                      100 * gbps(r.replay_mb, r.replay_us[v]) / read, bench::peer_cell(peer_rep, 2).c_str(),
                      bench::speedup_cell(peer_rep, r.replay_us[v]).c_str());
        md += line;
      }
      for (int v = 0; v < 2; ++v) {
        std::snprintf(line, sizeof line, "| %lld | %lld | packed | %d | %.2f | %.2f | %.2f | %.0f | %.0f%% | - | %s | %s |\n",
                      (long long)r.B, (long long)r.HV, v + 1, r.packed_us[v], r.packed_eager[v], r.packed_mb,
                      gbps(r.packed_mb, r.packed_us[v]), 100 * gbps(r.packed_mb, r.packed_us[v]) / copy,
                      bench::peer_cell(peer_pk, 2).c_str(), bench::speedup_cell(peer_pk, r.packed_us[v]).c_str());
        md += line;
      }
      std::fputs(md.c_str() + rows_at, stdout);  // progress: the rows of this shape
    }
  }
  if (!used_peers.empty()) md += "\nPeers (same device call; peer / kparity > 1: kparity is faster):\n" + used_peers;
  std::printf("\n%s", md.c_str());
  if (!md_path.empty()) {
    if (FILE* f = std::fopen(md_path.c_str(), "w")) {
      std::fputs(md.c_str(), f);
      std::fclose(f);
    }
  }
  return 0;
}
