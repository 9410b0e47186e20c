"""Repro: sglang's sparse_attn_v4_paged_decode raises ZeroDivisionError in its host-side split-K
reduce configuration, for T = 0 and for head_dim <= 16.

sgl-project/sglang @ 078e5e2a, python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/paged_decode.py,
_sparse_attn_v4_paged_decode_triton, the split-K branch (taken when T * ceil(H / block_h) < 2 * #SMs on
CUDA, i.e. small decode batches):
  * line 854-859: `base_grid_t_h = T * H`; when it is below 2 * #SMs,
    `d_chunks_needed = max(1, target_reduce_wg // base_grid_t_h)` divides by zero when T * H == 0.
    T = 0 always takes this branch: _kv_splits_heuristic clamps base_ctas = max(1, T * head_blocks)
    (line 203), so it returns > 1 splits.
  * line 860-861: `d_chunks_needed = min(d_chunks_needed, block_d // 32)` is 0 when
    block_d = next_pow2(D) < 32, and `block_d // d_chunks_needed` divides by zero.
    The split kernel itself has already run fine (it compiles for any D with next_pow2(D) >= 16).
Expected: an empty [0, H, D] output for T = 0 (the fused path's grid is simply empty), and the attention
output for D = 16 (the fused path, forced here through the private kv_splits=1, computes it).
A fix: return `out` early when T * H == 0, and clamp `d_chunks_needed` to >= 1 (or d_chunk = block_d
when block_d < 32).

    python repro_sglang_paged_decode_zero_division.py [--sglang-src PATH]

Needs torch, triton and sglang on a CUDA machine. Imports the installed sglang module, or from PATH
(also SGLANG_SRC=PATH): an sglang checkout (its python/ folder is put on sys.path and the module
imported normally), or the file paged_decode.py itself, loaded alone with its three ROCm-only helper
imports answered for NVIDIA (not HIP, not gfx95x/gfx1250, fp8 e4m3fn, the SM count). Prints PASS/FAIL
per case; exit 1 when any fails.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import traceback
import types

import torch


def _sglang_src() -> str | None:
    if "--sglang-src" in sys.argv:
        return sys.argv[sys.argv.index("--sglang-src") + 1]
    return os.environ.get("SGLANG_SRC")


def _stub(name, **attrs):
    m = sys.modules.get(name) or types.ModuleType(name)
    for k, v in attrs.items():
        setattr(m, k, v)
    sys.modules[name] = m


def _stub_aiter() -> None:
    """aiter (ROCm only) is asked for the SM count by _cu_count(): answer it for this GPU."""
    for n in ("aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils"):
        _stub(n)
    _stub("aiter.ops.triton.utils.device_info",
          get_num_sms=lambda: torch.cuda.get_device_properties(0).multi_processor_count)


def _stub_rocm_helpers() -> None:
    """The file's sglang imports that only matter on ROCm, answered for NVIDIA (no sglang install)."""
    for n in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.quantization", "sglang.srt"):
        _stub(n)
    _stub("sglang.srt.utils", is_hip=lambda: False)
    _stub("sglang.srt.utils.common", is_gfx95_supported=lambda: False, is_gfx1250_supported=lambda: False)
    _stub("sglang.kernels.ops.quantization.fp8_kernel", is_fp8_fnuz=lambda: False)
    _stub_aiter()


def load_paged_decode():
    src = _sglang_src()
    if src and os.path.isfile(src):  # the kernel file alone
        _stub_rocm_helpers()
        spec = importlib.util.spec_from_file_location("paged_decode", src)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod, src
    if src:  # a checkout
        root = os.path.abspath(src)
        sys.path.insert(0, os.path.join(root, "python") if os.path.isdir(os.path.join(root, "python")) else root)
    from sglang.kernels.ops.attention.dsv4.unified_kv_kernels import paged_decode  # type: ignore
    # On CUDA the wrapper's _cu_count() asks the ROCm-only aiter package for the SM count.
    try:
        import aiter.ops.triton.utils.device_info  # type: ignore  # noqa: F401
    except ImportError:
        _stub_aiter()
    return paged_decode, paged_decode.__file__


