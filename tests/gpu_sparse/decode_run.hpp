#pragma once
// Decode runs shared by the split-K and small-T decode tests: one call through the caller's tuning
// and LaunchOptions::decode_variant, eagerly or captured in a CUDA graph and replayed, with the
// workspace and outputs poisoned; V4's serving shape; bitwise comparison.
#include <cmath>
#include <cstring>
#include <string>

#include "gpu_case.hpp"

namespace kpt {

using kparity::kernels::sparse::SparseTuning;

inline bool bits_equal(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0) return false;  // NaN == NaN here, -0 != +0
  return true;
}

// One decode through the caller's options, eagerly or as a captured CUDA graph replayed `replays`
// times (the output poisoned before the replays, so they must write it); workspace poisoned.
struct DecodeRun {
  SparseTuning tu;
  int variant = 1;
  bool graph = false;
  int replays = 2;
  bool deep = true;
  bool workspace = true;  // false: no workspace (the single-pass fallback)
};
inline Result run_decode_with(const Case& c, const DecodeRun& r) {
  DecodeDev dev(c);
  const kparity::sparse::PagedDecodeArgs& a = dev.a;
  kparity::kernels::sparse::DecodeWorkspace ws;
  ws.bytes = r.workspace ? kparity::kernels::sparse::paged_decode_workspace_bytes(a, r.tu) : 0;
  void* wmem = nullptr;
  if (ws.bytes) {
    EXPECT_EQ(cudaMalloc(&wmem, ws.bytes), cudaSuccess);
    EXPECT_EQ(cudaMemset(wmem, 0xff, ws.bytes), cudaSuccess);  // every partial the combine reads is written
    ws.data = wmem;
  }
  kparity::kernels::LaunchOptions o = test_launch(r.deep);
  o.decode_variant = r.variant;
  if (!r.graph) {
    const kparity::Status s = kparity::kernels::sparse::paged_decode(a, nullptr, o, ws, r.tu);
    EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  } else {
    o.validate = ValidateOptions::upstream();  // capturable: no deep pass (host copies), no sync
    o.sync_after_launch = false;
    cudaStream_t stream = nullptr;
    EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    cudaGraph_t g = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const kparity::Status s = kparity::kernels::sparse::paged_decode(a, stream, o, ws, r.tu);
    EXPECT_EQ(cudaStreamEndCapture(stream, &g), cudaSuccess);
    EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
    cudaGraphExec_t x = nullptr;
    EXPECT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    dev.dout.poison();  // nothing ran at capture: the replays must write every element
    dev.dlse.poison();
    for (int i = 0; i < r.replays; ++i) EXPECT_EQ(cudaGraphLaunch(x, stream), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(stream);
  }
  if (wmem) cudaFree(wmem);
  return dev.download();
}

// V4's decode shape: D = 512, `keys` rows of a large pool per token, one token's list shorter.
inline Case serving_case(std::uint64_t seed, std::int64_t T, std::int64_t H, std::int64_t keys) {
  Case c = random_case(seed, {.dt = DType::bf16, .T = T, .H = H, .D = 512, .P = 8192, .Ne = 0, .max_pre = keys,
                              .max_ext = 0, .sentinel_rate = 0.0});
  Rng rng(seed);
  for (std::int64_t t = 0; t < T; ++t) {
    c.pre[t].resize(t == T - 1 && T > 1 ? keys - 37 : keys);
    for (auto& v : c.pre[t]) v = rng.integer(0, 8191);
  }
  return c;
}

}  // namespace kpt
