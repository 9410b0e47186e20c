"""The report of ``check_implementation``: the campaign's JSON (the ``kparity fuzz --report``
schema, README "kparity fuzz", with each property's findings, coverage and counts) as objects, with
each failure's class parsed from its message."""
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
    """One finding: why a property failed, on the shrunk call."""
    # one of FAILURE_CLASSES ("wrong-values" for a differential verdict), or "not-exercised" when the
    # campaign gave up: no call inside the domain that the implementation would run
    failure_class: str
    message: str        # the verdict line, from the class tag on
    details: str        # RapidCheck's full text: the verdict, the call's description, drawn values
    repro: str          # one line that replays this finding (with the findings excluded before it)
    saved: str | None   # the shrunk call as a `kparity run` dump, when it could be saved
    # What identifies the finding across runs (fuzz/backends/findings.hpp): pass `signature` or
    # `id` in known= to accept it. Empty for "not-exercised".
    signature: str = ""
    id: str = ""
    display: str = ""   # the signature for people: class, tensor, conditions (edge buckets)
    tensor: str = ""
    edges: tuple[str, ...] = ()
    # The signature its own round found (what the repro line shows again); `signature` is
    # generalised over the examples: later rounds that shrank to the same failure under other
    # conditions, kept here with their own repro lines.
    found_as: str = ""
    examples: tuple["Failure", ...] = ()
    # The explain step after shrinking (README, "The explain object"): "needed", "free", "unclear"
    # and "unreached" lists of the call's parameters, each with the values tried; "line" says it in
    # one line, "first_bad" and "provenance" locate the first bad element. Empty when not run.
    explain: dict[str, Any] = field(default_factory=dict)
    # The shrunk call as a user reads it: the op's call description (the message's "call: " line).
    call: str = ""

    @property
    def explanation(self) -> str:
        """The explain step in one line: what the failure needs, what is free."""
        return str(self.explain.get("line", "")) if self.explain else ""

    def __str__(self) -> str:
        head = f"[{self.id}] " if self.id else ""
        lines = [f"{head}[{self.failure_class}] {self.message}"]
        if self.call:
            lines.append(f"  call: {self.call}")
        if self.display:
            lines.append(f"  signature: {self.display}")
        if self.explanation:
            lines.append(f"  explain: {self.explanation}")
        if self.explain.get("first_bad"):
            lines.append(f"  {self.explain['first_bad']}")
        lines.append(f"  repro: {self.repro}")
        if self.saved:
            lines.append(f"  saved: {self.saved}")
        for e in self.examples:
            lines.append(f"  also met as: {e.display or e.message}")
            lines.append(f"    repro: {e.repro}")
        return "\n".join(lines)


#: A finding is a Failure (the name the findings API uses).
Finding = Failure


@dataclass(frozen=True)
class Coverage:
    """How much of the generator's space the declared domain covers, for one property: calls
    drawn, inside and outside the domain (per reason), with the share inside."""
    drawn: int = 0
    inside: int = 0
    outside: int = 0
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def share(self) -> float:
        return self.inside / self.drawn if self.drawn else 1.0

    def __str__(self) -> str:
        return f"{100 * self.share:.1f}% of {self.drawn} drawn calls inside the domain"