def reference(q, kv, lists, sink, scale):
    """fp32 softmax over the selected rows plus the sink logit (a key with value 0)."""
    T, H, D = q.shape
    out = torch.zeros(T, H, D, dtype=torch.float32, device=q.device)
    for t, rows in enumerate(lists):
        if not rows:
            continue
        K = kv[rows].float()
        s = scale * (q[t].float() @ K.T)  # [H, n]
        w = torch.softmax(torch.cat([s, sink.float()[:, None]], dim=1), dim=1)[:, :-1]
        out[t] = w @ K
    return out.to(q.dtype)


def case(mod, T, H, D, *, private_fused=False):
    g = torch.Generator().manual_seed(0)
    q = (torch.randn(T, H, D, generator=g) * 0.5).to(torch.bfloat16).cuda()
    kv = (torch.randn(8, D, generator=g) * 0.5).to(torch.bfloat16).cuda()
    lists = [[(t + j) % 8 for j in range(4)] for t in range(T)]
    flat = [i for r in lists for i in r] + [0]
    ptr = [0]
    for r in lists:
        ptr.append(ptr[-1] + len(r))
    idx = torch.tensor(flat, dtype=torch.int32, device="cuda")
    indptr = torch.tensor(ptr, dtype=torch.int32, device="cuda")
    sink = torch.full((H,), 0.25, dtype=torch.float32, device="cuda")
    scale = D ** -0.5
    if private_fused:
        out = mod._sparse_attn_v4_paged_decode_triton(q, kv, idx, indptr, sink, scale, kv_splits=1)
    else:
        out = mod.sparse_attn_v4_paged_decode(q, kv, idx, indptr, sink, scale)
    torch.cuda.synchronize()
    return out, reference(q, kv, lists, sink, scale)


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA device")
        return 2
    mod, path = load_paged_decode()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    print(f"paged_decode from {path}; {torch.cuda.get_device_name(0)} ({sms} SMs); torch {torch.__version__}")
    H = 16
    for T, D in ((0, 64), (1, 16), (4, 16)):
        print(f"  T={T} H={H} D={D}: split-K chosen: kv_splits={mod._kv_splits_heuristic(T, H, 16)}")
    results = []
    for T, D, want in ((0, 64, "an empty [0, 16, 64] output"), (1, 16, "the attention output"),
                       (4, 16, "the attention output")):
        try:
            out, ref = case(mod, T, H, D)
            ok = out.shape == (T, H, D) and torch.allclose(out.float(), ref.float(), atol=2e-2, rtol=2e-2)
            err = float((out.float() - ref.float()).abs().max()) if out.numel() else 0.0
            seen = f"output {list(out.shape)}, max |out - ref| {err:.3g}"
        except Exception as e:  # noqa: BLE001
            last = traceback.extract_tb(e.__traceback__)[-1]
            ok, seen = False, f"{type(e).__name__}: {e} at {os.path.basename(last.filename)}:{last.lineno}"
        results.append(ok)
        print(f"[{'PASS' if ok else 'FAIL'}] sparse_attn_v4_paged_decode T={T} H={H} D={D}: expected {want}; "
              f"saw {seen}")
    # The kernels are fine at D = 16: the fused path (kv_splits=1, private argument) computes it.
    try:
        out, ref = case(mod, 4, H, 16, private_fused=True)
        print(f"[info] same call through the fused path (private kv_splits=1): max |out - ref| "
              f"{float((out.float() - ref.float()).abs().max()):.3g}")
    except Exception as e:  # noqa: BLE001
        print(f"[info] fused path raised {type(e).__name__}: {e}")
    bad = results.count(False)
    print(f"{'FAIL' if bad else 'PASS'}: {bad} of {len(results)} cases wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
