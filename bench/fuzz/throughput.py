"""Throughput of kparity.fuzz.check_implementation for a CUDA implementation (issue 15: the harness's
own overhead must not dominate a fast kernel, >= 1,000 cases per minute per property at default
shapes on the H200). The fast implementation is kparity's own kernels behind upstream's conventions
(kparity.testing.impls.kernels); the PyTorch examples on CUDA are measured next to it.

    OUT=out python bench/fuzz/throughput.py [--seconds 8] [--shapes small [large]] [--impls kernels torch]
                                            [--device cuda|cpu]

For every op, implementation and shape setting it runs the three default properties for --seconds
each and records cases, cases per minute and where a case's time goes: inside the implementation
(synchronised), on the Python side around it (materialising the call's images on the device, the
copy back, the returned outputs: CaseRunner.run less the implementation) and in kparity-fuzz-host
(drawing, the references, the rule: the rest). --device cpu measures the harness where there is no
GPU (the implementation is then the plain-PyTorch example on the CPU). Writes $OUT/fuzz_throughput.md
and $OUT/fuzz_throughput.json; exit status 1 when a kernels/small property on CUDA stays under 1,000
cases per minute.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import sys
import time
from typing import Any, Callable

import torch

import kparity
from kparity.fuzz import check_implementation
from kparity.fuzz import _case
from kparity.testing import impls

TARGET = 1000.0  # cases per minute per property (issue 15)


def timed(fn: Callable[..., Any], clock: list[float], cuda: bool) -> Callable[..., Any]:
    @functools.wraps(fn)
    def impl(*args: Any, **kw: Any) -> Any:
        if cuda:
            torch.cuda.synchronize()
        t = time.perf_counter()
        try:
            return fn(*args, **kw)
        finally:
            if cuda:
                torch.cuda.synchronize()
            clock[0] += time.perf_counter() - t
    return impl


def python_side_clock() -> list[float]:
    """Accumulates the seconds CaseRunner.run takes (materialise, call, copy back, returns)."""
    clock = [0.0]
    run = _case.CaseRunner.run

    def counted(self: Any, case: Any) -> Any:
        t = time.perf_counter()
        try:
            return run(self, case)
        finally:
            clock[0] += time.perf_counter() - t
    _case.CaseRunner.run = counted  # type: ignore[method-assign]
    return clock


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=8.0, help="budget per property")
    ap.add_argument("--shapes", nargs="+", default=["small"], choices=["small", "large"])
    ap.add_argument("--impls", nargs="+", default=["kernels", "torch"], choices=["kernels", "torch"])
    ap.add_argument("--ops", nargs="+", default=list(impls.CORRECT))
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = ap.parse_args()
    out_dir = os.environ.get("OUT", "fuzz-throughput-out")
    os.makedirs(out_dir, exist_ok=True)
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("fuzz throughput: skipped, no CUDA device")
        return 0
    py_clock = python_side_clock()
    rows: list[dict[str, Any]] = []
    for which in args.impls:
        if which == "kernels" and (not kparity.has_kernels or not cuda):
            print("fuzz throughput: kparity's kernels need CUDA and a build with them, skipping impls=kernels")
            continue
        for shapes in args.shapes:
            for op in args.ops:
                clock = [0.0]
                py_clock[0] = 0.0
                fn = impls.kernels(op) if which == "kernels" else impls.CORRECT[op]
                t0 = time.perf_counter()
                report = check_implementation(op, timed(fn, clock, cuda), device=args.device, shapes=shapes,
                                              time=3 * args.seconds, max_findings=1,
                                              corpus=os.path.join(out_dir, "corpus"))
                wall = time.perf_counter() - t0
                for p in report.properties:
                    rows.append({"impl": which, "device": args.device, "shapes": shapes, "op": op,
                                 "property": p.name.split("/")[2], "cases": p.cases, "discarded": p.discarded,
                                 "seconds": round(p.seconds, 2), "cases_per_minute": round(p.cases_per_minute),
                                 "passed": p.passed, "failure": str(p.failure) if p.failure else None})
                calls = sum(p.cases for p in report.properties) or 1
                share = clock[0] / wall if wall else 0.0
                py_share = max(py_clock[0] - clock[0], 0.0) / wall if wall else 0.0
                for r in rows[-len(report.properties):]:
                    r["impl_share"], r["python_share"] = round(share, 3), round(py_share, 3)
                    r["host_share"] = round(max(1.0 - share - py_share, 0.0), 3)
                    r["ms_per_case"] = round(1000 * wall / calls, 3)
                print(f"{which:7s} {shapes:5s} {op:22s} " + "  ".join(
                    f"{p.name.split('/')[2]}={p.cases_per_minute:.0f}/min" for p in report.properties)
                      + f"  (impl {share:.0%}, python side {py_share:.0%}, host {1 - share - py_share:.0%})",
                      flush=True)
    env = {"device": torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu",
           "torch": torch.__version__, "python": platform.python_version(),
           "kparity": kparity.__version__, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with open(os.path.join(out_dir, "fuzz_throughput.json"), "w") as f:
        json.dump({"environment": env, "target_cases_per_minute": TARGET, "rows": rows}, f, indent=2)
    lines = [f"# kparity.fuzz throughput, {env['date']}", "",
             f"{env['device']} ({args.device}), torch {env['torch']}, Python {env['python']}, kparity {env['kparity']}; "
             f"--seconds {args.seconds} per property. Target: {TARGET:.0f} cases/min per property for a CUDA "
             "implementation at default (small) shapes. Time per case: inside the implementation, on the Python "
             "side around it (materialise, copy back, returns), in kparity-fuzz-host (draw, references, rule).", "",
             "| impl | shapes | op | property | cases | discarded | cases/min | ms/case (op) | impl | python side "
             "| host | result |",
             "|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    short = False
    for r in rows:
        meets = r["cases_per_minute"] >= TARGET
        if r["impl"] == "kernels" and r["shapes"] == "small" and not meets:
            short = True
        verdict = ("pass" if r["passed"] else "FAIL") + ("" if meets else " (< target)")
        lines.append(f"| {r['impl']} | {r['shapes']} | {r['op']} | {r['property']} | {r['cases']} | {r['discarded']} | "
                     f"{r['cases_per_minute']} | {r['ms_per_case']} | {r['impl_share']:.0%} | {r['python_share']:.0%} "
                     f"| {r['host_share']:.0%} | {verdict} |")
    failures = [r for r in rows if r["failure"]]
    if failures:
        lines += ["", "## Failures", ""] + [f"- {r['impl']} {r['shapes']} {r['op']} {r['property']}: {r['failure']}"
                                            for r in failures]
    with open(os.path.join(out_dir, "fuzz_throughput.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
