"""The explain step's cost beside the shrink it follows (issue 33), on the CPU at small shapes: the
plain-PyTorch planted slips of kparity.testing.impls.planted_findings through check_implementation,
and optionally the C ABI planted slips (tests/fuzz_external/plugins/planted_impl.cpp, bugs 7-10, built
into <build>/tests) through `kparity fuzz --impl` (--cli and --plugins). Prints one markdown row per
finding: the explain step's seconds and trials, the shrink's seconds, the round's (search + shrink).

--no-python skips the Python slips. --plain runs the C ABI slips as a user would, `kparity fuzz --impl
lib.so --op OP` with no other option (every property of the op, default explain budget, worker
processes), and --campaign runs kparity's own campaign on the self-test's planted kernel bugs
(`kparity fuzz --backend selftest/<bug>`: both differential properties of the bug's op), whose
findings the campaign explains as it does the CUDA backend's.

    python bench/fuzz/explain_cost.py [--seeds 41 42 43] [--cli build/cli/kparity --plugins build/tests]
                                      [--no-python] [--plain] [--campaign] [--kda]

--kda keeps the KDA ones only: the C ABI last-chunk slip, the self-test's six KDA bugs, the Python
last-chunk, grouped-heads (GQA_ONLY) and fp16-only (FP16_ONLY) slips.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile


def rows_of(report: dict, label: str, seed: int, kind: bool = False) -> list[str]:
    out = []
    for p in report.get("properties", []):
        for f in p.get("findings", []):
            e = f.get("explain") or {}
            if not e:
                continue
            name = f"{label} ({p['name'].split('/')[2]})" if kind else label
            out.append(f"| {name} | {seed} | {f['display'][:60]} | {e['trials']} | {e['seconds']:.3f} | "
                       f"{e.get('shrink_seconds', 0):.3f} | {e.get('round_seconds', 0):.3f} | "
                       f"{e['seconds'] / max(e.get('shrink_seconds', 0), 1e-9):.2f} | {len(f.get('examples', []))} |")
    return out


def campaign_rows(report: dict, label: str, seed: int) -> list[str]:
    """kparity's own campaign: one explained failure per property (no merging, so `merged` is -)."""
    out = []
    for p in report.get("properties", []):
        e = p.get("explain") or {}
        if not e:
            continue
        kind = p["name"].split("/")[2]
        out.append(f"| {label} ({kind}) | {seed} | {e['line'][:60]} | {e['trials']} | {e['seconds']:.3f} | "
                   f"{e.get('shrink_seconds', 0):.3f} | {e.get('round_seconds', 0):.3f} | "
                   f"{e['seconds'] / max(e.get('shrink_seconds', 0), 1e-9):.2f} | - |")
    return out


def run_cli(cli: str, args: list[str], label: str, seed: int, rows) -> None:
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "report.json")
        subprocess.run([cli, "fuzz", *args, "--seed", str(seed), "--corpus", d, "--report", report],
                       capture_output=True, text=True)
        with open(report, encoding="utf-8") as f:
            for row in rows(json.load(f), label, seed):
                print(row, flush=True)


SLIPS = (("drops-fifth-key", "sparse/paged_decode"), ("ignores-inf-sink", "sparse/paged_decode"),
         ("ignores-q-strides", "sparse/paged_decode"), ("wrong-last-chunk", "kda/recurrent"))
BUGS = (("inclusive-suffix-decay", "kda/replayssm_decode"), ("sink-in-numerator", "sparse/paged_prefill"),
        ("beta-not-rounded", "kda/replayssm_decode"), ("cursor-off-by-one", "kda/replayssm_decode"),
        ("duplicate-indices-dropped", "sparse/paged_decode"), ("wrong-gqa-head-mapping", "kda/packed_decode"),
        ("missed-padding-row", "kda/packed_decode"), ("state-written-on-append", "kda/replayssm_decode"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", type=int, nargs="+", default=[41, 42, 43])
    ap.add_argument("--cases", type=int, default=300)
    ap.add_argument("--cli", help="the kparity executable, for --plugin")
    ap.add_argument("--plugins", help="the folder holding libkparity_test_planted_<slip>.so")
    ap.add_argument("--no-python", action="store_true", help="skip the plain-PyTorch slips")
    ap.add_argument("--plain", action="store_true", help="the C ABI slips through a plain `kparity fuzz --impl`")
    ap.add_argument("--campaign", action="store_true", help="kparity's own campaign on the planted kernel bugs")
    ap.add_argument("--kda", action="store_true", help="the KDA slips and bugs only (the KDA knobs' paths)")
    args = ap.parse_args()
    kda = (lambda op: op.startswith("kda/")) if args.kda else (lambda op: True)
    print("| implementation | seed | finding | trials | explain s | shrink s | round s | explain/shrink | merged |")
    print("|---|---|---|---|---|---|---|---|---|")
    if args.cli and args.plain:
        for slip, op in filter(lambda so: kda(so[1]), SLIPS):
            lib = os.path.join(args.plugins, f"libkparity_test_planted_{slip.replace('-', '_')}.so")
            for seed in args.seeds:
                run_cli(args.cli, ["--impl", lib, "--op", op, "--cases", str(args.cases)], "plain --impl " + slip, seed,
                        lambda r, label, s: rows_of(r, label, s, kind=True))
    if args.cli and args.campaign:
        for bug, op in filter(lambda bo: kda(bo[1]), BUGS):
            for seed in args.seeds:
                run_cli(args.cli, ["--backend", "selftest/" + bug, "--op", op, "--cases", str(args.cases)],
                        "selftest/" + bug, seed, campaign_rows)
    if args.no_python:
        return 0
    from kparity.fuzz import check_implementation
    from kparity.testing.impls import planted_findings as pf
    for label, (op, impl) in (("python drops_fifth_key", pf.DROPS_FIFTH_KEY),
                              ("python ignores_inf_sink", pf.IGNORES_INF_SINK),
                              ("python ignores_q_strides", pf.IGNORES_Q_STRIDES),
                              ("python wrong_last_chunk", pf.WRONG_LAST_CHUNK),
                              ("python gqa_only", pf.GQA_ONLY), ("python fp16_only", pf.FP16_ONLY)):
        if not kda(op):
            continue
        for seed in args.seeds:
            with tempfile.TemporaryDirectory() as d:
                r = check_implementation(op, impl, device="cpu", corpus=d, cases=args.cases, seed=seed,
                                         properties=["differential"])
                for row in rows_of(r.to_json(), label, seed):
                    print(row, flush=True)
    if args.cli and args.plugins:
        for slip, op in filter(lambda so: kda(so[1]), SLIPS):
            lib = os.path.join(args.plugins, f"libkparity_test_planted_{slip.replace('-', '_')}.so")
            for seed in args.seeds:
                with tempfile.TemporaryDirectory() as d:
                    report = os.path.join(d, "report.json")
                    subprocess.run([args.cli, "fuzz", "--impl", lib, "--op", op, "--property",
                                    f"{op}/differential/planted-{slip}", "--cases", str(args.cases), "--seed",
                                    str(seed), "--explain-seconds", "3", "--corpus", d, "--report", report],
                                   capture_output=True, text=True)
                    with open(report, encoding="utf-8") as f:
                        for row in rows_of(json.load(f), "C ABI " + slip, seed):
                            print(row, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
