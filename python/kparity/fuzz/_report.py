"""The report of ``check_implementation``: the campaign's JSON (the ``kparity fuzz --report``
schema, README "kparity fuzz") as objects, with each failure's class parsed from its message."""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

#: Every failure class, in the order the harness lists them (fuzz/backends/failure.hpp).
FAILURE_CLASSES: tuple[str, ...] = (
    "wrong-values", "wrote-outside-outputs", "not-deterministic", "crashed", "rejected-valid-call",
    "accepted-hostile-call", "wrong-message", "timed-out", "bad-return",
)

_TAG = re.compile(r"\[(" + "|".join(re.escape(c) for c in FAILURE_CLASSES) + r")\] ")


@dataclass(frozen=True)
class Failure:
    """Why a property failed, on the shrunk call."""
    # one of FAILURE_CLASSES ("wrong-values" for a differential verdict), or "not-exercised" when the
    # campaign gave up: the implementation declined (NotImplementedError) nearly every case
    failure_class: str
    message: str        # the verdict line, from the class tag on
    details: str        # RapidCheck's full text: the verdict, the call's description, drawn values
    repro: str          # one line that replays the failing chunk
    saved: str | None   # the shrunk call as a `kparity run` dump, when it could be saved

    def __str__(self) -> str:
        lines = [f"[{self.failure_class}] {self.message}", f"  repro: {self.repro}"]
        if self.saved:
            lines.append(f"  saved: {self.saved}")
        return "\n".join(lines)


@dataclass(frozen=True)
class PropertyResult:
    name: str        # "<op>/<kind>/<implementation>"
    op: str
    kind: str        # differential | metamorphic (determinism) | hostile (contract)
    passed: bool
    cases: int       # passing cases run
    discarded: int   # cases the implementation declined (NotImplementedError) or could not be called with
    seconds: float
    cases_per_minute: float
    buckets: dict[str, int]
    max_errors: dict[str, dict[str, float]]  # written tensor -> backend/faithful/bound/ratio
    seed: str
    failure: Failure | None


def _failure(p: dict[str, Any], repro: str) -> Failure:
    text = p.get("message", "")
    m = _TAG.search(text)
    if m:
        cls = m.group(1)
        message = text[m.end():].split("\n", 1)[0]
    elif "gave up" in text:  # every case declined (NotImplementedError) or not expressible: nothing tested
        cls, message = "not-exercised", text.strip().split("\n", 1)[0]
    else:  # an error inside the campaign itself
        cls, message = "crashed", text.strip().split("\n", 1)[0]
    return Failure(cls, message, text, repro, p.get("saved") or None)


@dataclass
class Report:
    """What ``check_implementation`` found. ``passed`` is True only when every property held and
    nothing stopped the campaign (``error``)."""
    op: str
    implementation: str
    device: str
    profile: str
    properties: list[PropertyResult] = field(default_factory=list)
    error: str | None = None  # the campaign could not run (impl not callable, signature, device)
    log: str = ""             # the campaign's own lines (one per property, the summary table)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.properties) and all(p.passed for p in self.properties)

    @property
    def failures(self) -> list[Failure]:
        return [p.failure for p in self.properties if p.failure is not None]

    def property(self, name_or_kind: str) -> PropertyResult:
        """The result of a property by full name or by kind ("differential", "deterministic", ...)."""
        for p in self.properties:
            if p.name == name_or_kind or p.name.split("/")[2] == name_or_kind:
                return p
        raise KeyError(f"no property {name_or_kind!r} in this report (ran: {[p.name for p in self.properties]})")

    def to_json(self) -> dict[str, Any]:
        """The report in `kparity fuzz --report`'s schema (the repro lines are Python calls), plus
        an "implementation" object: name, op, device, profile, error."""
        out = dict(self.raw) if self.raw else {"properties": []}
        out["implementation"] = {"name": self.implementation, "op": self.op, "device": self.device,
                                 "profile": self.profile, "error": self.error}
        return out

    def write(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2)
            f.write("\n")

    def summary(self) -> str:
        head = f"{self.implementation} on {self.op} ({self.device}, profile {self.profile}): "
        if self.error:
            return head + "not run: " + self.error
        held = sum(p.passed for p in self.properties)
        lines = [head + f"{held} of {len(self.properties)} properties held"]
        for p in self.properties:
            verdict = "pass" if p.passed else f"FAIL after {p.cases} cases"
            lines.append(f"  {p.name}: {verdict} ({p.cases} cases, {p.discarded} discarded, {p.seconds:.1f} s)")
            if p.failure:
                lines.extend("    " + line for line in str(p.failure).splitlines())
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def raise_for_failures(self) -> None:
        """Raises AssertionError with the summary (classes, repro lines, dump paths) unless passed."""
        if not self.passed:
            raise AssertionError(self.summary())


def build_report(op: str, implementation: str, device: str, profile: str, raw_json: str, log: str,
                 repro: Any) -> Report:
    """``repro(property_name, seed, cases)`` gives the Python repro line of a failed chunk."""
    raw = json.loads(raw_json)
    props = []
    for p in raw.get("properties", []):
        failure = None
        if not p.get("passed", False):
            chunk = re.search(r"--cases (\d+)", p.get("repro", ""))
            line = repro(p["name"], p["seed"], int(chunk.group(1)) if chunk else max(int(p.get("cases", 0)), 1))
            p["repro"] = line
            failure = _failure(p, line)
        props.append(PropertyResult(p["name"], p.get("op", op), p.get("kind", ""), bool(p.get("passed")),
                                    int(p.get("cases", 0)), int(p.get("discarded", 0)), float(p.get("seconds", 0.0)),
                                    float(p.get("cases_per_minute", 0.0)), dict(p.get("buckets", {})),
                                    dict(p.get("max_errors", {})), str(p.get("seed", "")), failure))
    return Report(op, implementation, device, profile, props, None, log, raw)
