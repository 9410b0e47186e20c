#pragma once
// One decode call of either op on a fresh device copy of a host case, through a chosen
// LaunchOptions::decode_variant, eagerly or captured into a CUDA graph and replayed once (the
// decode updates the state in place, so one replay is one step). Returns the host mirror of the
// device world after the call (out, state, rings).
#include <cuda_runtime_api.h>

#include <string>

#include "compare.hpp"
#include "decode_case.hpp"
#include "kparity/kernels/kda.hpp"

namespace kparity::gpu_test {

enum class DecodeOp { packed, replay };

inline HostDecode run_decode_variant(const HostDecode& h, DecodeOp op, int variant, bool graph) {
  DevDecode dev(h);
  dev.out.poison();
  kernels::LaunchOptions o{ValidateOptions::upstream(), !graph};  // a captured launch never synchronises
  o.decode_variant = variant;
  const auto call = [&](cudaStream_t s) {
    return op == DecodeOp::packed ? kernels::kda::packed_decode(dev.packed_args(h), s, o)
                                  : kernels::kda::replayssm_decode(dev.replay_args(h), s, o);
  };
  if (!graph) {
    const Status st = call(nullptr);
    EXPECT_TRUE(st.ok()) << (st.first_error() ? st.first_error()->message : "");
  } else {
    cudaStream_t s = nullptr;
    EXPECT_EQ(cudaStreamCreate(&s), cudaSuccess);
    cudaGraph_t g = nullptr;
    EXPECT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const Status st = call(s);
    EXPECT_EQ(cudaStreamEndCapture(s, &g), cudaSuccess);
    EXPECT_TRUE(st.ok()) << (st.first_error() ? st.first_error()->message : "");
    cudaGraphExec_t x = nullptr;
    EXPECT_EQ(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
    EXPECT_EQ(cudaGraphLaunch(x, s), cudaSuccess);
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    cudaGraphExecDestroy(x);
    cudaGraphDestroy(g);
    cudaStreamDestroy(s);
  }
  HostDecode got = h;
  dev.download_all(got);
  return got;
}

// Every tensor the call may write, byte for byte.
inline ::testing::AssertionResult same_world(const HostDecode& a, const HostDecode& b, const std::string& tag) {
  for (const auto& [x, y, name] : {std::tuple{&a.out, &b.out, "out"}, std::tuple{&a.state, &b.state, "state"},
                                   std::tuple{&a.d, &b.d, "d_cache"}, std::tuple{&a.k, &b.k, "k_cache"},
                                   std::tuple{&a.g, &b.g, "g_cache"}})
    if (auto r = bytes_equal(x->view(), y->view(), tag + " " + name); !r) return r;
  return ::testing::AssertionSuccess();
}

}  // namespace kparity::gpu_test
