// ReplaySSM kernel-against-kernel properties: AP-K8 (garbage beyond the cursor is never read),
// AP-K10 (flush writes no ring), AP-K11 (strided state), AP-K12 (CUDA-graph replay reads the
// flush flags at run time), AP-K7 (N ReplaySSM steps = N packed-decode steps).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "replay_run.hpp"

namespace kparity::gpu_test {
namespace {
namespace kk = kernels::kda;

Status run_replay(DevDecode& dev, const HostDecode& h) {
  dev.out.poison();
  return kk::replayssm_decode(dev.replay_args(h), nullptr, kSyncLaunch);
}

// Sets ring positions >= write_pos[r] of every row's slot to NaN (B.2.3 item 3).
void poison_beyond_cursor(HostDecode& h) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::int64_t r = 0; r < h.cfg.B; ++r) {
    const std::int64_t s = h.idx.view().load_int_flat(r);
    if (s < 0) continue;
    for (std::int64_t i = h.wp.view().load_int_flat(r); i < h.cfg.L; ++i) {
      for (std::int64_t hv = 0; hv < h.cfg.HV; ++hv) {
        for (std::int64_t j = 0; j < h.cfg.V; ++j) h.d.view().store(std::vector<std::int64_t>{s, hv, i, j}, nan);
        for (std::int64_t k = 0; k < h.cfg.K; ++k) h.g.view().store(std::vector<std::int64_t>{s, hv, i, k}, nan);
      }
      for (std::int64_t hh = 0; hh < h.cfg.H; ++hh)
        for (std::int64_t k = 0; k < h.cfg.K; ++k) h.k.view().store(std::vector<std::int64_t>{s, hh, i, k}, nan);
    }
  }
}

TEST(ReplaySsmProtocol, GarbageBeyondCursorIsNeverReadAndFlushWritesNoRing) {
  KPARITY_REQUIRE_GPU();
  DecodeCfg c;
  c.B = 4; c.L = 8; c.slots = 4; c.idx = {0, 1, 2, 3}; c.write_pos = {0, 3, 7, 5}; c.HV = 8;
  HostDecode clean(c, 404);
  clean.garbage_rings(405);
  clean.ff.view().store_flat(3, 1.0);  // row 2 flushes naturally, row 3 by force
  HostDecode dirty = clean;
  poison_beyond_cursor(dirty);
  DevDecode a(clean), b(dirty);
  ASSERT_TRUE(run_replay(a, clean).ok());
  ASSERT_TRUE(run_replay(b, dirty).ok());
  HostDecode ra = clean, rb = dirty;
  a.download_all(ra);
  b.download_all(rb);
  EXPECT_TRUE(bytes_equal(ra.out, rb.out, "out (AP-K8)"));
  EXPECT_TRUE(bytes_equal(ra.state, rb.state, "state (AP-K8)"));
  for (std::int64_t r = 0; r < c.B; ++r) {
    const std::int64_t cur = c.write_pos[r];
    const bool flush = cur == c.L - 1 || r == 3;
    for (std::int64_t i = 0; i < c.L; ++i) {
      const auto at = [&](const Tensor& t) { return t.view().select(0, r).select(1, i); };
      if (flush || i != cur) {  // AP-K10 and untouched positions: the poison is still there
        EXPECT_TRUE(bytes_equal(at(rb.d), at(dirty.d), "d ring row " + std::to_string(r) + " pos " + std::to_string(i)));
        EXPECT_TRUE(bytes_equal(at(rb.k), at(dirty.k), "k ring row " + std::to_string(r) + " pos " + std::to_string(i)));
        EXPECT_TRUE(bytes_equal(at(rb.g), at(dirty.g), "g ring row " + std::to_string(r) + " pos " + std::to_string(i)));
      } else {  // the appended position is the same whatever was there before
        EXPECT_TRUE(bytes_equal(at(ra.d), at(rb.d), "appended d"));
        EXPECT_TRUE(bytes_equal(at(ra.k), at(rb.k), "appended k"));
        EXPECT_TRUE(bytes_equal(at(ra.g), at(rb.g), "appended g"));
      }
    }
  }
}

// AP-K11: slot stride HV*V*K + 257 and a storage offset give the compact run's bytes.
TEST(ReplaySsmProtocol, StridedStateMatchesCompactExactly) {
  KPARITY_REQUIRE_GPU();
  for (DType st : {DType::f32, DType::bf16}) {
    DecodeCfg c;
    c.state = st; c.B = 3; c.slots = 3; c.idx = {2, 0, 1}; c.write_pos = {3, 1, 3}; c.L = 4;
    HostDecode compact(c, 505);
    compact.garbage_rings(506);
    c.slot_pad = 257; c.state_offset = 3;
    HostDecode strided(c, 505);
    strided.garbage_rings(506);
    copy_convert(compact.state.view(), strided.state.view());
    DevDecode a(compact), b(strided);
    ASSERT_TRUE(run_replay(a, compact).ok());
    ASSERT_TRUE(run_replay(b, strided).ok());
    HostDecode ra = compact, rb = strided;
    a.download_all(ra);
    b.download_all(rb);
    EXPECT_TRUE(bytes_equal(ra.out, rb.out, "out"));
    EXPECT_TRUE(bytes_equal(ra.state, rb.state, "state"));
    EXPECT_TRUE(bytes_equal(ra.d, rb.d, "d ring"));
  }
}

