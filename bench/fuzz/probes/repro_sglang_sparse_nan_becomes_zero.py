"""Repro: sglang's V4 sparse attention kernels (paged prefill and paged decode) turn a NaN in their inputs
into exact zeros: a NaN in a selected KV row or in q, or a NaN attn_sink, gives out == 0 for that token
(all heads, for a KV row) instead of NaN. Corrupted inputs are silently masked as a plausible value.

Status: both kernels do it alike (measured on the H200, bench/results/upstream_conventions_2026-12-02/), so
kparity's references follow it as upstream's convention (docs/upstream_conventions.md) and do not report it.
This script stays as the question to put to upstream (is masking a NaN intended?); its FAIL means "zeros".

sgl-project/sglang, python/sglang/kernels/ops/attention/dsv4/unified_kv_kernels/:
  paged_prefill.py @ 856c2e57, lines 200-206; paged_decode.py @ 078e5e2a, lines 345-357 (fused) and
  629-644 (split-K reduce). The finalisation is
      l_final = l_i * alpha + exp(sink - m_final)
      denom   = tl.maximum(l_final, 1e-30)
      out     = tl.where(l_final > 0.0, (acc * alpha) / denom, 0.0)
  A NaN logit or sink makes l_final NaN; `NaN > 0` is false, so the zero branch is taken (and
  tl.maximum, maxnum by default, would even drop the NaN from denom). A PyTorch softmax over the same
  rows gives NaN. Suggested: select the zero branch on `l_final == 0.0` instead of `not (l_final > 0)`
  (this keeps empty rows at 0; a +inf sink, where l_final is inf - inf = NaN, would then give NaN
  unless it is special-cased).

    KPARITY_PEERS=.peers python bench/fuzz/probes/repro_sglang_sparse_nan_becomes_zero.py

Imports sglang's modules when installed, else the files from $KPARITY_PEERS (default .peers) with their
ROCm-only utility imports stubbed for NVIDIA. Prints PASS (NaN reaches the output, like the reference)
or FAIL (zeros) per case; exit 1 when any case fails.
"""
from __future__ import annotations

import importlib.util
import os
import sys
import types

import torch


def load(stem: str):
    try:
        m = importlib.import_module(f"sglang.kernels.ops.attention.dsv4.unified_kv_kernels.{stem}")
        return m, m.__file__
    except Exception:  # noqa: BLE001  (not installed: the pinned file)
        pass

    def stub(name, **attrs):
        m = sys.modules.get(name) or types.ModuleType(name)
        for k, v in attrs.items():
            setattr(m, k, v)
        sys.modules[name] = m
    for n in ("sglang", "sglang.kernels", "sglang.kernels.ops", "sglang.kernels.ops.quantization", "sglang.srt",
              "aiter", "aiter.ops", "aiter.ops.triton", "aiter.ops.triton.utils"):
        stub(n)
    stub("sglang.srt.utils", is_hip=lambda: False)
    stub("sglang.srt.utils.common", is_gfx95_supported=lambda: False, is_gfx1250_supported=lambda: False)
    stub("sglang.kernels.ops.quantization.fp8_kernel", is_fp8_fnuz=lambda: False)
    stub("aiter.ops.triton.utils.device_info",
         get_num_sms=lambda: torch.cuda.get_device_properties(0).multi_processor_count)
    path = os.path.join(os.path.abspath(os.environ.get("KPARITY_PEERS", ".peers")), stem + ".py")
    spec = importlib.util.spec_from_file_location(stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod, path


T, H, D, P = 2, 16, 64, 8
LISTS = [[1, 2, 3], [4, 5, 6]]  # token 0 reads rows 1-3, token 1 rows 4-6


def tensors(poison: str):
    g = torch.Generator().manual_seed(0)
    q = (torch.randn(T, H, D, generator=g) * 0.5).to(torch.bfloat16)
    kv = (torch.randn(P, D, generator=g) * 0.5).to(torch.bfloat16)
    sink = torch.full((H,), 0.25, dtype=torch.float32)
    if poison == "kv":
        kv[2, 5] = float("nan")  # selected by token 0 only
    elif poison == "q":
        q[0, 3, 7] = float("nan")  # token 0, head 3
    elif poison == "sink":
        sink[3] = float("nan")  # head 3
    return q.cuda(), kv.cuda(), sink.cuda()


def csr():
    flat = [i for r in LISTS for i in r] + [0]
    ptr = [0]
    for r in LISTS:
        ptr.append(ptr[-1] + len(r))
    return (torch.tensor(flat, dtype=torch.int32, device="cuda"), torch.tensor(ptr, dtype=torch.int32, device="cuda"))


def reference(q, kv, sink, scale):
    out = torch.empty(T, H, D, dtype=torch.float32, device="cuda")
    for t, rows in enumerate(LISTS):
        K = kv[rows].float()
        s = scale * (q[t].float() @ K.T)
        w = torch.softmax(torch.cat([s, sink[:, None]], dim=1), dim=1)[:, :-1]
        out[t] = w @ K
    return out


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA device")
        return 2
    prefill, p1 = load("paged_prefill")
    decode, p2 = load("paged_decode")
    print(f"paged_prefill from {p1}\npaged_decode from {p2}")
    print(f"{torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    scale = D ** -0.5
    idx, ptr = csr()
    empty_idx = torch.zeros(1, dtype=torch.int32, device="cuda")
    empty_ptr = torch.zeros(T + 1, dtype=torch.int32, device="cuda")
    where = {"kv": (0, slice(None)), "q": (0, 3), "sink": (slice(None), 3)}
    results = []
    for poison, what in (("kv", "NaN in KV row 2 (selected by token 0)"), ("q", "NaN in q[0, 3, 7]"),
                         ("sink", "NaN attn_sink[3]")):
        q, kv, sink = tensors(poison)
        ref = reference(q, kv, sink, scale)
        outs = {
            "paged_prefill": prefill.sparse_attn_v4_paged_prefill(q, kv, idx, ptr, kv, empty_idx, empty_ptr, sink,
                                                                  scale),
            "paged_decode": decode.sparse_attn_v4_paged_decode(q, kv, idx, ptr, sink, scale),
        }
        torch.cuda.synchronize()
        r = ref[where[poison]]
        for name, out in outs.items():
            o = out.float()[where[poison]]
            nan, zero = int(torch.isnan(o).sum()), int((o == 0).sum())
            ok = nan > 0
            results.append(ok)
            print(f"[{'PASS' if ok else 'FAIL'}] {name}: {what}: reference has {int(torch.isnan(r).sum())} NaN of "
                  f"{r.numel()} there; kernel has {nan} NaN and {zero} zeros of {o.numel()}; other tokens/heads "
                  f"finite: {bool(torch.isfinite(out.float()[1] if poison != 'sink' else out.float()[:, 4]).all())}")
    bad = results.count(False)
    print(f"{'FAIL' if bad else 'PASS'}: {bad} of {len(results)} cases turn NaN into zeros")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
