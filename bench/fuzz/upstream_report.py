"""The report half of bench/fuzz/upstream.py (its runs and targets stay there): the readings of
known findings by target, and the markdown report (upstream_<date>.md) made from the runs' results,
also re-rendered from saved per-run reports (--render)."""
from __future__ import annotations

import argparse
import json
import os
from typing import Any

#: Readings of findings, by "<target prefix>:<finding id>" (the 8 hex digits a report prints: class,
#: tensor, kind and masked message, fuzz/backends/findings.hpp; the same id means the same failure on
#: another op, so a reading belongs to its targets) or "<target prefix>:<signature prefix>"
#: ("crashed||||ZeroDivisionError"). One of "their bug", "our spec", "precision" (a rounding the
#: faithful model does not make), or anything else worth a word; a finding with no entry reads
#: "unclassified".
READINGS: dict[str, str] = {
    # Read from the H200 run of 2026-12-02 05:04 (bench/results/upstream_2026-12-02_0504.md) and the conventions probe
    # (docs/upstream_conventions.md, bench/results/upstream_conventions_2026-12-02/).
    "sglang-triton-paged-decode:ff093243": "their bug: paged_decode.py:859 divides by T*H (T = 0) and :861 by block_d//32 (D <= 16) on the "
                "split-K path (bench/results/upstream_repros_2026-12-02/repro_sglang_paged_decode_zero_division.py)",
    "sglang-triton-paged-decode:997c37ca": "their inconsistency: decode leaves NaN in the column of a lone -inf-logit key with a -inf sink "
                "(0 * inf, not re-masked), prefill writes 0 there; kparity keeps prefill's 0 (docs/upstream_conventions.md)",
    "sglang-triton-replayssm@faithful:db8e567a": "precision: the ReplaySSM reconstruction dot runs in TF32; judged under the faithful (fp32) profile "
                "on purpose, it passes under tf32-dot",
    "sglang-triton-replayssm@faithful:2349da32": "precision: k_cache is stored as rt(rt(k_hat, out dtype), ring dtype) (sglang line 414), modelled "
                "by the tf32-dot / sglang-triton profile, under which it passes",
    # From the H200 runs of 2026-12-02 06:08-06:42 (pins, every target; bench/results/upstream_2026-12-02.md).
    "sglang-triton-replayssm-as-is:74c1fd44": "their wrapper's domain: the Triton wrapper refuses rings that are not "
                "contiguous (kparity's contract, kda.md C.1, takes any ring strides); the laid-out target passes "
                "contiguous copies and its numerics hold",
    "sglang-triton-replayssm-as-is:c6a460b6": "their wrapper's domain: the Triton wrapper takes int32 "
                "ssm_state_indices only (kparity's contract also takes int64); the laid-out target converts",
    "fla-fused-recurrent-kda:f1ad4288": "their bug: fused_recurrent_kda never writes the final state of a sequence "
                "without tokens (T = 0, or an empty sequence in a cu_seqlens batch): new_empty's leftovers where the "
                "initial state (or zeros) belongs (repro_fla_fused_recurrent_kda_T0_final_state.py)",
    "fla-fused-recurrent-kda:0ebeff8f": "their bug: the same unwritten final state of an empty sequence, seen as "
                "NaN/Inf in the leftovers (repro_fla_fused_recurrent_kda_T0_final_state.py)",
    "fla-chunk-kda:859767a5": "ours, fixed: the harness passed chunk_size as a float (the host sends every scalar as "
                "one) and chunk_kda calls chunk_size.bit_length(); an int-defaulted scalar now goes as an int "
                "(test_an_int_scalar_reaches_the_implementation_as_an_int)",
    "fla-chunk-kda@faithful:f1ad4288": "precision (probed 2026-12-02 08:25, modelled by the fla-chunk profile): "
                "final_state off the oracle by hundreds of bf16 units in its smallest entries, where kparity's faithful "
                "kda/chunk (the fp32 recurrence) is fp32-tight; chunk_kda stores its intermediates in the inputs' dtype "
                "(normalised q/k, Aqk, (I + Akk)^-1, w, u, kg, per-chunk h, v_new) and runs TF32 dots; with the "
                "inputs widened to fp32 the error shrank 2-5x (probes/fla_chunk_precision.py), and kparity's "
                "fla-chunk model of those rounding points (reference/kda/chunk_fla.cpp) explains all 239 validating "
                "calls of 311 captured from chunk_kda by the rule, where the faithful profile fails 138 of them",
    "fla-chunk-kda@faithful:db8e567a": "precision: the same stored bf16 intermediates of the chunked form, seen "
                "first in final_state with values=typical; passes under the fla-chunk profile",
    "fla-chunk-kda:997c37ca": "their inconsistency (measured by the conventions probe, docs/upstream_conventions.md kda/chunk "
                "k-nan): a NaN in token 2's k makes token 0's output NaN inside the same chunk (out[0, 0, 2, 0]: "
                "NaN, the causal recurrence's value 0.75): the masked intra-chunk products carry NaN * 0 backwards "
                "in time; fused_recurrent_kda stays causal",
    "sglang-triton-replayssm:a38f5b2b": "their bug (minor): the wrapper's literal stride test rejects an [HV, V, K]-contiguous state with a "
                "size-1 dim, which .contiguous() cannot fix (repro_sglang_replayssm_size1_stride.py)",
}


