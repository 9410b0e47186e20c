"""kparity.reference, kparity.dump and kparity.load: the host-side entry points. Device tensors are
staged through host copies (kparity/_staging.py); results go back into the caller's tensors."""
from __future__ import annotations

import os
from typing import Any, Literal, NamedTuple

from . import _kparity, _staging
from ._ops_table import op_row


def _stage(op: str, args: dict[str, Any], fn: str, written: set[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(host arguments, {name: host copy} of the device tensors)."""
    host: dict[str, Any] = {}
    staged: dict[str, Any] = {}
    for name, v in args.items():
        if name in written and v is not None:
            _staging.check_writable(v, name, fn)
        if v is not None and _staging.on_device(v):
            staged[name] = host[name] = _staging.host_copy(v, name, fn)
        else:
            host[name] = v
    return host, staged


def _first_tensor(args: dict[str, Any]) -> Any:
    return next((v for v in args.values() if _staging.dlpack_device(v) is not None), None)


def reference(op: str, *, precision: Literal["oracle", "faithful"] = "oracle", **args: Any) -> dict[str, Any]:
    """Runs kparity's scalar reference of `op` on the call's arguments (upstream names, as for
    check). The in-place arguments (state, rings, given outputs) are updated exactly as upstream
    updates them; outputs upstream allocates itself and the call left out are allocated. Device
    tensors are copied to the host and the written ones copied back. Returns {name: tensor} for every
    tensor the call writes. The call is validated first (every check, deep ones included, at the
    reference entry): a violation raises its ContractError."""
    fn = "kparity.reference"
    row = op_row(op, fn)
    host, staged = _stage(op, args, fn, row.written)
    if staged:
        # Overlap and device checks need the caller's own addresses and devices, which the host
        # copies do not have; the data checks run in the reference itself, on the copies.
        _kparity.check(op, entry="reference", extra=True, **args)
    res = _kparity.reference_host(op, precision, host)
    like = _first_tensor(args)
    out: dict[str, Any] = {}
    for name in res["written"]:
        if name in res["allocated"]:
            out[name] = _staging.to_framework(res["allocated"][name], like)
        else:
            if name in staged:
                _staging.copy_back(args[name], staged[name], name, fn)
            out[name] = args[name]
    return out


def dump(path: "str | os.PathLike[str]", op: str, *, expected: "dict[str, Any] | None" = None,
         info: "dict[str, str] | None" = None, **args: Any) -> None:
    """Writes one call of `op` as a `kparity run` dump (README, "Dump convention"): its tensors
    (device ones copied, strided ones packed), scalars and flags, ``expected.<name>`` for each of
    `expected`, and `info` as informational ``kparity.<key>`` metadata."""
    fn = "kparity.dump"
    op_row(op, fn)
    host, _ = _stage(op, args, fn, set())
    exp_host, _ = _stage(op, dict(expected or {}), fn, set())
    _kparity.save_dump(os.fspath(path), op, host, exp_host, dict(info or {}))


class Call(NamedTuple):
    """One call read from a dump: ``kparity.reference(call.op, **call.args)`` replays it."""

    op: str
    args: dict[str, Any]
    expected: dict[str, Any]
    warnings: list[str]


def load(path: "str | os.PathLike[str]") -> Call:
    """Reads a `kparity run` dump. Tensors come back as torch tensors when PyTorch is imported (or
    importable), else as DLPack arrays (numpy.from_dlpack reads all but bfloat16)."""
    d = _kparity.load_dump(os.fspath(path))
    try:
        import torch

        conv = torch.from_dlpack
    except ImportError:
        conv = lambda a: a  # noqa: E731
    args: dict[str, Any] = {k: conv(v) for k, v in d["tensors"].items()}
    args.update(d["scalars"])
    args.update(d["flags"])
    return Call(d["op"], args, {k: conv(v) for k, v in d["expected"].items()}, list(d["warnings"]))
