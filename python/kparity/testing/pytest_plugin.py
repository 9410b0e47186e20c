"""pytest plugin: kparity's fuzz campaign inside your own test suite (loaded automatically once
kparity is installed, through the ``pytest11`` entry point; or ``-p kparity.testing.pytest_plugin``).

    def test_my_replayssm(kparity_fuzz):
        kparity_fuzz("kda/replayssm_decode", my_replayssm_decode, device="cuda", cases=100)

    $ pytest --kparity-cases 500 --kparity-seed 0x1234

The fixture ``kparity_fuzz(op, impl, **options)`` runs ``kparity.fuzz.check_implementation`` and
fails the test with the report's summary, each failure's class, its repro line and the path of the
saved dump. Command-line options override what the test passes: ``--kparity-cases N``,
``--kparity-time S``, ``--kparity-seed S`` (decimal or 0x hex), ``--kparity-device``,
``--kparity-profile``, ``--kparity-corpus DIR``, ``--kparity-report DIR`` (one JSON report per test).
"""
from __future__ import annotations

import os
import re
from typing import Any, Callable

import pytest

_OPTIONS = ("cases", "time", "seed", "device", "profile", "corpus")


def _seed(text: str) -> int:
    try:
        return int(text, 0)
    except ValueError:
        raise pytest.UsageError(f"--kparity-seed {text!r} is not a decimal or 0x hex integer") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("kparity", "fuzzing implementations against kparity's references")
    group.addoption("--kparity-cases", type=int, default=None, metavar="N",
                    help="passing cases per property for every kparity_fuzz check")
    group.addoption("--kparity-time", type=float, default=None, metavar="SECONDS",
                    help="wall-clock budget of each kparity_fuzz check")
    group.addoption("--kparity-seed", type=_seed, default=None, metavar="SEED", help="campaign seed")
    group.addoption("--kparity-device", default=None, help="device of every kparity_fuzz check (cpu, cuda)")
    group.addoption("--kparity-profile", default=None, help="precision profile (faithful, tf32-dot a.k.a. sglang-triton, fla-chunk, kparity-chunk)")
    group.addoption("--kparity-corpus", default=None, metavar="DIR", help="where failing calls are saved")
    group.addoption("--kparity-report", default=None, metavar="DIR", help="write each check's JSON report here")


def pytest_report_header(config: pytest.Config) -> str | None:
    given = {k: config.getoption(f"kparity_{k}") for k in _OPTIONS}
    given = {k: v for k, v in given.items() if v is not None}
    if not given:
        return None
    if "seed" in given:
        given["seed"] = hex(given["seed"])
    return "kparity fuzz: " + ", ".join(f"{k}={v}" for k, v in given.items())


@pytest.fixture
def kparity_fuzz(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``check(op, impl, **options)``: ``kparity.fuzz.check_implementation`` with the command line's
    ``--kparity-*`` options on top of ``options``; fails the test unless every property held."""
    from kparity.fuzz import check_implementation

    config = request.config

    def check(op: str, impl: Callable[..., Any], **options: Any) -> Any:
        for key in _OPTIONS:
            value = config.getoption(f"kparity_{key}")
            if value is not None:
                options[key] = value
        if config.getoption("kparity_cases") is not None and config.getoption("kparity_time") is None:
            options.pop("time", None)
        folder = config.getoption("kparity_report")
        if folder is not None:
            os.makedirs(folder, exist_ok=True)
            safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", request.node.nodeid)
            options.setdefault("report", os.path.join(folder, f"{safe}-{op.replace('/', '.')}.json"))
        report = check_implementation(op, impl, **options)
        request.node.user_properties.append(("kparity_fuzz", report.summary()))
        if not report.passed:
            pytest.fail(report.summary(), pytrace=False)
        return report

    return check
