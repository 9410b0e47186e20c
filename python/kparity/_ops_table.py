"""The op table (kparity::ops) as Python data: parameter names in upstream positional order,
defaults, written tensors. Read once from the C++ library; never written here."""
from __future__ import annotations

import ast
from typing import Any, NamedTuple

from . import _kparity


class Param(NamedTuple):
    name: str
    kind: str  # "tensor", "scalar" or "flag"
    default: Any  # upstream's default; REQUIRED when there is none
    keyword_only: bool


class OpRow(NamedTuple):
    op: str
    upstream: str
    params: tuple[Param, ...]
    positional: tuple[str, ...]
    written: frozenset[str]
    pure: frozenset[str]
    inplace: tuple[str, ...]  # written tensors whose old contents the op reads (snapshotted by guard)


REQUIRED = object()


def _default(spelling: str) -> Any:
    return REQUIRED if spelling == "" else ast.literal_eval(spelling)


def _rows() -> dict[str, OpRow]:
    rows = {}
    for r in _kparity.op_table():
        params = tuple(Param(n, k, _default(d), kw) for n, k, d, kw in r["params"])
        written = [w[0] for w in r["written"]]
        pure = frozenset(w[0] for w in r["written"] if w[1])
        rows[r["op"]] = OpRow(r["op"], r["upstream"], params, tuple(p.name for p in params if not p.keyword_only),
                              frozenset(written), pure, tuple(w for w in written if w not in pure))
    return rows


ROWS = _rows()
OPS = tuple(ROWS)


def op_row(op: str, fn: str) -> OpRow:
    if not isinstance(op, str):
        raise TypeError(f"{fn}: op must be a str such as 'kda/replayssm_decode', got {type(op).__name__}")
    row = ROWS.get(op)
    if row is None:
        raise ValueError(f"{fn}: unknown op '{op}' (known: {', '.join(OPS)})")
    return row
