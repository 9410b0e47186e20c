"""kparity.judge: the differential rule on one call, in-process (the rule of kparity/judge/rule.hpp,
the one `kparity run` and the fuzz campaigns apply)."""
from __future__ import annotations

from typing import Any, NamedTuple

from . import _kparity, _staging
from ._ops_table import op_row


class TensorVerdict(NamedTuple):
    """The rule on one written tensor: max|b - o| (`error`), max|f - o| (`faithful_error`), the floor,
    the allowed error and a-priori term at the worst element, the largest share of the allowed error
    used (`ratio`, > 1 fails), whether a non-finite class or the shape disagreed, the worst element."""

    name: str
    passed: bool
    mismatch: bool
    error: float
    faithful_error: float
    floor: float
    bound: float
    apriori: float
    ratio: float
    worst: str


class Verdict(NamedTuple):
    """The rule's verdict on a call: passed, one line naming the worst tensor and element, and the
    per-tensor details in the op's written order."""

    passed: bool
    detail: str
    tensors: dict[str, TensorVerdict]

    def __bool__(self) -> bool:
        return self.passed


def _host(args: dict[str, Any], fn: str) -> dict[str, Any]:
    return {k: (_staging.host_copy(v, k, fn) if v is not None and _staging.on_device(v) else v) for k, v in args.items()}


def judge(op: str, call: dict[str, Any], outputs: dict[str, Any], *, profile: str | None = None) -> Verdict:
    """Judges an implementation's results for one call of `op` with kparity's differential rule:
    `call` holds the call's arguments (upstream names) as they were before it ran, state and rings
    included; `outputs` every tensor the call writes, as the implementation left it. The rule runs
    the oracle and the faithful model (under precision `profile`: faithful, tf32-dot or
    sglang-triton, fla-chunk, kparity-chunk) on host copies and returns its Verdict. A call that breaks the
    contract raises its ContractError."""
    fn = "kparity.judge"
    op_row(op, fn)
    r = _kparity.judge_host(op, _host(dict(call), fn), _host(dict(outputs), fn), profile)
    tensors = {t["name"]: TensorVerdict(**t) for t in r["tensors"]}
    return Verdict(r["passed"], r["detail"], tensors)
