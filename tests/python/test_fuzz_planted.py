"""Every planted bug of kparity.testing.impls is caught by check_implementation within its bounded
number of cases, with the failure class it is tagged with; the failure's repro line replays it, and
its saved dump loads as a `kparity run` call."""
from __future__ import annotations

import re

import pytest

import kparity
from kparity.fuzz import FAILURE_CLASSES, check_implementation
from kparity.testing import impls

BUGS = impls.planted_bugs()


def test_the_planted_bugs_cover_every_failure_class_a_python_impl_can_earn() -> None:
    assert len(BUGS) >= 8
    classes = {b.failure for b in BUGS}
    assert classes == set(FAILURE_CLASSES) - {"wrong-message"}, classes  # wrong-message: tested in test_fuzz_bad_impl


@pytest.mark.parametrize("bug", BUGS, ids=[b.name for b in BUGS])
def test_planted_bug_is_caught_with_its_class(bug: impls.PlantedBug, tmp_path) -> None:
    # One finding is what this test is about: the run stops there (max_findings=1), so `cases` is
    # the number of cases it took.
    report = check_implementation(bug.op, bug.impl, device="cpu", cases=bug.max_cases, properties=list(bug.properties),
                                  corpus=tmp_path, max_findings=1, **bug.options)
    assert not report.passed, f"{bug.name} not caught in {bug.max_cases} cases:\n{report.summary()}"
    [prop] = report.properties
    assert prop.failure is not None
    assert prop.failure.failure_class == bug.failure, prop.failure.details
    assert prop.cases < bug.max_cases
    assert prop.failure.repro.startswith(f"kparity.fuzz.check_implementation('{bug.op}', ")
    if prop.failure.saved:  # the shrunk call (the valid call, for a contract failure) as a dump
        call = kparity.load(prop.failure.saved)
        assert call.op == bug.op


def test_repro_line_replays_the_failure(tmp_path) -> None:
    bug = next(b for b in BUGS if b.name == "wrong-gqa-head-mapping")
    first = check_implementation(bug.op, bug.impl, device="cpu", cases=200, corpus=tmp_path, properties=["differential"],
                                 max_findings=1)
    line = first.failures[0].repro
    props = re.search(r"properties=\['([^']+)'\]", line).group(1)
    seed = int(re.search(r"seed=(0x[0-9a-f]+)", line).group(1), 16)
    cases = int(re.search(r"cases=(\d+)", line).group(1))
    again = check_implementation(bug.op, bug.impl, device="cpu", properties=[props], seed=seed, cases=cases,
                                 corpus=tmp_path)
    assert again.failures and again.failures[0].failure_class == "wrong-values"
    assert again.failures[0].message == first.failures[0].message
