"""kparity's own CUDA kernels through the bring-your-own-kernel API, as a kernel author would run it:
``check_implementation(op, kparity.testing.impls.kernels(op), device="cuda")`` for each of the five
kernels, every default property, ``--cases`` passing cases per property, a fresh seed per op (printed).
One process per op, all at once (the host side is CPU-bound; the GPU is shared).

    python bench/fuzz/kernels_check.py [--cases 2000] [--ops ...] [--out DIR]

Writes DIR/<op>.json (the report) and DIR/kernels_check.md (one row per property); exit status 1 when
a property fails or runs fewer cases than asked.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

OPS = ("kda/recurrent", "kda/packed_decode", "kda/replayssm_decode", "sparse/paged_prefill", "sparse/paged_decode")


def one(op: str, cases: int, seed: int, path: str) -> int:
    import kparity.testing.impls as impls
    from kparity.fuzz import check_implementation

    t0 = time.time()
    r = check_implementation(op, impls.kernels(op), device="cuda", cases=cases, seed=seed, report=path)
    print(f"{op} seed {seed:#x} ({time.time() - t0:.0f} s)\n{r.summary()}", flush=True)
    return 0 if r.passed else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--ops", nargs="*", default=list(OPS))
    ap.add_argument("--out", default="kernels-check-out")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=lambda s: int(s, 0), default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    if args.one:
        return one(args.one, args.cases, args.seed, os.path.join(args.out, args.one.replace("/", ".") + ".json"))
    procs = []
    for op in args.ops:
        seed = int.from_bytes(os.urandom(8), "little")
        log = open(os.path.join(args.out, op.replace("/", ".") + ".log"), "w")
        procs.append((op, seed, log, subprocess.Popen(
            [sys.executable, __file__, "--one", op, "--cases", str(args.cases), "--seed", hex(seed), "--out", args.out],
            stdout=log, stderr=subprocess.STDOUT)))
    rows, status = [], 0
    for op, seed, log, p in procs:
        rc = p.wait()
        log.close()
        path = os.path.join(args.out, op.replace("/", ".") + ".json")
        try:
            rep = json.load(open(path))
        except Exception as e:  # noqa: BLE001  (the process died: its log says why)
            rows.append(f"| {op} | {seed:#x} | - | - | - | no report ({type(e).__name__}), rc {rc} |")
            status = 1
            continue
        for prop in rep.get("properties", []):
            ok = prop.get("passed") and prop.get("cases", 0) >= args.cases
            status |= 0 if ok else 1
            fail = prop.get("failure") or {}
            rows.append(f"| {op} | {seed:#x} | {prop['name'].split('/')[2]} | {prop.get('cases')} | "
                        f"{prop.get('seconds', 0):.0f} | {'held' if ok else 'FAIL'} {str(fail.get('message', ''))[:160]} |")
        status |= rc
    text = "\n".join(["| op | seed | property | cases | s | verdict |", "|---|---|---|---:|---:|---|", *rows])
    open(os.path.join(args.out, "kernels_check.md"), "w").write(text + "\n")
    print(text)
    return 1 if status else 0


if __name__ == "__main__":
    sys.exit(main())
