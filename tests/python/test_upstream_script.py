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
