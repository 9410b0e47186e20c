"""The explain step's cost beside the shrink it follows (issue 33), on the CPU at small shapes: the
plain-PyTorch planted slips of kparity.testing.impls.planted_findings through check_implementation,
and optionally a C ABI plugin through `kparity fuzz --impl` (--cli and --plugin). Prints one row per
finding: the explain step's seconds and trials, the shrink's seconds, the round's (search + shrink).

    python bench/fuzz/explain_cost.py [--seeds 41 42 43] [--cli build/cli/kparity --plugin lib.so]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile


def rows_of(report: dict, label: str, seed: int) -> list[str]:
    out = []
    for p in report.get("properties", []):
        for f in p.get("findings", []):
            e = f.get("explain") or {}
            if not e:
                continue
            out.append(f"| {label} | {seed} | {f['display'][:60]} | {e['trials']} | {e['seconds']:.3f} | "
                       f"{e.get('shrink_seconds', 0):.3f} | {e.get('round_seconds', 0):.3f} | "
                       f"{e['seconds'] / max(e.get('shrink_seconds', 0), 1e-9):.2f} | {len(f.get('examples', []))} |")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[41, 42, 43])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--cli", help="the kparity executable, for --plugin")
    ap.add_argument("--plugin", help="a C ABI plugin with a sparse/paged_decode slip")
    args = ap.parse_args()
    print("| implementation | seed | finding | trials | explain s | shrink s | round s | explain/shrink | merged |")
    print("|---|---|---|---|---|---|---|---|---|")
    from kparity.fuzz import check_implementation
    from kparity.testing.impls import planted_findings as pf
    for label, (op, impl) in (("python drops_fifth_key", pf.DROPS_FIFTH_KEY),
                              ("python ignores_inf_sink", pf.IGNORES_INF_SINK),
                              ("python ignores_q_strides", pf.IGNORES_Q_STRIDES)):
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as d:
                r = check_implementation(op, impl, device="cpu", corpus=d, cases=args.cases, seed=seed,
                                         properties=["differential"])
                for row in rows_of(r.to_json(), label, seed):
                    print(row, flush=True)
    if args.cli and args.plugin:
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as d:
                report = os.path.join(d, "report.json")
                subprocess.run([args.cli, "fuzz", "--impl", args.plugin, "--op", "sparse/paged_decode", "--property",
                                "sparse/paged_decode/differential/" + _plugin_name(args.cli, args.plugin),
                                "--cases", str(args.cases), "--seed", str(seed), "--explain-seconds", "3",
                                "--corpus", d, "--report", report], capture_output=True, text=True)
                with open(report, encoding="utf-8") as f:
                    for row in rows_of(json.load(f), "C ABI " + os.path.basename(args.plugin), seed):
                        print(row, flush=True)
    return 0


def _plugin_name(cli: str, plugin: str) -> str:
    """The plugin's name as its properties carry it ('planted-drops-fifth-key')."""
    out = subprocess.run([cli, "fuzz", "--impl", plugin, "--list"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if "sparse/paged_decode/differential/" in line:
            return line.split("sparse/paged_decode/differential/")[1].split()[0]
    return "impl"


if __name__ == "__main__":
    raise SystemExit(main())
