"""The explain step after shrinking (issue 33) on plain-PyTorch implementations with one planted
slip each (kparity.testing.impls.planted_findings): each slip is one finding whose ``explain``
names what it needs (the key count, a +inf sink, a strided q) and leaves the shape free; the
message carries the call and the first bad element instead of RapidCheck's drawn values."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

from kparity.fuzz import check_implementation
from kparity.testing.impls import planted_findings as pf


def run(op, impl, tmp_path, cases=300):
    return check_implementation(op, impl, device="cpu", corpus=tmp_path, cases=cases, seed=41,
                                properties=["differential"])


def knob(f, verdict, name):
    return next((k for k in f.explain[verdict] if k["name"] == name), None)


def test_a_key_count_slip_is_one_finding_that_needs_five_keys(tmp_path) -> None:
    report = run(*pf.DROPS_FIFTH_KEY, tmp_path)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    assert [k["name"] for k in f.explain["needed"]] == ["keys"], report.summary()
    keys = knob(f, "needed", "keys")
    assert keys["nearest_pass"] == "4" and keys["says"].startswith("keys >= 5 (passes with 4")
    free = {k["name"] for k in f.explain["free"]}
    assert {"H", "D", "T", "dtype"} <= free, report.summary()
    assert f.explanation.startswith("needs keys >= 5 (passes with 4")
    # the message: the verdict, the call and the first bad element; the drawn values are in details
    assert "unsigned long" not in f.message and "first bad" in str(f)
    assert "call: " in f.details or "RC_FAIL" in f.details
    assert f"explain: {f.explanation}" in report.summary()
    assert f.explain["provenance"]["keys"][0]["keys"] >= 5


def test_an_inf_sink_slip_needs_the_sink_and_no_shape(tmp_path) -> None:
    report = run(*pf.IGNORES_INF_SINK, tmp_path, cases=400)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    assert [k["name"] for k in f.explain["needed"]] == ["sink"], report.summary()
    assert knob(f, "needed", "sink")["value"] == "+inf"
    assert {"H", "D", "T"} <= {k["name"] for k in f.explain["free"]}, report.summary()


def test_a_strided_only_slip_needs_the_layout_of_q(tmp_path) -> None:
    report = run(*pf.IGNORES_Q_STRIDES, tmp_path)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    needed = {k["name"] for k in f.explain["needed"]}
    assert "q layout" in needed, report.summary()
    assert knob(f, "needed", "q layout")["nearest_pass"] == "contiguous"
    assert not needed & {"keys", "H", "D", "dtype", "sink"}, report.summary()


def test_a_last_chunk_slip_is_located_in_the_last_chunk(tmp_path) -> None:
    # The shrunk call has one token, its own last chunk; the explain step lengthens the sequences
    # (the seqlens knob) and locates the bad elements on that call too.
    report = run(*pf.WRONG_LAST_CHUNK, tmp_path, cases=30)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    at = f.explain["provenance"]["at"]
    assert at["knob"] == "seqlens" and at["provenance"]["only_last_chunk"], f.explain
    assert "only the last chunk of each sequence" in f.explain["first_bad"], f.explain["first_bad"]
    assert "seqlens" in {k["name"] for k in f.explain["free"]}, report.summary()


def test_a_grouped_heads_slip_needs_hv_above_h(tmp_path) -> None:
    # The KDA knobs: H (the grouping kept), HV (H kept), K, V, act, ...
    report = run(*pf.GQA_ONLY, tmp_path)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    assert [k["name"] for k in f.explain["needed"]] == ["HV"], report.summary()
    assert knob(f, "needed", "HV")["nearest_pass"] == knob(f, "free", "H")["value"]  # passes with HV = H
    assert {"H", "K", "V", "act"} <= {k["name"] for k in f.explain["free"]}, report.summary()
    # the call as a user reads it (its description), in the finding and its text
    assert f.call.startswith("kda/recurrent H=") and f"call: {f.call}" in str(f), str(f)


def test_an_fp16_only_slip_needs_the_act_dtype(tmp_path) -> None:
    report = run(*pf.FP16_ONLY, tmp_path)
    [p] = report.properties
    assert len(p.findings) == 1, report.summary()
    [f] = p.findings
    assert [k["name"] for k in f.explain["needed"]] == ["act"], report.summary()
    assert knob(f, "needed", "act")["says"] == "act = f16 (passes with f32, bf16)"
    assert {"H", "HV", "K", "V", "B"} <= {k["name"] for k in f.explain["free"]}, report.summary()


def test_the_pytest_plugin_prints_the_explanation(tmp_path: Path) -> None:
    (tmp_path / "test_slip.py").write_text(textwrap.dedent("""
        from kparity.testing.impls import planted_findings as pf

        def test_slip(kparity_fuzz):
            kparity_fuzz(*pf.DROPS_FIFTH_KEY, device="cpu", cases=300, seed=41, properties=["differential"])
    """))
    registered = any(e.value == "kparity.testing.pytest_plugin"
                     for e in importlib.metadata.entry_points(group="pytest11"))
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
           *([] if registered else ["-p", "kparity.testing.pytest_plugin"]), str(tmp_path / "test_slip.py"),
           "--kparity-corpus", str(tmp_path / "corpus")]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "explain: needs keys >= 5 (passes with 4" in text, text
