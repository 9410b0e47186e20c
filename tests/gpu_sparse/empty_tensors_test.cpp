// Empty tensors with a NULL data pointer, as PyTorch and DLPack hand them over (a tensor without
// elements has no storage), in every argument of the sparse kernels that can be empty: no tokens
// (q, out, lse), no keys in a source (its rows and its index list), no keys at all, with lse absent
// and present and, for decode, with and without a split-K workspace (issue 23 item 2: a kernel must
// take an optional's presence from the launcher's flag, never from the pointer; gpu_case.hpp's
// DevTensor backs every view with storage, so the other tests never pass a null pointer).
// Each call runs on the kernel and on the reference; the kernel's results must meet the recipe
// bounds of sparse_case.hpp against the test-side closed form.
#include <cmath>
#include <memory>
#include <string>

#include "gpu_case.hpp"

namespace kpt {
namespace {

using kparity::gpu_test::DevTensor;
using kparity::kernels::sparse::SparseTuning;

TensorView framework_view(const DevTensor& d) {
  TensorView v = d.view();
  if (v.numel() == 0) v.data = nullptr;
  return v;
}

// CSR without the leading pad of make_csr, so that a source with no keys has an empty index list.
Csr tight_csr(const std::vector<List>& lists) { return make_csr(lists, 0); }

// A case with the given token count, rows per source and keys per token (row j of each source in
// turn; 0 keys: an empty list for every token).
Case shaped_case(std::uint64_t seed, std::int64_t T, std::int64_t P, std::int64_t Ne, std::int64_t pre_keys,
                 std::int64_t ext_keys) {
  Case c = random_case(seed, {.dt = DType::bf16, .T = T, .H = 4, .D = 64, .P = P, .Ne = Ne, .max_pre = 0,
                              .max_ext = 0, .sentinel_rate = 0.0});
  for (std::int64_t t = 0; t < T; ++t) {
    c.pre[t].clear();
    c.ext[t].clear();
    for (std::int64_t j = 0; j < pre_keys; ++j) c.pre[t].push_back((t + j) % P);
    for (std::int64_t j = 0; j < ext_keys; ++j) c.ext[t].push_back((t + 2 * j) % Ne);
  }
  return c;
}

std::string describe(const Case& c, bool lse_on) {
  std::size_t pre = 0, ext = 0;
  for (const auto& l : c.pre) pre += l.size();
  for (const auto& l : c.ext) ext += l.size();
  return "T=" + std::to_string(c.T) + " unified_kv rows " + std::to_string(c.ukv.view().size(0)) + " kv rows " +
         std::to_string(c.kv.view().size(0)) + ", " + std::to_string(pre) + " prefix and " + std::to_string(ext) +
         " extend keys" + (lse_on ? ", lse" : ", no lse");
}

struct GpuResult {
  kparity::Status status;
  Result r;
};

GpuResult prefill_with_nulls(const Case& c, bool lse_on, bool deep) {
  Csr pre = tight_csr(c.pre), ext = tight_csr(c.ext);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out.poison();
  lse.poison();
  DevTensor q(c.q), ukv(c.ukv), kv(c.kv), ip(pre.indices), pp(pre.indptr), ie(ext.indices), pe(ext.indptr);
  DevTensor sink(c.sink), dout(out), dlse(lse);
  kparity::sparse::PagedPrefillArgs a;
  a.q = framework_view(q);
  a.unified_kv = framework_view(ukv);
  a.kv = framework_view(kv);
  a.kv_indices_prefix = framework_view(ip);
  a.kv_indptr_prefix = framework_view(pp);
  a.kv_indices_extend = framework_view(ie);
  a.kv_indptr_extend = framework_view(pe);
  a.attn_sink = framework_view(sink);
  a.softmax_scale = c.scale;
  a.replicated_logit_shift = c.shift;
  a.return_lse = lse_on;
  a.out = framework_view(dout);
  if (lse_on) a.lse = framework_view(dlse);
  GpuResult g;
  g.status = kparity::kernels::sparse::paged_prefill(a, nullptr, test_launch(deep));
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dout.download(out);
  dlse.download(lse);
  g.r = {read_all(out.view()), lse_on ? read_all(lse.view()) : std::vector<double>{}};
  return g;
}

GpuResult decode_with_nulls(const Case& c, bool lse_on, int splits) {
  Csr pre = tight_csr(c.pre);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out.poison();
  lse.poison();
  DevTensor q(c.q), ukv(c.ukv), ip(pre.indices), pp(pre.indptr), sink(c.sink), dout(out), dlse(lse);
  kparity::sparse::PagedDecodeArgs a;
  a.q = framework_view(q);
  a.unified_kv = framework_view(ukv);
  a.kv_indices = framework_view(ip);
  a.kv_indptr = framework_view(pp);
  a.attn_sink = framework_view(sink);
  a.softmax_scale = c.scale;
  a.return_lse = lse_on;
  a.out = framework_view(dout);
  if (lse_on) a.lse = framework_view(dlse);
  const SparseTuning tu{.kv_splits = splits};
  kparity::kernels::sparse::DecodeWorkspace ws;
  std::shared_ptr<void> wmem;
  ws.bytes = kparity::kernels::sparse::paged_decode_workspace_bytes(a, tu);
  if (ws.bytes) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, ws.bytes), cudaSuccess);
    cudaMemset(p, 0xff, ws.bytes);
    wmem.reset(p, [](void* x) { cudaFree(x); });
    ws.data = p;
  }
  GpuResult g;
  g.status = kparity::kernels::sparse::paged_decode(a, nullptr, test_launch(), ws, tu);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  dout.download(out);
  dlse.download(lse);
  g.r = {read_all(out.view()), lse_on ? read_all(lse.view()) : std::vector<double>{}};
  return g;
}