@dataclass(frozen=True)
class PropertyResult:
    name: str        # "<op>/<kind>/<implementation>"
    op: str
    kind: str        # differential | metamorphic (determinism) | hostile (contract)
    passed: bool     # no finding (known ones aside) and nothing stopped the property
    cases: int       # cases judged and passed (calls run and found right)
    discarded: int   # cases RapidCheck discarded (nothing inside the domain to run)
    seconds: float
    cases_per_minute: float
    buckets: dict[str, int]
    max_errors: dict[str, dict[str, float]]  # written tensor -> backend/faithful/bound/ratio
    seed: str
    failure: Failure | None  # the first finding, or why the property could not be exercised
    findings: tuple[Failure, ...] = ()        # every distinct finding, in the order found
    coverage: Coverage = field(default_factory=Coverage)
    declined: int = 0                         # calls the implementation declined (NotImplementedError)
    known_hits: dict[str, int] = field(default_factory=dict)  # recurrences of known findings, by id
    stopped: str = ""                         # why the run ended before its budget, if it did

    @property
    def verdict(self) -> str:
        """"pass", "N findings" or "not exercised"."""
        if self.passed:
            return "pass"
        if self.findings:
            return f"{len(self.findings)} finding{'s' if len(self.findings) != 1 else ''}"
        return "not exercised" if self.failure and self.failure.failure_class == "not-exercised" else "FAIL"


def _parse_class(text: str) -> tuple[str, str]:
    m = _TAG.search(text)
    if m:
        return m.group(1), text[m.end():].split("\n", 1)[0]
    if "gave up" in text:  # nothing inside the domain that the implementation would run
        return "not-exercised", text.strip().split("\n", 1)[0]
    return "crashed", text.strip().split("\n", 1)[0]  # an error inside the campaign itself


def _finding(f: dict[str, Any], repro: str, examples: tuple[Failure, ...] = ()) -> Failure:
    cls, message = _parse_class(f.get("message", ""))
    # details: RapidCheck's full text (the report's "debug", with the drawn values) when there is one
    return Failure(cls, message, f.get("debug") or f.get("message", ""), repro, f.get("saved") or None,
                   f.get("signature", ""), f.get("id", ""), f.get("display", ""), f.get("tensor", ""),
                   tuple(f.get("edges", ())), f.get("found_as", ""), examples, dict(f.get("explain") or {}),
                   next((line[6:] for line in f.get("message", "").split("\n") if line.startswith("call: ")), ""))


@dataclass
class Report:
    """What ``check_implementation`` found. ``passed`` is True only when no property has a finding
    (known findings aside) and nothing stopped the campaign (``error``)."""
    op: str
    implementation: str
    device: str
    profile: str
    properties: list[PropertyResult] = field(default_factory=list)
    error: str | None = None  # the campaign could not run (impl not callable, signature, device, supports=)
    log: str = ""             # the campaign's own lines (one per property and finding, the summary table)
    raw: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.error is None and bool(self.properties) and all(p.passed for p in self.properties)

    @property
    def failures(self) -> list[Failure]:
        """Every finding of every property (and why a property was not exercised), in order."""
        out: list[Failure] = []
        for p in self.properties:
            out.extend(p.findings if p.findings else ([p.failure] if p.failure else []))
        return out

    @property
    def findings(self) -> list[Failure]:
        return self.failures

    def property(self, name_or_kind: str) -> PropertyResult:
        """The result of a property by full name or by kind ("differential", "deterministic", ...)."""
        for p in self.properties:
            if p.name == name_or_kind or p.name.split("/")[2] == name_or_kind:
                return p
        raise KeyError(f"no property {name_or_kind!r} in this report (ran: {[p.name for p in self.properties]})")

    def to_json(self) -> dict[str, Any]:
        """The report in `kparity fuzz --report`'s schema (the repro lines are Python calls; each
        property also has "findings", "coverage", "rounds" and "stopped"), plus an
        "implementation" object: name, op, device, profile, error."""
        out = dict(self.raw) if self.raw else {"properties": []}
        out["implementation"] = {"name": self.implementation, "op": self.op, "device": self.device,
                                 "profile": self.profile, "error": self.error}
        return out

    def write(self, path: str | os.PathLike[str]) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.to_json(), f, indent=2)
            f.write("\n")

    def summary(self) -> str:
        """For a kernel author: per property its verdict (pass / N findings), the cases judged, the
        domain's coverage, the declined calls and the known findings met, then each finding with
        its id, signature, repro line and saved call."""
        head = f"{self.implementation} on {self.op} ({self.device}, profile {self.profile}): "
        if self.error:
            return head + "not run: " + self.error
        held = sum(p.passed for p in self.properties)
        found = sum(len(p.findings) for p in self.properties)
        lines = [head + f"{held} of {len(self.properties)} properties held, {found} finding{'s' if found != 1 else ''}"]
        for p in self.properties:
            c = p.coverage
            facts = [f"{p.cases} cases", f"coverage {100 * c.share:.0f}% ({c.inside}/{c.drawn})"]
            if c.reasons:
                top = sorted(c.reasons.items(), key=lambda kv: -kv[1])[:3]
                facts[-1] += " outside: " + "; ".join(f"{n}x {r}" for r, n in top)
            if p.declined:
                facts.append(f"{p.declined} declined")
            if p.known_hits:
                facts.append(f"known hits {sum(p.known_hits.values())} ({', '.join(f'{k}: {n}' for k, n in p.known_hits.items())})")
            facts.append(f"{p.seconds:.1f} s")
            lines.append(f"  {p.name}: {p.verdict} ({', '.join(facts)})")
            shown = p.findings if p.findings else ((p.failure,) if p.failure else ())
            for i, f in enumerate(shown, 1):
                lines.extend(("    " + (f"{i}. " if j == 0 else "   ") + line)
                             for j, line in enumerate(str(f).splitlines()))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def raise_for_failures(self) -> None:
        """Raises AssertionError with the summary (classes, repro lines, dump paths) unless passed:
        any finding that is not known, a property not exercised, or a campaign error."""
        if not self.passed:
            raise AssertionError(self.summary())


