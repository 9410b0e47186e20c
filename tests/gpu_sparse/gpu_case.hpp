#pragma once
// Device side of the sparse kernel tests: host Case (reference_sparse/sparse_case.hpp, shared with
// the reference tests) -> device copies -> kernel -> host results, outputs poisoned before launch.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "kparity/kernels/sparse.hpp"
#include "support/gpu_env.hpp"
#include "reference_sparse/sparse_case.hpp"

namespace kpt {

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
  kparity::gpu_test::DevTensor q(l.q ? *l.q : c.q), ukv(l.ukv ? *l.ukv : c.ukv), kv(l.kv ? *l.kv : c.kv);
  kparity::gpu_test::DevTensor ip(pre.indices), pp(pre.indptr), ie(ext.indices), pe(ext.indptr);
  kparity::gpu_test::DevTensor sink(c.sink), dout(out), dlse(lse);
  kparity::sparse::PagedPrefillArgs a;
  a.q = q.view();
  a.unified_kv = ukv.view();
  a.kv = kv.view();
  a.kv_indices_prefix = ip.view();
  a.kv_indptr_prefix = pp.view();
  a.kv_indices_extend = ie.view();
  a.kv_indptr_extend = pe.view();
  a.attn_sink = sink.view();
  a.softmax_scale = c.scale;
  a.replicated_logit_shift = c.shift;
  a.return_lse = lse_on;
  a.out = dout.view();
  if (lse_on) a.lse = dlse.view();
  kparity::Status s = kparity::kernels::sparse::paged_prefill(a, nullptr, test_launch(deep), tu);
  if (status) *status = s;
  else EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  dout.download(out);
  dlse.download(lse);
  return {read_all(out.view()), lse_on ? read_all(lse.view()) : std::vector<double>{}};
}

// Device copies of a decode case with poisoned outputs, and the call's arguments over them.
struct DecodeDev {
  Csr pre;
  Tensor out, lse;
  kparity::gpu_test::DevTensor q, ukv, ip, pp, sink, dout, dlse;
  kparity::sparse::PagedDecodeArgs a;
  static Tensor poisoned(DType dt, Shape shape) {
    Tensor t(dt, shape);
    t.poison();
    return t;
  }
  explicit DecodeDev(const Case& c)
      : pre(make_csr(c.pre)), out(poisoned(c.dt, {c.T, c.H, c.D})), lse(poisoned(DType::f32, {c.T, c.H})), q(c.q),
        ukv(c.ukv), ip(pre.indices), pp(pre.indptr), sink(c.sink), dout(out), dlse(lse) {
    a.q = q.view();
    a.unified_kv = ukv.view();
    a.kv_indices = ip.view();
    a.kv_indptr = pp.view();
    a.attn_sink = sink.view();
    a.softmax_scale = c.scale;
    a.return_lse = true;
    a.out = dout.view();
    a.lse = dlse.view();
  }
  Result download() {
    dout.download(out);
    dlse.download(lse);
    return {read_all(out.view()), read_all(lse.view())};
  }
};

// deep = false: no data checks, so NaN/Inf inputs reach the kernel (special-value tests).
inline Result run_decode_gpu(const Case& c, kparity::kernels::sparse::SparseTuning tu = {}, bool with_ws = true,
                             bool deep = true) {
  DecodeDev d(c);
  kparity::kernels::sparse::DecodeWorkspace ws;
  std::shared_ptr<void> wmem;
  if (with_ws) {
    ws.bytes = kparity::kernels::sparse::paged_decode_workspace_bytes(d.a, tu);
    if (ws.bytes) {
      void* p = nullptr;
      EXPECT_EQ(cudaMalloc(&p, ws.bytes), cudaSuccess);
      cudaMemset(p, 0xff, ws.bytes);  // poisoned: every partial the combine reads must be written
      wmem.reset(p, [](void* x) { cudaFree(x); });
      ws.data = p;
    }
  }
  kparity::Status s = kparity::kernels::sparse::paged_decode(d.a, nullptr, test_launch(deep), ws, tu);
  EXPECT_TRUE(s.ok()) << (s.first_error() ? s.first_error()->message : "");
  return d.download();
}

}  // namespace kpt
