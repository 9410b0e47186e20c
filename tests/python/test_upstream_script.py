"""bench/fuzz/upstream.py's machinery on the CPU (its --dry-run stand-ins): the pins and compile budget
of each small run, the report's tables, and readings that belong to their targets."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "fuzz" / "upstream.py"


def load():
    spec = importlib.util.spec_from_file_location("kparity_upstream_script", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_readings_belong_to_their_targets() -> None:
    up = load()
    # The same id is the same failure class on another op: a reading is the target's, not the id's.
    assert up.reading({"id": "ff093243"}, "sglang-triton-paged-decode").startswith("their bug")
    assert up.reading({"id": "ff093243"}, "sglang-triton-paged-prefill") == "unclassified"
    assert up.reading({"id": "2349da32"}, "sglang-triton-replayssm-laid-out").startswith("precision")
    assert up.reading({"id": "2349da32"}, "dry-sparse-decode") == "unclassified"
    assert "ff093243" in up.known_for("sglang-triton-paged-decode")
    assert "ff093243" not in up.known_for("fla-chunk-kda")
    # A precision reading qualified by a profile is accepted in that profile's runs only: under
    # fla-chunk, the profile that models chunk_kda's bf16 intermediates, the same id must fail.
    assert "f1ad4288" in up.known_for("fla-chunk-kda", "faithful")
    assert "f1ad4288" not in up.known_for("fla-chunk-kda", "fla-chunk")
    assert "997c37ca" in up.known_for("fla-chunk-kda", "fla-chunk")  # not a precision reading: every profile
    assert up.reading({"id": "f1ad4288"}, "fla-chunk-kda", "fla-chunk") == "unclassified"
    assert up.reading({"id": "2349da32"}, "sglang-triton-replayssm-laid-out", "tf32-dot") == "unclassified"


def test_dry_run_pins_each_small_run_and_reports_its_domain(tmp_path) -> None:
    env = dict(os.environ, OUT=str(tmp_path))
    r = subprocess.run([sys.executable, str(SCRIPT), "--dry-run", "--budget", "3", "--targets", "dry-replayssm",
                        "--shapes", "small", "--results", "", "--properties", "differential", "--split-properties"],
                       env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    md = (tmp_path / next(p for p in os.listdir(tmp_path) if p.startswith("upstream_"))).read_text()
    assert "| dry-replayssm | kda/replayssm_decode | faithful | small | differential |" in md
    row = next(line for line in md.splitlines() if line.startswith("| dry-replayssm | faithful | small |"))
    assert "`H=2,HV=4,K=32,V=32,act=bf16,state=f32,params=f32,L=4|17,layout=compact`" in row.replace("\\|", "|")
    assert row.rstrip(" |").split("|")[-2].strip().endswith("(24)")  # its compile keys against the cap
    assert (tmp_path / "dry-replayssm.faithful.small.differential.json").exists()


def test_chunk_adapter_captures_each_call_with_the_kernels_outputs(tmp_path, monkeypatch) -> None:
    # KPARITY_CAPTURE_DIR: the fla_chunk adapter writes each call it makes as a dump whose expected.*
    # are what the wrapped kernel returned (here kparity's own faithful model stands in for chunk_kda),
    # at the kernel-sized tier that crosses chunk boundaries (sequences of 31-65 tokens).
    import torch

    import kparity
    from kparity.fuzz import check_implementation

    up = load()
    monkeypatch.setenv("KPARITY_CAPTURE_DIR", str(tmp_path / "cap"))
    monkeypatch.setenv("KPARITY_CAPTURE_MAX", "12")
    returned = []

    def stand_in(*args, **kwargs):
        kwargs.pop("return_intermediate_states", None)
        r = kparity.kda.chunk.reference(*args, precision="faithful", **kwargs)
        returned.append(r["out"].clone())
        return r["out"], r.get("final_state")

    report = check_implementation("kda/chunk", up.fla_chunk(stand_in), device="cpu", cases=30, case_timeout=None,
                                  properties=["differential"], shapes="large", pins=up.FLA_PINS)
    assert report.passed, report.summary()
    dumps = sorted((tmp_path / "cap").iterdir())
    assert len(dumps) == 12  # the cap, though more calls were made
    longest = 0
    for i, p in enumerate(dumps):
        call = kparity.load(p)
        assert call.op == "kda/chunk"
        assert torch.equal(call.expected["out"], returned[i])
        q = call.args["q"]
        cu = call.args.get("cu_seqlens")
        lens = (cu[1:] - cu[:-1]).tolist() if cu is not None else [q.shape[1]]
        longest = max(longest, *lens)
    assert longest > 17  # beyond the small tier's longest sequence: a second chunk at chunk_size 32
