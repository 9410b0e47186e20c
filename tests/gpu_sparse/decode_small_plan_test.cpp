// The small-T decode kernel's split counts (kernels/sparse/decode_small_plan.cpp), read through
// paged_decode_workspace_bytes: the planner looks at shapes, strides and pointer alignment only, so
// this runs without a GPU (views on cuda:0 over addresses nothing reads; the SM count falls back to
// an H200's 132 without a driver).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kparity/kernels/sparse.hpp"

namespace {

using kparity::DType;
using kparity::Device;
using kparity::TensorView;
using kparity::kernels::sparse::SparseTuning;

int device_sms() {
  int dev = 0, n = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
    return 132;  // kernels/common/limits.hpp's fallback
  return n;
}

struct Views {
  std::vector<std::vector<std::int64_t>> shapes;
  TensorView view(std::uintptr_t addr, DType dt, std::vector<std::int64_t> shape) {
    shapes.push_back(std::move(shape));
    return TensorView(reinterpret_cast<void*>(addr), dt, std::span<const std::int64_t>(shapes.back()), Device::cuda(0));
  }
};

// Workspace bytes of a V4 decode (D = 512, `keys` per token) under `tu`, and the split count they
// stand for (acc [S, T, H, D] fp32 from a 16-byte boundary, then (max, sum) pairs).
std::int64_t splits_of(std::int64_t T, std::int64_t H, std::int64_t keys, const SparseTuning& tu) {
  constexpr std::int64_t D = 512;
  Views v;
  v.shapes.reserve(8);
  kparity::sparse::PagedDecodeArgs a;
  a.q = v.view(0x10000000, DType::bf16, {T, H, D});
  a.unified_kv = v.view(0x20000000, DType::bf16, {1 << 17, D});
  a.kv_indices = v.view(0x30000000, DType::i32, {T * keys});
  a.kv_indptr = v.view(0x40000000, DType::i32, {T + 1});
  a.attn_sink = v.view(0x50000000, DType::f32, {H});
  a.softmax_scale = 0.044;
  a.out = v.view(0x60000000, DType::bf16, {T, H, D});
  const std::size_t bytes = kparity::kernels::sparse::paged_decode_workspace_bytes(a, tu);
  if (bytes == 0) return 1;
  const std::int64_t per_split = T * H * D * 4 + T * H * 2 * 4;  // T * H * D * 4 is a multiple of 16
  EXPECT_EQ(static_cast<std::int64_t>(bytes) % per_split, 0) << bytes;
  return static_cast<std::int64_t>(bytes) / per_split;
}

TEST(SparseDecodeSmallPlan, SplitsFillTheSmsAtSmallT) {
  if (device_sms() != 132) GTEST_SKIP() << "the expectations below are for 132 SMs (H100 / H200 SXM)";
  const auto small = [](int ht, int splits) { return SparseTuning{.head_tile = ht, .kv_splits = splits, .variant = 3}; };
  struct Row { std::int64_t T, H; int ht, splits; std::int64_t want; };
  // 2048 keys = 32 tiles of 64. Automatic head group (measured rule): 16 while T * H <= 256 (T = 1,
  // H = 64: 4 groups x 32 splits; H = 128: 8 x 16; T = 2, H = 64: 8 x 16; T = 4, H = 64: 16 x 8), 32
  // past it; splits up to one CTA per SM, at most the tiles.
  const Row rows[] = {{1, 64, 0, 0, 32}, {1, 128, 0, 0, 16}, {2, 64, 0, 0, 16}, {4, 64, 0, 0, 8},
                      {8, 64, 0, 0, 8},  {8, 128, 0, 0, 4},  {1, 128, 16, 0, 16}, {1, 64, 32, 0, 32},
                      {2, 64, 0, 5, 5},  {1, 64, 0, 1, 1},   {40, 128, 0, 0, 1}};
  for (const Row& r : rows) {
    SCOPED_TRACE("T=" + std::to_string(r.T) + " H=" + std::to_string(r.H) + " head_tile=" + std::to_string(r.ht) +
                 " kv_splits=" + std::to_string(r.splits));
    EXPECT_EQ(splits_of(r.T, r.H, 2048, small(r.ht, r.splits)), r.want);
  }
  // A short list: never more splits than its 64-key tiles (300 keys: 5 tiles).
  EXPECT_EQ(splits_of(1, 64, 300, small(0, 0)), 5);
  // Refused plans report no workspace: a head group the kernel has no instance for.
  EXPECT_EQ(splits_of(1, 64, 2048, small(64, 0)), 1);
}

}  // namespace
