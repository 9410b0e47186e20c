"""kparity from Python: contracts, catalog, scalar references, CUDA kernels and call capture for KDA
and DeepSeek-V4 sparse attention ops, on any DLPack tensor (PyTorch, numpy, ...) without copies.

    import kparity
    kparity.check("kda/replayssm_decode", mixed_qkv=x, a=a, ..., scale=0.25)   # raises like upstream
    kparity.validate(op, extra=True, deep=True, **args)                          # every diagnostic
    kparity.explain(err).text()                                                  # the catalog page
    kparity.reference(op, precision="oracle", **args)                            # scalar reference
    kparity.kernel(op, **args)                                                   # CUDA kernel, current stream
    kparity.judge(op, call, outputs, profile=None)                               # the differential rule's verdict
    kparity.kda.replayssm_decode.check(*upstream_args, **upstream_kwargs)        # upstream positional order

Arguments use the upstream names of the README's dump convention; None means absent.
"""
from __future__ import annotations

from typing import Any

from . import _kparity, _staging
from ._calls import Call, dump, load, reference
from ._catalog import Entry, SearchHit, entries, explain, search
from ._errors import (
    BY_CLASS as _BY_CLASS,
    ContractAssertionError,
    ContractError,
    ContractIndexError,
    ContractNotImplementedError,
    ContractRuntimeError,
    ContractTypeError,
    ContractValueError,
    ContractZeroDivisionError,
    InternalError,
    UnknownEntryError,
)
from ._guard import Guard, guard
from ._judge import TensorVerdict, Verdict, judge
from ._kparity import Diagnostic, check, validate
from ._ops_table import OPS as _OPS

__version__ = "0.1.0"

_kparity._set_exception_types(_BY_CLASS)
_kparity._set_host_stager(_staging.host_copy)

#: True when this build has the CUDA kernels (nvcc was found when the package was built).
has_kernels: bool = _kparity.has_kernels

if has_kernels:
    _kparity._set_current_stream(_staging.current_stream)
    _kparity._set_device_allocator(_staging.allocate_device)
    kernel = _kparity.kernel
else:

    def kernel(op: str, **args: Any) -> dict[str, Any]:
        """Launches kparity's CUDA kernel of `op` (unavailable: this build has no kernels)."""
        raise RuntimeError(
            "kparity.kernel: this kparity was built without its CUDA kernels (nvcc was not found, or "
            "KPARITY_CUDA=OFF); reinstall with nvcc on PATH"
        )


def ops() -> tuple[str, ...]:
    """The op names: kda/recurrent, kda/chunk, kda/packed_decode, kda/replayssm_decode,
    sparse/paged_prefill, sparse/paged_decode."""
    return _OPS


from . import kda, sparse  # noqa: E402  (per-family modules need the package initialised)

__all__ = [
    "Call", "ContractAssertionError", "ContractError", "ContractIndexError", "ContractNotImplementedError", "ContractRuntimeError",
    "ContractTypeError", "ContractValueError", "ContractZeroDivisionError", "Diagnostic", "Entry", "Guard", "InternalError", "SearchHit",
    "TensorVerdict", "UnknownEntryError", "Verdict", "check", "dump", "entries", "explain", "guard", "has_kernels", "judge",
    "kda", "kernel", "load", "ops", "reference", "search", "sparse", "validate",
]
