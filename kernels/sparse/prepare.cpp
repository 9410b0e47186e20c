#include "sparse/prepare.hpp"

#include <climits>
#include <cstdint>
#include <string>

#include "common/align.hpp"
#include "sparse/dispatch.hpp"
#include "src/launch_util.hpp"

namespace kparity::kernels::sparse::detail {
namespace {

// Every refusal names the value with the op's kernel-unsupported entry.
constexpr auto unsupported = &kernels::detail::not_implemented;

std::string shape_str(const TensorView& v) {
  std::string s = "(";
  for (int d = 0; d < v.ndim(); ++d) s += (d ? ", " : "") + std::to_string(v.size(d));
  return s + (v.ndim() == 1 ? ",)" : ")");
}

// 16-byte loads need a contiguous last dim, rows on 16-byte boundaries and D a multiple of 8.
bool vec_ok(const TensorView& v, std::int64_t D, std::initializer_list<int> row_dims) {
  if (D % 8 != 0 || v.stride(-1) != 1 || !aligned16(v.data)) return false;
  for (int d : row_dims)
    if (v.stride(d) % 8 != 0) return false;
  return true;
}

}  // namespace

Status make_plan(std::string_view op, std::string_view id, const OpViews& v, const SparseTuning& tuning, Plan& plan) {
  const TensorView& q = *v.q;
  if (q.dtype != DType::bf16 && q.dtype != DType::f16)
    return unsupported(op, id, "q.dtype", std::string(dtype_name(q.dtype)), "bf16, f16");
  if (q.ndim() != 3) return unsupported(op, id, "q.shape", shape_str(q), "[T, H, D]");
  const std::int64_t T = q.size(0), H = q.size(1), D = q.size(2);
  if (D < 1 || D > kMaxD) return unsupported(op, id, "D", std::to_string(D), "1 <= D <= 512");
  const Device dev = q.device;
  auto on_device = [&](const TensorView& t) { return t.device.is_cuda() && t.device == dev; };
  const TensorView& out = *v.out;
  if (out.ndim() != 3 || out.size(0) != T || out.size(1) != H || out.size(2) != D)
    return unsupported(op, id, "out.shape", shape_str(out), "q's shape [T, H, D]");
  if (out.dtype != q.dtype) return unsupported(op, id, "out.dtype", std::string(dtype_name(out.dtype)), "q's dtype");
  if (!on_device(out)) return unsupported(op, id, "out.device", out.device.str(), "q's CUDA device");
  if (!on_device(q)) return unsupported(op, id, "q.device", q.device.str(), "a CUDA device");
  for (int s = 0; s < 2; ++s) {
    if (v.src[s] == nullptr) continue;
    const TensorView& kv = *v.src[s];
    const std::string n = v.names[s];
    if (kv.ndim() != 2 || kv.size(1) != D) return unsupported(op, id, n + ".shape", shape_str(kv), "[rows, D] with q's D");
    if (kv.dtype != q.dtype) return unsupported(op, id, n + ".dtype", std::string(dtype_name(kv.dtype)), "q's dtype");
    if (kv.numel() > 0 && !on_device(kv)) return unsupported(op, id, n + ".device", kv.device.str(), "q's CUDA device");
    for (const TensorView* t : {v.idx[s], v.ptr[s]}) {
      const std::string tn = v.names[t == v.idx[s] ? 2 + s : 4 + s];
      if (t->dtype != DType::i32 && t->dtype != DType::i64)
        return unsupported(op, id, tn + ".dtype", std::string(dtype_name(t->dtype)), "i32, i64");
      if (t->ndim() != 1) return unsupported(op, id, tn + ".shape", shape_str(*t), "1-D");
      if (t->numel() > 0 && !on_device(*t)) return unsupported(op, id, tn + ".device", t->device.str(), "q's CUDA device");
    }
    if (v.ptr[s]->size(0) < T + 1)
      return unsupported(op, id, std::string(v.names[4 + s]) + ".shape", shape_str(*v.ptr[s]), "at least T+1 entries");
  }
  const TensorView& sink = *v.sink;
  if (dt_code(sink.dtype) < 0 || dt_code(sink.dtype) > kBF16)
    return unsupported(op, id, "attn_sink.dtype", std::string(dtype_name(sink.dtype)), "f32, bf16, f16");
  if (sink.ndim() != 1 || sink.size(0) < H)
    return unsupported(op, id, "attn_sink.shape", shape_str(sink), "1-D with at least H entries");
  if (H > 0 && !on_device(sink)) return unsupported(op, id, "attn_sink.device", sink.device.str(), "q's CUDA device");
  if (v.lse != nullptr) {
    const TensorView& l = *v.lse;
    if (l.dtype != DType::f32) return unsupported(op, id, "lse.dtype", std::string(dtype_name(l.dtype)), "f32");
    if (l.ndim() != 2 || l.size(0) != T || l.size(1) != H) return unsupported(op, id, "lse.shape", shape_str(l), "[T, H]");
    if (!on_device(l)) return unsupported(op, id, "lse.device", l.device.str(), "q's CUDA device");
  }

  int dp = 64;
  while (dp < D) dp *= 2;
  int ht = tuning.head_tile != 0 ? tuning.head_tile : (H <= 16 && dp >= 128 ? 16 : 64);
  if (!supported_tile(dp, ht)) return unsupported(op, id, "head_tile", std::to_string(ht), kTilesText);
  plan.dp = dp;
  plan.ht = ht;

  AttnParams& p = plan.p;
  p = AttnParams{};
  p.q = q.data, p.q_st = q.stride(0), p.q_sh = q.stride(1), p.q_sd = q.stride(2);
  p.vec_q = vec_ok(q, D, {0, 1});
  p.vec_kv = 1;
  for (int s = 0; s < 2; ++s) {
    if (v.src[s] == nullptr) continue;
    const TensorView& kv = *v.src[s];
    if (s == 1) p.has_extend = 1;
    p.src[s] = kv.data, p.src_sr[s] = kv.stride(0), p.src_sd[s] = kv.stride(1);
    if (kv.numel() > 0 && !vec_ok(kv, D, {0})) p.vec_kv = 0;
    p.idx[s] = v.idx[s]->data, p.idx_dt[s] = dt_code(v.idx[s]->dtype), p.idx_s[s] = v.idx[s]->stride(0);
    p.ptr[s] = v.ptr[s]->data, p.ptr_dt[s] = dt_code(v.ptr[s]->dtype), p.ptr_s[s] = v.ptr[s]->stride(0);
  }
  if (D % 8 != 0) p.vec_kv = 0;
  p.sink = sink.data, p.sink_dt = dt_code(sink.dtype), p.sink_s = sink.stride(0);
  p.out = out.data, p.out_st = out.stride(0), p.out_sh = out.stride(1), p.out_sd = out.stride(2);
  p.vec_out = vec_ok(out, D, {0, 1});
  if (v.lse != nullptr) p.has_lse = 1, p.lse = static_cast<float*>(v.lse->data), p.lse_st = v.lse->stride(0), p.lse_sh = v.lse->stride(1);
  p.T = T, p.H = H, p.D = D;
  p.n_head_tiles = (H + ht - 1) / ht;
  p.splits = 1;
  // The kernel receives fp32 scalars, as upstream's compile-time constants are (C.4 item 2).
  p.scale = static_cast<float>(v.scale);
  p.shift = static_cast<float>(v.shift);
  // The wgmma kernel (wg_addr_kernel.cuh) covers V4's shape (D in (256, 512], 64-head tiles, 16-byte
  // rows) and is the auto choice there (bench/results/sparse_2026-11-29.md); variant 1 keeps the
  // mma.sync kernel selectable (fallback, and the reference path of the variant tests).
  if (tuning.variant < 0 || tuning.variant > 2)
    return unsupported(op, id, "variant", std::to_string(tuning.variant), "0 (auto), 1 (mma.sync), 2 (wgmma)");
  const bool wg_ok = dp == 512 && ht == 64 && p.vec_q && p.vec_kv;
  plan.wg = wg_ok && tuning.variant != 1 ? 1 : 0;
  if (T * p.n_head_tiles > INT_MAX) return unsupported(op, id, "T", std::to_string(T), "T * ceil(H / head_tile) < 2^31");
  return Status::success();
}

Status launch(std::string_view op, std::string_view id, const Plan& plan, bool bf16, cudaStream_t stream,
              const LaunchOptions& o, bool fast) {
  const AttnParams& p = plan.p;
  if (p.T == 0 || p.H == 0) return Status::success();  // empty grid: nothing to launch (AP-S10)
  if (plan.wg == 2) fast = true;
  const DispatchResult r = plan.wg == 2 ? (bf16 ? launch_small_bf16(p, plan.ht, plan.gather, stream, true)
                                                : launch_small_f16(p, plan.ht, plan.gather, stream, true))
                           : bf16     ? launch_attn_bf16(p, plan.dp, plan.ht, plan.wg, stream, fast)
                                      : launch_attn_f16(p, plan.dp, plan.ht, plan.wg, stream, fast);
  if (!r.ok()) return kernels::detail::dispatch_failure(op, id, "launch setup", r);
  if (p.splits > 1 && !p.cluster) {  // an in-cluster merge (small-T decode) has no combine launch
    if (Status s = kernels::detail::finish_launch(op, stream, LaunchOptions{o.validate, false}); !s.ok()) return s;
    const DispatchResult c = bf16 ? launch_combine_bf16(p, stream, fast) : launch_combine_f16(p, stream, fast);
    if (!c.ok()) return kernels::detail::dispatch_failure(op, id, "combine launch setup", c);
  }
  return kernels::detail::finish_launch(op, stream, o);
}

}  // namespace kparity::kernels::sparse::detail
