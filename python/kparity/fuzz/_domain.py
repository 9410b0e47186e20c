"""What a declared domain sees of a generated call: ``CallInfo``, the argument of
``check_implementation(..., supports=...)``.

    def supports(call: CallInfo) -> bool | str:
        if call.dims["D"] < 16:
            return "tl.dot needs D >= 16"     # outside, with the reason the report counts
        return True

The host asks before it materialises a call (no tensor exists yet, so a CallInfo holds shapes,
dtypes, strides, scalars and flags, never values); a call outside the domain is never sent to the
implementation: the generator draws another in its place, and the report says which share of the
drawn calls was inside, per property and per reason.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

import torch

from ._case import DTYPES


@dataclass(frozen=True)
class TensorInfo:
    """One tensor argument of a generated call."""
    name: str
    dtype: torch.dtype
    shape: tuple[int, ...]
    strides: tuple[int, ...]     # in elements
    storage_offset: int          # in elements
    contiguous: bool
    returned: bool               # an output upstream allocates and returns (not passed to the implementation)


@dataclass(frozen=True)
class CallInfo:
    """A generated call of ``op`` without its values.

    ``dims`` names the op's sizes, read from the shapes:

    * ``sparse/*``: ``T``, ``H``, ``D`` (q is [T, H, D]), ``rows`` (unified_kv's), and for the
      prefill ``extend_rows`` (kv's);
    * ``kda/recurrent``: ``T``, ``H``, ``K``, ``HV``, ``V``, ``N`` (sequences);
    * ``kda/chunk``: ``B``, ``T``, ``H``, ``K``, ``HV``, ``V``, ``N``;
    * ``kda/packed_decode``, ``kda/replayssm_decode``: ``B`` (rows), ``slots``, ``H``, ``HV``,
      ``V``, ``K``, and ``L`` (ring length) for ReplaySSM.
    """
    op: str
    tensors: Mapping[str, TensorInfo]
    scalars: Mapping[str, float]
    flags: Mapping[str, bool]
    dims: Mapping[str, int]
    description: str = ""       # the generator's one-line description
    preset: str | None = None   # the shape preset the call was drawn under
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __contains__(self, name: object) -> bool:
        return name in self.tensors

    def shape(self, name: str) -> tuple[int, ...] | None:
        t = self.tensors.get(name)
        return t.shape if t is not None else None

    def dtype(self, name: str) -> torch.dtype | None:
        t = self.tensors.get(name)
        return t.dtype if t is not None else None

    def flag(self, name: str) -> bool:
        return bool(self.flags.get(name, False))


def _dims(op: str, t: Mapping[str, TensorInfo]) -> dict[str, int]:
    s = {n: i.shape for n, i in t.items()}
    d: dict[str, int] = {}
    if op.startswith("sparse/"):
        d["T"], d["H"], d["D"] = s["q"]
        d["rows"] = s["unified_kv"][0]
        if "kv" in s:
            d["extend_rows"] = s["kv"][0]
    elif op == "kda/recurrent":
        d["T"], d["H"], d["K"] = s["q"]
        _, d["HV"], d["V"] = s["v"]
        d["N"] = s["cu_seqlens"][0] - 1 if "cu_seqlens" in s else 1
    elif op == "kda/chunk":
        d["B"], d["T"], d["H"], d["K"] = s["q"]
        _, _, d["HV"], d["V"] = s["v"]
        d["N"] = s["cu_seqlens"][0] - 1 if "cu_seqlens" in s else d["B"]
    elif op in ("kda/packed_decode", "kda/replayssm_decode"):
        d["slots"], d["HV"], d["V"], d["K"] = s["initial_state"]
        d["B"], width = s["mixed_qkv"]
        d["H"] = (width - d["HV"] * d["V"]) // (2 * d["K"]) if d["K"] else 0
        if "d_cache" in s:
            d["L"] = s["d_cache"][2]
    return d


def call_info(raw: Mapping[str, Any]) -> CallInfo:
    """The CallInfo of kparity-fuzz-host's description of a call (python/fuzz/host_main.cpp)."""
    tensors = {t["name"]: TensorInfo(t["name"], DTYPES[t["dtype"]], tuple(t["shape"]), tuple(t["strides"]),
                                     int(t["storage_offset"]), bool(t["contiguous"]), bool(t["returned"]))
               for t in raw["tensors"]}
    return CallInfo(raw["op"], tensors, {k: float(v) for k, v in raw["scalars"].items()}, dict(raw["flags"]),
                    _dims(raw["op"], tensors), raw.get("description", ""), raw.get("preset") or None, raw)


def ask(supports: Callable[[CallInfo], Any], raw: Mapping[str, Any]) -> tuple[bool, str]:
    """(inside, reason) for one call; raises TypeError for an answer that is neither a bool nor a
    non-empty reason string (the caller reports it as the campaign's error)."""
    answer = supports(call_info(raw))
    if isinstance(answer, bool) or type(answer).__name__ == "bool_":  # numpy's bool too
        return bool(answer), "" if answer else "outside the declared domain"
    if isinstance(answer, str) and answer:
        return False, answer
    raise TypeError(f"supports= must return True, False or a reason string for False, got {answer!r}")