# --- the report ---------------------------------------------------------------------------------------------

def _applies(prefix: str, target: str, profile: str | None) -> bool:
    # A READINGS key is "<target prefix>[@<profile>]:<id or signature>": a reading qualified by a
    # profile holds for that profile's runs only (a precision finding of the faithful profile, which
    # the kernel's own profile models, must fail under that profile, not be accepted there).
    name, _, only = prefix.partition("@")
    return target.startswith(name) and (not only or profile is None or only == profile)


def known_for(target: str, profile: str | None = None) -> list[str]:
    """The finding ids READINGS classifies for this target (and profile): accepted in a run (counted
    as known hits, never failures), so that it digs for what is not read yet instead of shrinking
    them again."""
    return [what for key in READINGS for prefix, _, what in [key.partition(":")]
            if _applies(prefix, target, profile) and "|" not in what]


def reading(finding: dict[str, Any], target: str, profile: str | None = None) -> str:
    for key, value in READINGS.items():
        prefix, _, what = key.partition(":")
        if not _applies(prefix, target, profile):
            continue
        if what == finding.get("id") or ("|" in what and finding.get("signature", "").startswith(what)):
            return value
    return "unclassified"


def cell(text: Any, n: int = 240) -> str:
    s = str(text).replace("|", "\\|").replace("\n", " ")
    return s if len(s) <= n else s[: n - 1] + "…"


