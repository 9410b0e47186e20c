#pragma once
// Device side of the sparse kernel tests: host Case (reference_sparse/sparse_case.hpp, shared with
// the reference tests) -> device copies -> kernel -> host results, outputs poisoned before launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "kparity/kernels/sparse.hpp"
#include "reference_sparse/sparse_case.hpp"

namespace kpt {

// Until tests/ has a shared helper: every GPU test starts with this, so a host without a device
// reports the test as skipped (visible in ctest output) instead of passing silently.
inline bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}
#define KPT_REQUIRE_GPU()                                    \
  do {                                                       \
    if (!::kpt::have_device()) GTEST_SKIP() << "skipped: no CUDA device"; \
  } while (0)

// A host Tensor's whole storage (padding included) mirrored on the device, with the same view.
struct DevTensor {
  std::shared_ptr<void> mem;
  std::size_t bytes = 0;
  TensorView view;
  std::ptrdiff_t shift = 0;  // view.data - storage start
};
inline DevTensor upload(const Tensor& t) {
  DevTensor d;
  d.bytes = t.storage().size();
  void* p = nullptr;
  if (cudaMalloc(&p, d.bytes ? d.bytes : 16) != cudaSuccess) throw std::runtime_error("cudaMalloc failed");
  d.mem.reset(p, [](void* q) { cudaFree(q); });
  if (d.bytes && cudaMemcpy(p, t.storage().data(), d.bytes, cudaMemcpyHostToDevice) != cudaSuccess)
    throw std::runtime_error("upload failed");
  d.view = t.view();
  d.shift = static_cast<const std::byte*>(t.view().data) - t.storage().data();
  d.view.data = static_cast<std::byte*>(p) + d.shift;
  d.view.device = Device::cuda(0);
  return d;
}
inline void download(const DevTensor& d, Tensor& t) {
  if (d.bytes && cudaMemcpy(t.storage().data(), d.mem.get(), d.bytes, cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("download failed");
}

// Sanitizer runs stay fast and failures land on the right launch: tests always synchronise.
inline kparity::kernels::LaunchOptions test_launch(bool deep = true) {
  kparity::kernels::LaunchOptions o;
  o.validate = ValidateOptions::strict();
  o.validate.deep = deep;
  o.sync_after_launch = true;
  return o;
}

// Optional host layouts (strided copies of the case's tensors) for AP-S8.
struct GpuLayout {
  const Tensor* q = nullptr;
  const Tensor* ukv = nullptr;
  const Tensor* kv = nullptr;
  const Tensor* out = nullptr;  // a poisoned strided buffer
};

inline Result run_prefill_gpu(const Case& c, kparity::kernels::sparse::SparseTuning tu = {}, const GpuLayout& l = {},
                              bool lse_on = true, kparity::Status* status = nullptr, bool deep = true) {
  Csr pre = make_csr(c.pre), ext = make_csr(c.ext);
  Tensor out_c(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out_c.poison();
  lse.poison();
  Tensor out = l.out ? *l.out : out_c;
  DevTensor q = upload(l.q ? *l.q : c.q), ukv = upload(l.ukv ? *l.ukv : c.ukv), kv = upload(l.kv ? *l.kv : c.kv);
  DevTensor ip = upload(pre.indices), pp = upload(pre.indptr), ie = upload(ext.indices), pe = upload(ext.indptr);
  DevTensor sink = upload(c.sink), dout = upload(out), dlse = upload(lse);
  kparity::sparse::PagedPrefillArgs a;
  a.q = q.view;
  a.unified_kv = ukv.view;
  a.kv = kv.view;
  a.kv_indices_prefix = ip.view;
  a.kv_indptr_prefix = pp.view;
  a.kv_indices_extend = ie.view;
  a.kv_indptr_extend = pe.view;
  a.attn_sink = sink.view;
  a.softmax_scale = c.scale;
  a.replicated_logit_shift = c.shift;
  a.return_lse = lse_on;
  a.out = dout.view;
  if (lse_on) a.lse = dlse.view;
  kparity::Status s = kparity::kernels::sparse::paged_prefill(a, nullptr, test_launch(deep), tu);
  if (status) *status = s;
  else EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  download(dout, out);
  download(dlse, lse);
  return {read_all(out.view()), lse_on ? read_all(lse.view()) : std::vector<double>{}};
}

inline Result run_decode_gpu(const Case& c, kparity::kernels::sparse::SparseTuning tu = {}, bool with_ws = true) {
  Csr pre = make_csr(c.pre);
  Tensor out(c.dt, {c.T, c.H, c.D}), lse(DType::f32, {c.T, c.H});
  out.poison();
  lse.poison();
  DevTensor q = upload(c.q), ukv = upload(c.ukv), ip = upload(pre.indices), pp = upload(pre.indptr);
  DevTensor sink = upload(c.sink), dout = upload(out), dlse = upload(lse);
  kparity::sparse::PagedDecodeArgs a;
  a.q = q.view;
  a.unified_kv = ukv.view;
  a.kv_indices = ip.view;
  a.kv_indptr = pp.view;
  a.attn_sink = sink.view;
  a.softmax_scale = c.scale;
  a.return_lse = true;
  a.out = dout.view;
  a.lse = dlse.view;
  kparity::kernels::sparse::DecodeWorkspace ws;
  std::shared_ptr<void> wmem;
  if (with_ws) {
    ws.bytes = kparity::kernels::sparse::paged_decode_workspace_bytes(a, tu);
    if (ws.bytes) {
      void* p = nullptr;
      EXPECT_EQ(cudaMalloc(&p, ws.bytes), cudaSuccess);
      cudaMemset(p, 0xff, ws.bytes);  // poisoned: every partial the combine reads must be written
      wmem.reset(p, [](void* x) { cudaFree(x); });
      ws.data = p;
    }
  }
  kparity::Status s = kparity::kernels::sparse::paged_decode(a, nullptr, test_launch(), ws, tu);
  EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  download(dout, out);
  download(dlse, lse);
  return {read_all(out.view()), read_all(lse.view())};
}

}  // namespace kpt