void expect_recipe(const Case& c, const Result& ker, bool lse_on) {
  const Expect e = closed_form(c);
  EXPECT_TRUE(within(ker.out, e.out, faithful_out_bound(e, c.dt))) << "out";
  if (lse_on) EXPECT_TRUE(within(ker.lse, e.lse, faithful_lse_bound(e))) << "lse";
}

TEST(GpuSparseEmptyTensors, PrefillWithNullPointedEmptyArguments) {
  KPARITY_REQUIRE_GPU();
  struct Shape { std::int64_t T, P, Ne, pre, ext; };
  const Shape shapes[] = {
      {0, 6, 5, 0, 0},   // no tokens: q, out, lse and both index lists empty
      {0, 0, 0, 0, 0},   // no tokens and no rows in either source
      {3, 6, 0, 2, 0},   // no extend keys: kv and kv_indices_extend empty
      {3, 0, 5, 0, 2},   // no prefix keys: unified_kv and kv_indices_prefix empty
      {3, 0, 0, 0, 0},   // no keys at all: the sink alone (out 0, lse the sink)
      {3, 6, 5, 2, 0},   // rows in both sources, extend list empty
  };
  std::uint64_t seed = 900;
  for (const Shape& s : shapes)
    for (bool lse_on : {false, true})
      for (bool deep : {false, true}) {
        const Case c = shaped_case(++seed, s.T, s.P, s.Ne, s.pre, s.ext);
        SCOPED_TRACE(describe(c, lse_on) + (deep ? " (deep pass)" : ""));
        const GpuResult g = prefill_with_nulls(c, lse_on, deep);
        ASSERT_TRUE(g.status.ok()) << g.status.first_error()->message;
        expect_recipe(c, g.r, lse_on);
        if (s.pre + s.ext == 0)  // only the sink: exact zeros
          for (double x : g.r.out) ASSERT_EQ(x, 0.0);
      }
}

TEST(GpuSparseEmptyTensors, DecodeWithNullPointedEmptyArguments) {
  KPARITY_REQUIRE_GPU();
  struct Shape { std::int64_t T, P, keys; };
  const Shape shapes[] = {{0, 6, 0}, {0, 0, 0}, {3, 0, 0}, {3, 6, 0}, {2, 6, 3}};
  std::uint64_t seed = 950;
  for (const Shape& s : shapes)
    for (bool lse_on : {false, true})
      for (int splits : {1, 4}) {  // single pass; split-K with its workspace and combine kernel
        const Case c = shaped_case(++seed, s.T, s.P, 0, s.keys, 0);
        SCOPED_TRACE(describe(c, lse_on) + ", kv_splits " + std::to_string(splits));
        const GpuResult g = decode_with_nulls(c, lse_on, splits);
        ASSERT_TRUE(g.status.ok()) << g.status.first_error()->message;
        expect_recipe(c, g.r, lse_on);
      }
}

}  // namespace
}  // namespace kpt