def markdown(results: list[dict[str, Any]], args: argparse.Namespace, started: str, gpu: str, wall: float,
             torch_version: str | None = None) -> str:
    if torch_version is None:
        import torch
        torch_version = torch.__version__

    lines = [f"# Upstream kernels through kparity.fuzz, {started}", "",
             f"{gpu}, torch {torch_version}; peers from `{args.peers}`; {wall:.0f} s wall for {len(results)} "
             f"runs in {args.jobs} processes; per run {args.seconds_small:.0f} s at small shapes and "
             f"{args.seconds_preset:.0f} s at the model's preset; up to {args.max_findings} findings per property.", "",
             "Coverage: the share of the generator's calls inside the declared domain (the kernel's own limits "
             "and the compile budget); cases: calls run and judged; declined: NotImplementedError.", "",
             "| target | op | profile | shapes | property | cases | coverage | declined | known hits | verdict |",
             "|---|---|---|---|---|---:|---:|---:|---:|---|"]
    findings = []
    for r in results:
        if "skipped" in r:
            lines.append(f"| {r['run']} | - | - | - | - | - | - | - | - | skipped: {cell(r['skipped'], 160)} |")
            continue
        if r.get("error") and "report" not in r:
            lines.append(f"| {r['run']} | - | - | - | - | - | - | - | - | not run: {cell(r['error'], 160)} |")
            continue
        rep = r["report"]
        if rep["implementation"]["error"]:
            lines.append(f"| {r['target']} | {r['op']} | {r['profile']} | {r['shapes']} | - | - | - | - | - | "
                         f"not run: {cell(rep['implementation']['error'], 160)} |")
        for p in rep.get("properties", []):
            cov = p.get("coverage", {})
            kind = p["name"].split("/")[2]
            fs = p.get("findings", [])
            verdict = "pass" if p.get("passed") else (f"{len(fs)} finding{'s' if len(fs) != 1 else ''}" if fs
                                                      else "not exercised: " + cell(p.get("stopped", ""), 80))
            hits = sum(cov.get("known_hits", {}).values())
            lines.append(f"| {r['target']} | {r['op']} | {r['profile']} | {r['shapes']} | {kind} | {p.get('cases', 0)} | "
                         f"{100 * cov.get('share', 1.0):.0f}% of {cov.get('drawn', 0)} | {cov.get('declined', 0)} | "
                         f"{hits} | {verdict} |")
            for f in fs:
                findings.append((r, kind, f))
    lines += ["", "## Declared domains", "",
              "Each run's domain: the kernel's own limits (`supports`), the small-shape run's pins (the shape "
              "classes it compiles: `check_implementation(pins=...)`), and the compile keys it met against its "
              "cap (0: no cap).", "",
              "| target | profile | shapes | domain | pins | compile keys (cap) | seconds |",
              "|---|---|---|---|---|---:|---:|"]
    for r in results:
        if "report" not in r or "domain" not in r:
            continue
        lines.append(f"| {r['target']} | {r['profile']} | {r['shapes']} | {cell(r['domain'], 80)} | "
                     f"{'`' + r['pins'] + '`' if r.get('pins') else '-'} | {r.get('classes_seen', '?')} "
                     f"({r.get('classes', 0)}) | {r.get('seconds', 0):.0f} |")
    hits = [(r, p["name"].split("/")[2], fid, n) for r in results if "report" in r
            for p in r["report"].get("properties", []) for fid, n in p.get("coverage", {}).get("known_hits", {}).items()]
    if hits:
        lines += ["", "## Known findings met again", "",
                  "Findings accepted up front (--known-readings: the target's READINGS; --known) or found earlier in the same property are counted, not failures: "
                  "the calls that met one are not among the cases above.", "",
                  "| target | profile | shapes | property | id | calls | reading |", "|---|---|---|---|---|---:|---|"]
        lines += [f"| {r['target']} | {r['profile']} | {r['shapes']} | {kind} | `{fid}` | {n} | "
                  f"{reading({'id': fid}, r['target'], r['profile'])} |" for r, kind, fid, n in hits]
    lines += ["", "## Findings", "",
              "| target | profile | shapes | property | id | class | signature | reading |",
              "|---|---|---|---|---|---|---|---|"]
    for r, kind, f in findings:
        lines.append(f"| {r['target']} | {r['profile']} | {r['shapes']} | {kind} | `{f['id']}` | {f['class']} | "
                     f"{cell(f['display'], 200)} | {reading(f, r['target'], r['profile'])} |")
    lines += ["", "### Each finding, shrunk", ""]
    for r, kind, f in findings:
        # RapidCheck's text ("debug"; reports before issue 33 had it in "message"): "<file>:<line>:",
        # "RC_FAIL(...)", "[class] verdict", "Log:", the call's description, the rule's line.
        text = f.get("debug", f["message"]).split("\n")
        verdict = next((x for x in text if x.startswith("[")), "")
        after = text[text.index("Log:") + 1:] if "Log:" in text else []
        call = after[0] if after else ""
        lines += [f"#### `{f['id']}` {r['target']} ({r['profile']}, {r['shapes']}) {kind}: {f['class']}", "",
                  f"- signature: `{f['signature']}`", f"- reading: {reading(f, r['target'], r['profile'])}", f"- verdict: {cell(verdict, 600)}",
                  f"- call: {cell(call, 600)}", f"- repro: `{f.get('repro', '')}`", f"- saved: `{f.get('saved', '')}`"]
        if f.get("explain", {}).get("line"):
            lines.append(f"- explain: {cell(f['explain']['line'], 600)}")
        for e in f.get("examples", []):
            lines.append(f"- also shrunk to (`{e['signature']}`): `{e.get('repro', '')}`")
        lines.append("")
    errors = [r for r in results if r.get("trace")]
    if errors:
        lines += ["## Runs that failed", ""] + [f"```\n{r['run']}: {r['trace']}\n```" for r in errors]
    return "\n".join(lines) + "\n"


def render(args: argparse.Namespace) -> int:
    """upstream_<date>.md from the per-run reports in args.render (see --render)."""
    results = []
    for f in sorted(os.listdir(args.render)):
        parts = f.rsplit(".", 1)[0].split(".")
        if not f.endswith(".json") or len(parts) not in (3, 4):
            continue
        target, profile, shapes = parts[:3]
        rep = json.load(open(os.path.join(args.render, f)))
        props = rep.get("properties") or [{"name": "?/?"}]
        results.append({"run": f"{target} {profile} {shapes}", "target": target, "profile": profile, "shapes": shapes,
                        "op": "/".join(props[0]["name"].split("/")[:2]), "report": rep})
    started, gpu, torch_version = args.rendered_from
    args.peers, args.jobs, args.seconds_small, args.seconds_preset = "(see the run)", "?", 0.0, 0.0
    text = markdown(results, args, started, gpu, 0.0, torch_version)
    text = text.replace("; 0 s wall for", "; rendered by --render from the per-run reports:",
                        1)
    path = os.path.join(args.results or args.render, f"upstream_{started.split()[0]}.md")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    print(path)
    return 0
