"""The pytest plugin (kparity.testing.pytest_plugin): `pytest --kparity-cases N --kparity-seed S`
runs a suite's kparity_fuzz checks with that budget, and a failing check prints its class, its
repro line and the path of the saved dump. Each scenario runs pytest in a subprocess on a
generated test file."""
from __future__ import annotations

import importlib.metadata
import subprocess
import sys
import textwrap
from pathlib import Path

SUITE = textwrap.dedent("""
    from kparity.testing import impls

    def test_correct(kparity_fuzz):
        report = kparity_fuzz("sparse/paged_decode", impls.paged_decode, device="cpu", cases=3)
        print("CASES", report.properties[0].cases, "SEED", report.raw["seed"])

    def test_planted(kparity_fuzz):
        bug = next(b for b in impls.planted_bugs() if b.name == "duplicates-dropped")
        kparity_fuzz(bug.op, bug.impl, device="cpu", properties=["differential"])
""")


def _plugin_args() -> list[str]:
    registered = any(e.value == "kparity.testing.pytest_plugin" for e in importlib.metadata.entry_points(group="pytest11"))
    return [] if registered else ["-p", "kparity.testing.pytest_plugin"]


def _pytest(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_user_suite.py").write_text(SUITE)
    cmd = [sys.executable, "-m", "pytest", "-s", "-p", "no:cacheprovider", *_plugin_args(),
           str(tmp_path / "test_user_suite.py"), "--kparity-corpus", str(tmp_path / "corpus"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600)


def test_options_reach_the_checks_and_a_failure_prints_repro_and_dump(tmp_path: Path) -> None:
    out = _pytest(tmp_path, "--kparity-cases", "25", "--kparity-seed", "0x1234")
    text = out.stdout + out.stderr
    assert out.returncode == 1, text  # test_planted fails, test_correct passes
    assert "kparity fuzz: cases=25, seed=0x1234" in text  # the report header
    assert "CASES 25 SEED 0x1234" in text  # the command line overrides the test's cases=3
    assert "1 failed, 1 passed" in text
    assert "[wrong-values] paged_decode breaks the differential rule" in text
    assert "repro: kparity.fuzz.check_implementation('sparse/paged_decode', " in text
    assert "saved: " + str(tmp_path / "corpus") in text


def test_bad_seed_is_a_usage_error(tmp_path: Path) -> None:
    out = _pytest(tmp_path, "--kparity-seed", "twelve")
    assert out.returncode == 4, out.stdout + out.stderr
    assert "--kparity-seed 'twelve' is not a decimal or 0x hex integer" in out.stdout + out.stderr
