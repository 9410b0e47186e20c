"""Host cost of kparity from Python (issue 14's performance targets), written as a markdown table.

  check:  kparity.check on a 13-tensor ReplaySSM decode call (issue 5's shapes), target <= 5 us, next
          to what it is made of (the C++ contract alone, the DLPack exports) and, with --upstream, the
          upstream wrapper's own Python checks;
  kernel: kparity.kernel's host time over the C++ launch it makes, target <= 3 us (CUDA device only).

    python python/bench/perf.py [--out FILE.md] [--upstream SGLANG_PYTHON_DIR] [--device cpu|cuda]

Method: each figure is the median of per-call times (time.perf_counter_ns around each call, the timer's
own cost measured on an empty call and subtracted), after warm-up, over 20000 calls for check and 2000
for kernel (the stream drained every 64 launches outside the timed region). "memo hit" repeats one
call (a decode loop over the same buffers: kparity reuses the last clean result, see
python/src/bind_checks.cpp); "memo miss" alternates two calls over different buffers, so every call
binds its arguments and runs the contract.
"""
from __future__ import annotations

import argparse
import ast
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

import torch

import kparity
from kparity import _kparity

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replayssm_call import replayssm_call  # noqa: E402

OP = "kda/replayssm_decode"


def per_call_ns(fn: Callable[[], Any], calls: int, drain: Callable[[], None] | None = None) -> float:
    for _ in range(min(calls, 2000)):
        fn()
    if drain:
        drain()
    clock = time.perf_counter_ns
    empty = []
    for _ in range(2000):
        t0 = clock()
        t1 = clock()
        empty.append(t1 - t0)
    floor = statistics.median(empty)
    times = []
    for i in range(calls):
        if drain and i % 64 == 0:
            drain()
        t0 = clock()
        fn()
        t1 = clock()
        times.append(t1 - t0)
    if drain:
        drain()
    return max(statistics.median(times) - floor, 0.0)


def upstream_checks(root: Path) -> Callable[..., Any] | None:
    """The upstream wrapper's checks, taken from an sglang checkout at run time (never copied into
    kparity): helion_fused_recurrent_kda_replayssm_decode's statements before its kernel selection,
    with validate_packed_decode_inputs from its module."""
    funcs: dict[str, ast.FunctionDef] = {}
    for path in root.rglob("*.py"):
        try:
            text = path.read_text()
        except OSError:
            continue
        if "validate_packed_decode_inputs" not in text and "helion_fused_recurrent_kda_replayssm_decode" not in text:
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.FunctionDef) and node.name in (
                    "validate_packed_decode_inputs", "helion_fused_recurrent_kda_replayssm_decode"):
                funcs[node.name] = node
    if len(funcs) != 2:
        return None
    wrapper = funcs["helion_fused_recurrent_kda_replayssm_decode"]
    body = []
    for stmt in wrapper.body:
        src = ast.unparse(stmt)
        if "helion" in src or "_select_" in src or "kernel(" in src:
            break
        if isinstance(stmt, ast.Expr) and isinstance(getattr(stmt, "value", None), ast.Constant):
            continue  # the docstring
        body.append(stmt)
    wrapper.body = body + [ast.Return(ast.Constant(None))]
    wrapper.returns = None
    module = ast.Module(body=[funcs["validate_packed_decode_inputs"], wrapper], type_ignores=[])
    ast.fix_missing_locations(module)
    ns: dict[str, Any] = {"torch": torch}
    exec(compile(module, "<upstream checks>", "exec"), ns)
    return ns["helion_fused_recurrent_kda_replayssm_decode"]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="")
    ap.add_argument("--upstream", default=os.environ.get("KPARITY_UPSTREAM_SGLANG", ""))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    opts = ap.parse_args()

    dev = opts.device
    a = replayssm_call(torch, dev)
    b = replayssm_call(torch, dev)
    tensors = [v for v in a.values() if isinstance(v, torch.Tensor)]
    assert len(tensors) == 13
    kparity.check(OP, **a)
    rows: list[tuple[str, float, str]] = []

    def row(name: str, ns: float, note: str = "") -> None:
        rows.append((name, ns / 1000.0, note))
        print(f"{name:58s} {ns / 1000.0:8.3f} us  {note}", flush=True)

    row("kparity.check, memo hit (same call each time)", per_call_ns(lambda: kparity.check(OP, **a), 20000),
        "target <= 5 us")
    flip = [a, b]
    state = {"i": 0}

    def alternate() -> None:
        state["i"] ^= 1
        kparity.check(OP, **flip[state["i"]])

    row("kparity.check, memo miss (two calls alternating)", per_call_ns(alternate, 20000))
    pos = [a[n] for n in kparity.kda.replayssm_decode.row.positional]
    row("kparity.kda.replayssm_decode.check(*upstream_args)",
        per_call_ns(lambda: kparity.kda.replayssm_decode.check(*pos), 20000))
    row("C++ contract alone (ArgBag bound once)", _kparity._time_contract(OP, 20000, **a))
    exchange = hasattr(torch.Tensor, "__dlpack_c_exchange_api__")
    to_dlpack = torch.utils.dlpack.to_dlpack
    row("13 x torch.utils.dlpack.to_dlpack (context)", per_call_ns(lambda: [to_dlpack(t) for t in tensors], 5000),
        "kparity uses the DLPack C exchange API instead" if exchange else "the export kparity pays per tensor here")
    if opts.upstream:
        up = upstream_checks(Path(opts.upstream))
        if up is None:
            row("upstream wrapper checks", float("nan"), f"not found under {opts.upstream}")
        else:
            args = {k: v for k, v in a.items()}
            row("upstream wrapper checks (sglang, Python)", per_call_ns(lambda: up(**args), 20000),
                "the checks kparity.check mirrors")
    if kparity.has_kernels and dev == "cuda":
        k = replayssm_call(torch, "cuda", B=1, slots=8)
        kparity.kernel(OP, **k)
        torch.cuda.synchronize()
        drain = torch.cuda.current_stream().synchronize
        py = per_call_ns(lambda: kparity.kernel(OP, **k), 2000, drain)
        cxx = _kparity._time_launcher(OP, **k)
        row("kparity.kernel host time (B=1)", py)
        row("C++ launch alone (same call)", cxx)
        row("kparity.kernel over the C++ launch", py - cxx, "target <= 3 us")

    env = (f"{platform.node()}, {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
           f"torch {torch.__version__} (DLPack C exchange API: {'yes' if exchange else 'no'}), device {dev}, "
           f"kernels built: {kparity.has_kernels}")
    lines = [f"Measured {time.strftime('%Y-%m-%d')} on {env}.", "", "| what | us per call | note |", "|---|---|---|"]
    lines += [f"| {n} | {v:.3f} | {note} |" for n, v, note in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if opts.out:
        Path(opts.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
