"""Repro: fla's fused_recurrent_kda returns an uninitialised final state for a sequence of length 0.

flash-linear-attention @ bc3b101d, fla/ops/kda/fused_recurrent.py:
  * fused_recurrent_kda_fwd allocates the final state with `q.new_empty(...)` (lines 279/281);
  * the kernel returns early when a sequence has no tokens (`if T == 0: return`, lines 99-101), before
    the final-state store at lines 227-233, so that state is never written.
Expected: the final state of an empty sequence is its initial state (zeros when there is none), as
chunk_kda gives (its chunk_gated_delta_rule_fwd_h allocates with new_zeros and stores h0 when there
are no chunks). Seen: whatever the allocator's block held (NaN here, because the script leaves NaN in
a freed block of that size first, to make "never written" visible).
Affects T = 0 batches and zero-length sequences inside a cu_seqlens batch (CUDA-graph padding).
A fix: drop the early return (the token loop then runs zero times and the final store writes h0 or
zeros), or allocate with new_zeros / copy h0 for empty sequences.

    python repro_fla_fused_recurrent_kda_T0_final_state.py [--fla-src PATH]

Needs torch, triton and fla. Imports the installed `fla`, or the one in PATH (a flash-linear-attention
checkout, the folder that holds `fla/`; also FLA_SRC=PATH). Prints PASS/FAIL per case; exit status 1
when any case fails (the bug is present).
"""
from __future__ import annotations

import os
import sys

import torch
import torch.nn.functional as F


def _fla_src() -> str | None:
    if "--fla-src" in sys.argv:
        return sys.argv[sys.argv.index("--fla-src") + 1]
    return os.environ.get("FLA_SRC")


if _fla_src():
    sys.path.insert(0, os.path.abspath(_fla_src()))
from fla.ops.kda import fused_recurrent_kda  # noqa: E402

DEV = "cuda"
H, K, V = 2, 64, 64


def inputs(T: int, seed: int = 0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    q = F.normalize(torch.randn(1, T, H, K, generator=g), dim=-1)
    k = F.normalize(torch.randn(1, T, H, K, generator=g), dim=-1)
    v = torch.randn(1, T, H, V, generator=g)
    gate = F.logsigmoid(torch.randn(1, T, H, K, generator=g))
    beta = torch.rand(1, T, H, generator=g).sigmoid()
    return [t.to(DEV) for t in (q, k, v, gate, beta)]


def poison(numel: int) -> None:
    """Leave NaN in a freed caching-allocator block of `numel` fp32."""
    x = torch.full((numel,), float("nan"), device=DEV)
    torch.cuda.synchronize()
    del x


def describe(t: torch.Tensor) -> str:
    n = t.numel()
    nan = int(torch.isnan(t).sum())
    zero = int((t == 0).sum())
    fin = t[torch.isfinite(t)]
    mx = float(fin.abs().max()) if fin.numel() else float("nan")
    return f"shape {list(t.shape)}: {nan} NaN, {zero} zeros of {n}; max |finite| {mx:.3g}"


def main() -> int:
    if not torch.cuda.is_available():
        print("needs a CUDA device")
        return 2
    import fla
    print(f"fla from {os.path.dirname(fla.__file__)}; torch {torch.__version__}")
    results = []

    # 1. T = 0, no initial state: the final state should be zeros.
    q, k, v, gate, beta = inputs(0)
    poison(1 * H * K * V)
    o, ht = fused_recurrent_kda(q, k, v, gate, beta, output_final_state=True)
    torch.cuda.synchronize()
    ok = torch.equal(ht, torch.zeros_like(ht))
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] T=0, no initial state: expected zeros; final_state {describe(ht)}")

    # 2. T = 0 with an initial state: the final state should be the initial state.
    h0 = torch.randn(1, H, K, V, device=DEV)
    poison(1 * H * K * V)
    o, ht = fused_recurrent_kda(q, k, v, gate, beta, initial_state=h0, output_final_state=True)
    torch.cuda.synchronize()
    ok = torch.equal(ht, h0)
    results.append(ok)
    print(f"[{'PASS' if ok else 'FAIL'}] T=0, initial state h0: expected h0; final_state {describe(ht)}, "
          f"max |ht - h0| = {float((ht - h0).abs().nan_to_num(float('inf')).max()):.3g}")

    # 3. varlen: cu_seqlens [0, 0, 5], the first sequence empty.
    q, k, v, gate, beta = inputs(5, seed=1)
    h0 = torch.randn(2, H, K, V, device=DEV)
    cu = torch.tensor([0, 0, 5], dtype=torch.long, device=DEV)
    poison(2 * H * K * V)
    o, ht = fused_recurrent_kda(q, k, v, gate, beta, initial_state=h0, output_final_state=True, cu_seqlens=cu)
    o1, ht1 = fused_recurrent_kda(q, k, v, gate, beta, initial_state=h0[1:].contiguous(), output_final_state=True)
    torch.cuda.synchronize()
    ok0 = torch.equal(ht[0], h0[0])
    ok1 = torch.allclose(ht[1], ht1[0], atol=1e-5, rtol=1e-5)
    results += [ok0, ok1]
    print(f"[{'PASS' if ok0 else 'FAIL'}] varlen cu_seqlens=[0, 0, 5], empty sequence 0: expected h0[0]; "
          f"final_state[0] {describe(ht[0])}")
    print(f"[{'PASS' if ok1 else 'FAIL'}] varlen, sequence 1 (5 tokens) against a separate call: "
          f"max |diff| {float((ht[1] - ht1[0]).abs().max()):.3g}")

    bad = results.count(False)
    print(f"{'FAIL' if bad else 'PASS'}: {bad} of {len(results)} cases wrong")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
