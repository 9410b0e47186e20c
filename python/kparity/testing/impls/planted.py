"""Planted-bug variants of the example implementations: each is one realistic slip in an otherwise
correct implementation, tagged with the failure class ``kparity.fuzz.check_implementation`` must
report for it and the property that sees it. The test suite (tests/python/test_fuzz_planted.py)
requires each to be caught with that class within ``max_cases`` cases, and the unmodified
implementations to pass the same campaign.

The failure classes (``kparity.fuzz.FAILURE_CLASSES``): wrong-values, wrote-outside-outputs,
not-deterministic, crashed, rejected-valid-call, accepted-hostile-call, timed-out, bad-return.
"""
from __future__ import annotations

import functools
import inspect
import threading
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from . import kda, sparse


@dataclass(frozen=True)
class PlantedBug:
    name: str                # "duplicates-dropped"
    op: str                  # the op it is planted in
    failure: str             # the failure class it must produce
    what: str                # one line: the bug
    impl: Callable[..., Any]
    properties: tuple[str, ...] = ("differential",)  # the properties that see it
    max_cases: int = 300     # caught within this many cases of those properties
    options: dict[str, Any] = field(default_factory=dict)  # extra check_implementation options


def _with_faults(public: Callable, private: Callable, faults: Any) -> Callable:
    """``public``'s signature, ``private``'s body with ``faults`` switched on."""
    sig = inspect.signature(public)

    @functools.wraps(public)
    def impl(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        return private(*bound.arguments.values(), faults)

    return impl


def _kda(public: str, **faults: Any) -> Callable:
    return _with_faults(getattr(kda, public), getattr(kda, "_" + public), kda._Faults(**faults))


def _sparse(public: str, **faults: Any) -> Callable:
    return _with_faults(getattr(sparse, public), getattr(sparse, "_" + public), sparse._Faults(**faults))


@functools.wraps(kda.packed_decode)
def _writes_past_out(*args, **kwargs):
    """Correct results, then one element stored just past the end of ``out`` through a view of its
    storage: the off-by-one tail store of a vectorised kernel."""
    out, state = kda.packed_decode(*args, **kwargs)
    tail = torch.as_strided(out, (1,), (1,), out.storage_offset() + out.numel())
    tail.zero_()
    return out, state


@functools.wraps(kda.packed_decode)
def _rejects_int64_indices(*args, **kwargs):
    """Insists on int32 slot indices, which upstream reads as int64 whatever their integer dtype."""
    idx = inspect.signature(kda.packed_decode).bind(*args, **kwargs).arguments["ssm_state_indices"]
    if idx.dtype != torch.int32:
        raise ValueError(f"`ssm_state_indices` must be int32 (got {idx.dtype}).")
    return kda.packed_decode(*args, **kwargs)


@functools.wraps(sparse.paged_decode)
def _divides_by_key_count(*args, **kwargs):
    """Logs the mean key count per token with a Python division: an empty span raises
    ZeroDivisionError, an exception no input check would raise."""
    a = inspect.signature(sparse.paged_decode).bind(*args, **kwargs).arguments
    ptr = a["kv_indptr"].reshape(-1).tolist()
    T = a["q"].shape[0]
    for t in range(T):
        _ = 1.0 / max(ptr[t + 1] - ptr[t], 0)
    return sparse.paged_decode(*args, **kwargs)


# A hang that still ends: the harness abandons the call at its time limit; the thread finishes later.
_HANG_SECONDS = 30.0


@functools.wraps(kda.replayssm_decode)
def _hangs_on_forced_flush(*args, **kwargs):
    """Waits on a lock that is never released when a live row is forced to flush (a deadlock on the
    rarely taken path)."""
    a = inspect.signature(kda.replayssm_decode).bind(*args, **kwargs).arguments
    ff, idx = a["force_flush"], a["ssm_state_indices"]
    if ff is not None and bool(((ff.to(torch.int64) != 0) & (idx.to(torch.int64) >= 0)).any()):
        threading.Event().wait(_HANG_SECONDS)
    return kda.replayssm_decode(*args, **kwargs)


@functools.wraps(kda.replayssm_decode)
def _g_cache_dtype_unchecked(*args, **kwargs):
    """Runs kparity's contract like a careful wrapper would, except that it lets a g_cache of the
    wrong dtype through (it converts it instead), so that one hostile call is accepted."""
    import kparity

    a = inspect.signature(kda.replayssm_decode).bind(*args, **kwargs)
    a.apply_defaults()
    try:
        kparity.check("kda/replayssm_decode", entry="kernel" if a.arguments["out"].is_cuda else "reference",
                      **a.arguments)
    except kparity.ContractError as e:
        if e.slug != "kda-g-cache-dtype":
            raise
        return None  # accepted: the caller's buffers untouched, nothing raised
    return kda.replayssm_decode(*args, **kwargs)


def planted_bugs() -> list[PlantedBug]:
    """Every planted bug, in a fixed order."""
    return [
        PlantedBug("duplicates-dropped", "sparse/paged_decode", "wrong-values",
                   "a row selected twice counts once (torch.unique on the index list)",
                   _sparse("paged_decode", dedupe_rows=True)),
        PlantedBug("sink-outside-denominator", "sparse/paged_prefill", "wrong-values",
                   "the sink's exp(sigma - M) is left out of the softmax denominator",
                   _sparse("paged_prefill", sink_outside_denominator=True)),
        PlantedBug("sentinel-read-as-row", "sparse/paged_prefill", "wrong-values",
                   "a negative sentinel indexes from the end of the source instead of being skipped",
                   _sparse("paged_prefill", negative_index_wraps=True)),
        PlantedBug("wrong-gqa-head-mapping", "kda/packed_decode", "wrong-values",
                   "value head hv reads q/k head hv % H instead of hv // (HV / H)",
                   _kda("packed_decode", gqa_modulo=True)),
        PlantedBug("missed-padding-row", "kda/replayssm_decode", "wrong-values",
                   "rows with a negative slot leave `out` as it was instead of zeroing it",
                   _kda("replayssm_decode", skip_padding_rows=True)),
        PlantedBug("cursor-off-by-one", "kda/replayssm_decode", "wrong-values",
                   "the replay folds ring positions 0..c instead of 0..c-1",
                   _kda("replayssm_decode", ring_read_past_cursor=True)),
        PlantedBug("state-written-on-append", "kda/replayssm_decode", "wrong-values",
                   "the checkpoint is written on append steps as well as on flushes",
                   _kda("replayssm_decode", state_on_append=True)),
        PlantedBug("beta-not-rounded", "kda/replayssm_decode", "wrong-values",
                   "beta stays fp32 where the Helion ReplaySSM rounds it through b's 16-bit dtype",
                   _kda("replayssm_decode", beta_unrounded=True)),
        PlantedBug("state-carried-across-sequences", "kda/recurrent", "wrong-values",
                   "the recurrence ignores cu_seqlens and carries the state into the next sequence",
                   _kda("recurrent", carry_state_across_sequences=True)),
        PlantedBug("guard-band-write", "kda/packed_decode", "wrote-outside-outputs",
                   "one element stored just past the end of `out` through a view of its storage",
                   _writes_past_out),
        PlantedBug("input-normalised-in-place", "kda/packed_decode", "wrote-outside-outputs",
                   "the L2 norm of q and k is written back into mixed_qkv",
                   _kda("packed_decode", normalise_in_place=True)),
        PlantedBug("nondeterministic-reduction", "kda/packed_decode", "not-deterministic",
                   "the K reductions run in a random order on every call",
                   _kda("packed_decode", random_reduction_order=True), ("deterministic",)),
        PlantedBug("rejects-int64-indices", "kda/packed_decode", "rejected-valid-call",
                   "raises ValueError for int64 ssm_state_indices, which upstream accepts",
                   _rejects_int64_indices),
        PlantedBug("zero-division-on-empty-span", "sparse/paged_decode", "crashed",
                   "a Python division by a token's key count: ZeroDivisionError on an empty span",
                   _divides_by_key_count),
        PlantedBug("out-in-fp32", "sparse/paged_prefill", "bad-return",
                   "returns `out` as fp32 where upstream returns q's dtype",
                   _sparse("paged_prefill", out_in_fp32=True)),
        PlantedBug("hangs-on-forced-flush", "kda/replayssm_decode", "timed-out",
                   "waits forever (30 s here) when a live row is forced to flush",
                   _hangs_on_forced_flush, options={"case_timeout": 2.0}),
        PlantedBug("g-cache-dtype-unchecked", "kda/replayssm_decode", "accepted-hostile-call",
                   "runs kparity.check but lets a 16-bit g_cache through",
                   _g_cache_dtype_unchecked, ("contract",)),
    ]
