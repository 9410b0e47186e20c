"""Example implementations of kparity's five ops in plain PyTorch, to read and to fuzz:

* ``recurrent``, ``packed_decode``, ``replayssm_decode`` (kda.py) and ``paged_prefill``,
  ``paged_decode`` (sparse.py): correct implementations with upstream's calling conventions, written
  the way real kernels differ from kparity's faithful reference (fp32 math, their own reduction
  order). ``CORRECT`` maps op names to them.
* ``replayssm_decode_triton_k_ring`` (kda.py): ``replayssm_decode`` with sglang's Triton k ring
  store (k_hat rounded through ``out``'s dtype first); correct under the ``tf32-dot`` profile only.
* ``planted_bugs()`` (planted.py): variants with one realistic bug each, tagged with the failure
  class ``kparity.fuzz.check_implementation`` reports for it.
* ``with_contract(op, impl)``: ``impl`` behind kparity's own contract, the way to make an
  implementation reject hostile calls exactly as upstream does.
* ``kernels(op)`` (kernels.py): kparity's own CUDA kernels behind upstream's conventions.

    from kparity.fuzz import check_implementation
    from kparity.testing import impls
    report = check_implementation("kda/packed_decode", impls.packed_decode, device="cpu", cases=200)
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from .kda import packed_decode, recurrent, replayssm_decode, replayssm_decode_triton_k_ring
from .kernels import kernels
from .planted import PlantedBug, planted_bugs
from .sparse import paged_decode, paged_prefill

CORRECT: dict[str, Callable[..., Any]] = {
    "kda/recurrent": recurrent,
    "kda/packed_decode": packed_decode,
    "kda/replayssm_decode": replayssm_decode,
    "sparse/paged_prefill": paged_prefill,
    "sparse/paged_decode": paged_decode,
}


def with_contract(op: str, impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` with ``kparity.check(op, ...)`` in front: upstream's checks, in upstream order, with
    upstream's messages and exception classes (the kernel entry for CUDA tensors)."""
    import inspect

    import kparity

    sig = inspect.signature(impl)

    @functools.wraps(impl)
    def checked(*args: Any, **kwargs: Any) -> Any:
        bound = sig.bind(*args, **kwargs)
        on_cuda = any(getattr(v, "is_cuda", False) for v in bound.arguments.values())
        kparity.check(op, entry="kernel" if on_cuda else "reference", **bound.arguments)
        return impl(*args, **kwargs)

    return checked


__all__ = ["CORRECT", "PlantedBug", "kernels", "paged_decode", "paged_prefill", "packed_decode", "planted_bugs", "recurrent",
           "replayssm_decode", "replayssm_decode_triton_k_ring", "with_contract"]
