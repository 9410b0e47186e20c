// Benchmark of sparse/paged_prefill and sparse/paged_decode on DeepSeek-V4 shapes (issue 6), with the
// H200 ceilings (cuBLAS bf16 GEMM rate, device copy bandwidth) measured in the same process, and the
// peers (sglang's Triton prefill and decode) measured in the same device call by
// bench/peers/run_peers.py, or "not measured in this run".
// Usage: bench_sparse [results.md] [--peers peers.json]   (default KPARITY_PEERS_JSON; markdown table
// on stdout, and into the file when given)
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <ctime>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "common/peers.hpp"
#include "kparity/kernels/sparse.hpp"

namespace {

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

std::string out_md, check_md, peer_md, decode_md;
kparity::bench::PeerFigures peers;

void note_peer(const std::string& key) {
  const std::string d = peers.describe(key);
  if (!d.empty() && peer_md.find(key) == std::string::npos) peer_md += "- " + key + ": " + d + "\n";
}
void emit(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void emit(const char* fmt, ...) {
  va_list ap, ap2;
  va_start(ap, fmt);
  va_copy(ap2, ap);
  std::string buf(static_cast<std::size_t>(std::max(0, std::vsnprintf(nullptr, 0, fmt, ap))) + 1, '\0');
  va_end(ap);
  std::vsnprintf(buf.data(), buf.size(), fmt, ap2);
  va_end(ap2);
  buf.pop_back();
  std::fputs(buf.c_str(), stdout);
  std::fflush(stdout);
  out_md += buf;
}

struct Dev {
  void* p = nullptr;
  explicit Dev(std::size_t n) { CK(cudaMalloc(&p, n ? n : 16)); }
  ~Dev() { cudaFree(p); }
};

template <class F>
float time_ms(F&& f, int warm, int reps) {
  for (int i = 0; i < warm; ++i) f();
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  CK(cudaEventRecord(a));
  for (int i = 0; i < reps; ++i) f();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms / reps;
}

void fill_random_bf16(void* p, std::size_t n, unsigned seed) {
  std::vector<__nv_bfloat16> h(n);
  std::mt19937 g(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& x : h) x = __float2bfloat16(nd(g));
  CK(cudaMemcpy(p, h.data(), n * 2, cudaMemcpyHostToDevice));
}

double gemm_tflops() {
  const int n = 8192;
  Dev A(std::size_t(n) * n * 2), B(std::size_t(n) * n * 2), C(std::size_t(n) * n * 2);
  fill_random_bf16(A.p, std::size_t(n) * n, 1);
  fill_random_bf16(B.p, std::size_t(n) * n, 2);
  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1.f, zero = 0.f;
  auto run = [&] {
    cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, A.p, CUDA_R_16BF, n, B.p, CUDA_R_16BF, n, &zero, C.p,
                 CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  const float ms = time_ms(run, 3, 10);
  cublasDestroy(h);
  return 2.0 * n * n * double(n) / (ms * 1e-3) / 1e12;
}

double copy_tbps() {
  const std::size_t n = std::size_t(2) << 30;  // 2 GiB each way: far beyond the 60 MB L2
  Dev a(n), b(n);
  CK(cudaMemset(a.p, 1, n));
  const float ms = time_ms([&] { CK(cudaMemcpyAsync(b.p, a.p, n, cudaMemcpyDeviceToDevice)); }, 2, 10);
  return 2.0 * n / (ms * 1e-3) / 1e12;  // bytes read + written
}

using kparity::DType;
using kparity::TensorView;
using kparity::Device;

TensorView dview(void* p, DType dt, std::vector<std::int64_t> shape) {
  return TensorView(p, dt, std::span<const std::int64_t>(shape), Device::cuda(0));
}

struct Lists {
  std::vector<int> idx, ptr;
  long long selected = 0;
};

constexpr std::int64_t kPool = 131072, kD = 512;

void bench_prefill(int H, double gemm, double copy) {
  const std::int64_t T = 4096, topk = 512, win = 128;
  std::mt19937_64 g(42 + H);
  Lists pre, ext;
  pre.ptr.push_back(0);
  ext.ptr.push_back(0);
  std::unordered_set<int> used;
  for (std::int64_t t = 0; t < T; ++t) {
    // Prefix: 512 distinct random rows of the pool (compressed entries); extend: the last
    // min(t + 1, 128) tokens of this chunk ending with t itself, so neighbouring windows overlap
    // (the shape of sglang's prefill index builder, spec B.3).
    std::unordered_set<int> mine;
    while (static_cast<std::int64_t>(mine.size()) < topk) mine.insert(static_cast<int>(g() % kPool));
    for (int r : mine) pre.idx.push_back(r), used.insert(r);
    pre.ptr.push_back(static_cast<int>(pre.idx.size()));
    for (std::int64_t s = std::max<std::int64_t>(0, t - win + 1); s <= t; ++s) ext.idx.push_back(static_cast<int>(s));
    ext.ptr.push_back(static_cast<int>(ext.idx.size()));
  }
  const long long sel = static_cast<long long>(pre.idx.size() + ext.idx.size());
  Dev q(T * H * kD * 2), ukv(kPool * kD * 2), kv(T * kD * 2), out(T * H * kD * 2), lse(T * H * 4), sink(H * 4);
  Dev ip(pre.idx.size() * 4), pp(pre.ptr.size() * 4), ie(ext.idx.size() * 4), pe(ext.ptr.size() * 4);
  fill_random_bf16(q.p, T * H * kD, 3);
  fill_random_bf16(ukv.p, kPool * kD, 4);
  fill_random_bf16(kv.p, T * kD, 5);
  std::vector<float> hs(H);
  for (int h = 0; h < H; ++h) hs[h] = 0.5f + 0.4f * std::sin(float(h));
  CK(cudaMemcpy(sink.p, hs.data(), H * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ip.p, pre.idx.data(), pre.idx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(pp.p, pre.ptr.data(), pre.ptr.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(ie.p, ext.idx.data(), ext.idx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(pe.p, ext.ptr.data(), ext.ptr.size() * 4, cudaMemcpyHostToDevice));
  kparity::sparse::PagedPrefillArgs a;
  a.q = dview(q.p, DType::bf16, {T, H, kD});
  a.unified_kv = dview(ukv.p, DType::bf16, {kPool, kD});
  a.kv = dview(kv.p, DType::bf16, {T, kD});
  a.kv_indices_prefix = dview(ip.p, DType::i32, {static_cast<std::int64_t>(pre.idx.size())});
  a.kv_indptr_prefix = dview(pp.p, DType::i32, {T + 1});
  a.kv_indices_extend = dview(ie.p, DType::i32, {static_cast<std::int64_t>(ext.idx.size())});
  a.kv_indptr_extend = dview(pe.p, DType::i32, {T + 1});
  a.attn_sink = dview(sink.p, DType::f32, {H});
  a.softmax_scale = 1.0 / std::sqrt(double(kD));
  a.return_lse = true;
  a.out = dview(out.p, DType::bf16, {T, H, kD});
  a.lse = dview(lse.p, DType::f32, {T, H});
  // (head tile, variant): the wgmma kernel (variant 0 picks it at D = 512, 64-head tiles), timed
  // twice for the spread; the mma.sync kernel at 64 and 16 heads (variant 1).
  struct Cfg { int ht, variant; const char* name; };
  const Cfg cfgs[] = {{64, 2, "64, wgmma"}, {64, 2, "64, wgmma (again)"}, {64, 1, "64, mma.sync"},
                      {16, 1, "16, mma.sync"}};
  std::vector<std::uint16_t> ref_out, got_out;
  for (const Cfg& cf : cfgs) {
    const int ht = cf.ht;
    kparity::kernels::sparse::SparseTuning tu{.head_tile = ht, .variant = cf.variant};
    CK(cudaMemset(out.p, 0xff, T * H * kD * 2));  // poison: NaN bf16
    kparity::Status s = kparity::kernels::sparse::paged_prefill(a, nullptr, {}, tu);
    if (!s.ok()) {
      std::fprintf(stderr, "prefill failed: %s\n", s.first_error()->message.c_str());
      std::exit(1);
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    if (ht == 64) {  // the two 64-head kernels on the full benchmark shape: relative L2 difference
      std::vector<std::uint16_t>& dst = cf.variant == 2 ? got_out : ref_out;
      dst.resize(T * H * kD);
      CK(cudaMemcpy(dst.data(), out.p, dst.size() * 2, cudaMemcpyDeviceToHost));
    }
    const float ms = time_ms([&] { (void)kparity::kernels::sparse::paged_prefill(a, nullptr, {}, tu); }, 2, 10);
    CK(cudaGetLastError());
    const double flops = 2.0 * double(sel) * H * (kD + kD);
    const double tf = flops / (ms * 1e-3) / 1e12;
    const double uniq = double(used.size() + T) * kD * 2;
    const double gathered = double(sel) * kD * 2 * ((H + ht - 1) / ht);
    const std::string key = "sparse/paged_prefill H=" + std::to_string(H) + " topk=" + std::to_string(topk);
    const auto peer = peers.get(key);
    note_peer(key);
    emit("| prefill | %d | %s | 4096 | %lld | %.3f | - | %.1f | %.0f%% | %.1f | %.2f | %.0f%% | %s | %s |\n", H, cf.name,
         sel, ms, tf, 100 * tf / gemm, uniq / 1e6, gathered / (ms * 1e-3) / 1e12,
         100 * gathered / (ms * 1e-3) / 1e12 / copy, kparity::bench::peer_cell(peer, 0).c_str(),
         kparity::bench::speedup_cell(peer, ms * 1e3).c_str());
  }
  auto f32 = [](std::uint16_t b) {
    const std::uint32_t u = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return double(f);
  };
  double num = 0, den = 0;
  long long bad = 0;
  for (std::size_t i = 0; i < ref_out.size(); ++i) {
    const double x = f32(got_out[i]), y = f32(ref_out[i]);
    if (!std::isfinite(x) || !std::isfinite(y)) ++bad;
    else num += (x - y) * (x - y), den += y * y;
  }
  check_md += "H = " + std::to_string(H) + ": ||wgmma - mma.sync|| / ||mma.sync|| = " +
              std::to_string(std::sqrt(num / std::max(den, 1e-300))) + ", non-finite elements " + std::to_string(bad) + "\n";
}

// Microseconds per call of `calls` decode launches captured in one CUDA graph: the median of 50
// replays after 3 warm-up replays. The peer's decode figure is timed the same way (graph replay of
// 10 calls on the same inputs), so these two columns compare like with like.
double decode_graph_us(const kparity::sparse::PagedDecodeArgs& a, const kparity::kernels::sparse::DecodeWorkspace& w,
                       const kparity::kernels::sparse::SparseTuning& tu, const kparity::kernels::LaunchOptions& o) {
  constexpr int kCalls = 10, kReps = 50;
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  cudaGraph_t g;
  CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal));
  kparity::Status status;
  for (int i = 0; i < kCalls && status.ok(); ++i) status = kparity::kernels::sparse::paged_decode(a, st, o, w, tu);
  CK(cudaStreamEndCapture(st, &g));
  if (!status.ok()) {
    std::fprintf(stderr, "decode (graph capture) failed: %s\n", status.first_error()->message.c_str());
    std::exit(1);
  }
  cudaGraphExec_t x;
  CK(cudaGraphInstantiate(&x, g, 0));
  for (int i = 0; i < 3; ++i) CK(cudaGraphLaunch(x, st));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  std::vector<float> t;
  for (int r = 0; r < kReps; ++r) {
    CK(cudaEventRecord(e0, st));
    CK(cudaGraphLaunch(x, st));
    CK(cudaEventRecord(e1, st));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.f / kCalls);
  }
  CK(cudaGetLastError());
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaGraphExecDestroy(x);
  cudaGraphDestroy(g);
  cudaStreamDestroy(st);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

void bench_decode(int T, int H, double gemm, double copy) {
  const std::int64_t keys = 2048;
  std::mt19937_64 g(7 + T + H);
  std::vector<int> idx, ptr{0};
  for (int t = 0; t < T; ++t) {
    for (std::int64_t k = 0; k < keys; ++k) idx.push_back(static_cast<int>(g() % kPool));
    ptr.push_back(static_cast<int>(idx.size()));
  }
  Dev q(T * H * kD * 2), ukv(kPool * kD * 2), out(T * H * kD * 2), sink(H * 4), ip(idx.size() * 4), pp(ptr.size() * 4);
  fill_random_bf16(q.p, std::size_t(T) * H * kD, 8);
  fill_random_bf16(ukv.p, kPool * kD, 9);
  CK(cudaMemset(sink.p, 0, H * 4));
  CK(cudaMemcpy(ip.p, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(pp.p, ptr.data(), ptr.size() * 4, cudaMemcpyHostToDevice));
  kparity::sparse::PagedDecodeArgs a;
  a.q = dview(q.p, DType::bf16, {T, H, kD});
  a.unified_kv = dview(ukv.p, DType::bf16, {kPool, kD});
  a.kv_indices = dview(ip.p, DType::i32, {static_cast<std::int64_t>(idx.size())});
  a.kv_indptr = dview(pp.p, DType::i32, {T + 1});
  a.attn_sink = dview(sink.p, DType::f32, {H});
  a.softmax_scale = 1.0 / std::sqrt(double(kD));
  a.out = dview(out.p, DType::bf16, {T, H, kD});
  // (kv_splits, kernel variant, LaunchOptions::decode_variant, label[, head tile, gather]); at T <= 8
  // also forced split counts through the small-batch path, so one device call shows where the
  // automatic choice sits. Variant 3 (the small-T kernel, decode_small_kernel.cuh) with its automatic
  // head group and splits under both gathers at every T, and at T <= 8 each head group forced.
  struct Cfg {
    int splits, variant, decode;
    std::string label;
    int ht = 0, gather = 0;
    int combine = 0;  // SparseTuning::decode_combine (2: the in-cluster merge)
  };
  std::vector<Cfg> cfgs = {{1, 2, 1, "64, 1 split, wgmma"},
                           {0, 2, 1, "64, auto split, wgmma"},
                           {0, 2, 2, "64, auto split, wgmma, v2"},
                           {0, 1, 2, "64, auto split, mma.sync, v2"}};
  if (T <= 8)
    for (int sp : {4, 8, 16, 32}) cfgs.push_back({sp, 2, 2, "64, " + std::to_string(sp) + " splits, wgmma, v2"});
  for (int gather : {1, 2}) {
    const std::string gn = gather == 1 ? "cp.async" : "bulk";
    cfgs.push_back({0, 3, 2, "small-T, auto group + split, " + gn, 0, gather});
    if (T <= 8)
      for (int ht : {16, 32})
        cfgs.push_back({0, 3, 2, "small-T, " + std::to_string(ht) + " heads, auto split, " + gn, ht, gather});
  }
  // The in-cluster merge (no workspace, no combine launch) at T <= 8: 16-head groups, clusters of 8
  // (portable) and 16, and the automatic count (at most 16), bulk gather.
  if (T <= 8)
    for (int sp : {0, 8, 16})
      cfgs.push_back({sp, 3, 2, "small-T, 16 heads, cluster merge " + (sp ? std::to_string(sp) : std::string("auto")) + ", bulk",
                      16, 2, 2});
  const auto tuning = [](const Cfg& c) {
    return kparity::kernels::sparse::SparseTuning{.head_tile = c.ht, .kv_splits = c.splits, .variant = c.variant,
                                                  .decode_gather = c.gather, .decode_combine = c.combine};
  };
  std::size_t wsb = 0;
  for (const Cfg& c : cfgs) wsb = std::max(wsb, kparity::kernels::sparse::paged_decode_workspace_bytes(a, tuning(c)));
  Dev ws(std::max<std::size_t>(wsb, 16));
  kparity::kernels::sparse::DecodeWorkspace w{wsb ? ws.p : nullptr, wsb};
  std::vector<std::uint16_t> ref_out(std::size_t(T) * H * kD), got_out(ref_out.size());
  const auto f32 = [](std::uint16_t b) {
    const std::uint32_t u = std::uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return double(f);
  };
  for (const Cfg& cv : cfgs) {
    const kparity::kernels::sparse::SparseTuning tu = tuning(cv);
    kparity::kernels::LaunchOptions o{};
    o.decode_variant = cv.decode;
    CK(cudaMemset(out.p, 0xff, std::size_t(T) * H * kD * 2));  // poisoned: the cross-check below reads what this call wrote
    kparity::Status s = kparity::kernels::sparse::paged_decode(a, nullptr, o, w, tu);
    if (!s.ok()) {
      std::fprintf(stderr, "decode failed: %s\n", s.first_error()->message.c_str());
      std::exit(1);
    }
    CK(cudaDeviceSynchronize());
    // The first row (the wgmma single pass) is the reference of the others' relative difference.
    std::vector<std::uint16_t>& dst = &cv == &cfgs.front() ? ref_out : got_out;
    CK(cudaMemcpy(dst.data(), out.p, dst.size() * 2, cudaMemcpyDeviceToHost));
    if (&cv != &cfgs.front()) {
      double num = 0, den = 0;
      std::size_t bad = 0;
      for (std::size_t i = 0; i < dst.size(); ++i) {
        const double x = f32(got_out[i]), y = f32(ref_out[i]);
        if (!std::isfinite(x) || !std::isfinite(y)) ++bad;
        else num += (x - y) * (x - y), den += y * y;
      }
      char line[256];
      std::snprintf(line, sizeof line, "%.2e (%zu non-finite)", std::sqrt(num / std::max(den, 1e-300)), bad);
      decode_md += "H = " + std::to_string(H) + ", T = " + std::to_string(T) + ", " + cv.label + ": " + line + "\n";
    }
    const float ms = time_ms([&] { (void)kparity::kernels::sparse::paged_decode(a, nullptr, o, w, tu); }, 3, 20);
    const double graph_us = decode_graph_us(a, w, tu, o);
    const double sel = double(T) * keys;
    const double tf = 2.0 * sel * H * (kD + kD) / (graph_us * 1e-6) / 1e12;
    // Roofline: the rows every token must read once (per head tile), over the graph time, against
    // the copy rate measured in this run.
    const double gathered = sel * kD * 2 * ((H + 63) / 64);
    const std::string key = "sparse/paged_decode H=" + std::to_string(H) + " T=" + std::to_string(T);
    const auto peer = peers.get(key);
    note_peer(key);
    emit("| decode | %d | %s | %d | %.0f | %.4f | %.1f | %.1f | %.0f%% | - | %.2f | %.0f%% | %s | %s |\n", H,
         cv.label.c_str(), T, sel, ms, graph_us, tf, 100 * tf / gemm, gathered / (graph_us * 1e-6) / 1e12,
         100 * gathered / (graph_us * 1e-6) / 1e12 / copy, kparity::bench::peer_cell(peer, 1).c_str(),
         kparity::bench::speedup_cell(peer, graph_us).c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string md_path, peers_path;
  if (!kparity::bench::parse_bench_args(argc, argv, md_path, peers_path, "bench_sparse [results.md] [--peers peers.json]"))
    return 2;
  peers = kparity::bench::PeerFigures::load(peers_path);
  cudaDeviceProp prop{};
  CK(cudaGetDeviceProperties(&prop, 0));
  // KPARITY_BENCH_DECODE_ONLY=1: the decode rows alone (a device call that measures decode only skips
  // the prefill rows and the GEMM ceiling only they use; the copy ceiling stays).
  const bool decode_only = std::getenv("KPARITY_BENCH_DECODE_ONLY") != nullptr;
  const double gemm = decode_only ? 0.0 : gemm_tflops(), copy = copy_tbps();
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  emit("## sparse attention benchmark, %s\n\nGPU: %s, %d SMs, L2 %d MB. Ceilings measured in this run: cuBLAS bf16 "
       "GEMM 8192^3 %.0f TFLOP/s; device-to-device copy %.2f TB/s (read + write).\n%s.\n\n",
       date, prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, gemm, copy, peers.source().c_str());
  emit("| op | H | head tile | T | selected keys | ms | graph us | TFLOP/s | of GEMM | unique MB | gather TB/s | of copy "
       "| peer (us) | peer / kparity |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  if (!decode_only) {
    bench_prefill(64, gemm, copy);
    bench_prefill(128, gemm, copy);
  }
  for (int H : {64, 128})
    for (int T : {1, 2, 4, 8, 64, 256}) bench_decode(T, H, gemm, copy);
  emit("\nms: mean of back-to-back launches (prefill 10, decode 20: eager); graph us: per call, CUDA-graph replay of "
       "10 decode calls, median of 50. Decode rows' TFLOP/s and gather TB/s are over graph us (the roofline: the "
       "gathered rows against the copy rate). v2: LaunchOptions::decode_variant 2 (PDL launches, the wide split-K "
       "combine, combine_kernel.cuh); other decode rows variant 1. small-T: SparseTuning::variant 3 (the 16/32-head "
       "decode kernel, decode_small_kernel.cuh; KV gather by 16-byte cp.async or one bulk copy per row). peer / kparity > 1: kparity is faster; prefill "
       "against ms, decode against graph us (the peers' own timing, below).\n");
  if (!peer_md.empty()) emit("Peers:\n%s", peer_md.c_str());
  emit("\nFull-shape cross-check of the two 64-head prefill kernels (bf16 outputs, poisoned before each):\n%s",
       check_md.c_str());
  emit("\nDecode cross-check, ||row - wgmma 1 split|| / ||wgmma 1 split|| over the bf16 outputs of each decode row "
       "(poisoned before each; bf16 rounding of two accumulation orders: about 1e-3 expected):\n%s",
       decode_md.c_str());
  if (!md_path.empty()) {
    FILE* f = std::fopen(md_path.c_str(), "w");
    if (f) std::fputs(out_md.c_str(), f), std::fclose(f);
  }
  return 0;
}