// AP-K12 (upstream D.1 graph case): capture with write_pos 1 and force 0, then set force [1, 0]
// and replay: row 0 must flush, so the decision is read on the device at replay time.
TEST(ReplaySsmProtocol, GraphReplayReadsForceFlushAtRunTime) {
  KPARITY_REQUIRE_GPU();
  DecodeCfg c;
  c.B = 2; c.slots = 3; c.idx = {2, 0}; c.write_pos = {1, 1}; c.L = 4; c.slot_pad = 257; c.state_std = 0.02;
  c.state = DType::f32;
  HostDecode h(c, 606);
  h.garbage_rings(607);
  DevDecode dev(h);
  const kernels::LaunchOptions capturable{ValidateOptions::upstream(), false};
  ASSERT_TRUE(kk::replayssm_decode(dev.replay_args(h), nullptr, kSyncLaunch).ok());  // eager warm-up
  cudaStream_t stream;
  KPARITY_CUDA_OK(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  KPARITY_CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const Status s = kk::replayssm_decode(dev.replay_args(h), stream, capturable);
  KPARITY_CUDA_OK(cudaStreamEndCapture(stream, &graph));
  ASSERT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  cudaGraphExec_t exec;
  KPARITY_CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
  // Reset everything, then flip the flag the graph was captured without.
  HostDecode run = h;
  run.ff.view().store_flat(0, 1.0);
  dev.upload_inputs(run);
  dev.state.upload(run.state); dev.d.upload(run.d); dev.k.upload(run.k); dev.g.upload(run.g);
  dev.out.poison();
  KPARITY_CUDA_OK(cudaGraphLaunch(exec, stream));
  KPARITY_CUDA_OK(cudaStreamSynchronize(stream));
  HostDecode got = run;
  dev.download_all(got);
  HostDecode lp = run;
  reference::kda::replayssm_decode(lp.replay_args(), reference::Precision::faithful);
  EXPECT_TRUE(close_to(got.out, lp.out, tol::kReplayOut, "graph out"));
  // AP-K12 state 2e-3/1e-3 (upstream's graph case): fp32 state, one fold of one ring entry.
  EXPECT_TRUE(close_to(got.state, lp.state, Tol{2e-3, 1e-3}, "graph state"));
  EXPECT_FALSE(bytes_equal(got.state.view().select(0, 2), run.state.view().select(0, 2), "row 0 flushed"));
  EXPECT_TRUE(bytes_equal(got.state.view().select(0, 0), run.state.view().select(0, 0), "row 1 appended"));
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
}

// AP-K7 (upstream D.2): ReplaySSM under the protocol equals the packed decode on out every step
// and on the state at every flush, for L in {1, 4, 8, 16}, with forced flushes at irregular steps.
TEST(ReplaySsmProtocol, EquivalentToPackedDecode) {
  KPARITY_REQUIRE_GPU();
  for (DType act : {DType::f32, DType::bf16}) {
    for (std::int64_t L : {1, 4, 8, 16}) {
      DecodeCfg c;
      c.B = 4; c.H = 4; c.HV = 8; c.slots = 4; c.idx = {0, 1, 2, 3}; c.L = L; c.act = act; c.out = act; c.ring = act;
      c.a3d = false; c.beta_rounding = kparity::kda::BetaRounding::fp32;  // consistent beta (A.4 item 6)
      HostDecode h(c, 700 + L);
      HostDecode hp = h;
      DevDecode rep(h), pk(hp);
      const std::string tag = std::string("act=") + std::string(dtype_name(act)) + " L=" + std::to_string(L);
      for (int step = 0; step < 40; ++step) {
        h.fresh_inputs(800 + step);
        hp.fresh_inputs(800 + step);
        const bool force = L == 8 && (step == 3 || step == 5 || step == 11 || step == 20);
        for (std::int64_t r = 0; r < c.B; ++r) h.ff.view().store_flat(r, force ? 1.0 : 0.0);
        rep.upload_inputs(h);
        pk.upload_inputs(hp);
        ASSERT_TRUE(run_replay(rep, h).ok());
        pk.out.poison();
        ASSERT_TRUE(kk::packed_decode(pk.packed_args(hp), nullptr, kSyncLaunch).ok());
        HostDecode ro = h, po = hp;
        rep.download_all(ro);
        pk.download_all(po);
        const std::string at = tag + " step " + std::to_string(step);
        ASSERT_TRUE(close_to(ro.out, po.out, tol::equiv_out(act), at + " out"));
        const bool flushed = force || h.wp.view().load_int_flat(0) == L - 1;
        if (flushed) ASSERT_TRUE(close_to(ro.state, po.state, tol::equiv_state(act), at + " state"));
        reference::kda::advance_cursors(h.replay_args());
      }
    }
  }
}

}  // namespace
}  // namespace kparity::gpu_test