def build_report(op: str, implementation: str, device: str, profile: str, raw_json: str, log: str,
                 repro: Any) -> Report:
    """``repro(property_name, seed, cases, excluded)`` gives the Python repro line of a finding
    (``excluded``: the signatures it must exclude to fail the same way; None for a property's
    failure without findings)."""
    raw = json.loads(raw_json)
    props = []
    for p in raw.get("properties", []):
        findings = []
        for f in p.get("findings", []):
            examples = []
            for e in f.get("examples", []):
                e["repro"] = repro(p["name"], e["seed"], int(e.get("repro_cases", 1)), list(e.get("excluded_before", [])))
                examples.append(_finding(e, e["repro"]))
            f["repro"] = repro(p["name"], f["seed"], int(f.get("repro_cases", 1)), list(f.get("excluded_before", [])))
            findings.append(_finding(f, f["repro"], tuple(examples)))
        failure = None
        if findings:
            failure = findings[0]
            p["repro"] = findings[0].repro
        elif not p.get("passed", False):
            chunk = re.search(r"--cases (\d+)", p.get("repro", ""))
            line = repro(p["name"], p["seed"], int(chunk.group(1)) if chunk else max(int(p.get("cases", 0)), 1), None)
            p["repro"] = line
            failure = _finding({"message": p.get("message", ""), "debug": p.get("debug"), "saved": p.get("saved")}, line)
        cov = p.get("coverage", {})
        coverage = Coverage(int(cov.get("drawn", 0)), int(cov.get("inside", 0)), int(cov.get("outside", 0)),
                            dict(cov.get("outside_reasons", {})))
        props.append(PropertyResult(p["name"], p.get("op", op), p.get("kind", ""), bool(p.get("passed")),
                                    int(p.get("cases", 0)), int(p.get("discarded", 0)), float(p.get("seconds", 0.0)),
                                    float(p.get("cases_per_minute", 0.0)), dict(p.get("buckets", {})),
                                    dict(p.get("max_errors", {})), str(p.get("seed", "")), failure, tuple(findings),
                                    coverage, int(cov.get("declined", 0)), dict(cov.get("known_hits", {})),
                                    str(p.get("stopped", ""))))
    return Report(op, implementation, device, profile, props, None, log, raw)
