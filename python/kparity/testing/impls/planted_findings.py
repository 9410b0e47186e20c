"""Implementations with more than one slip, or with a domain of their own, for the tests of
``check_implementation``'s declared domains and several-findings runs
(tests/python/test_fuzz_findings.py). Each wraps a correct example implementation (sparse.py) in
plain PyTorch and says what it gets wrong.

* ``TWO_TENSOR_SLIPS``: sparse/paged_decode whose tokens after the first store the previous token's
  output (``out`` wrong when T > 1) and whose lse stays in base 2 (``lse`` wrong): two unrelated
  slips, on two tensors.
* ``CRASH_AND_SLIP``: sparse/paged_decode that crashes on an empty key list (a Python
  ZeroDivisionError) and counts a row selected twice once (``out`` wrong with duplicates).
* ``crashes_below_d16``: sparse/paged_decode behind a Triton-like compile error for D < 16.
* ``REJECTS_STRIDED_Q_AND_DEDUPES``: sparse/paged_decode that insists on a contiguous q (its own
  ValueError, which upstream does not raise) and, inside that domain, drops duplicate rows.
* One slip each, for the explain step (issue 33): ``DROPS_FIFTH_KEY``, ``IGNORES_INF_SINK``,
  ``IGNORES_Q_STRIDES`` (sparse/paged_decode), ``WRONG_LAST_CHUNK`` and ``GQA_ONLY`` (kda/recurrent),
  ``FP16_ONLY`` (kda/packed_decode).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import torch


from . import kda, sparse

LOG2E = 1.4426950408889634


def _args(fn: Callable[..., Any], args: tuple, kwargs: dict[str, Any]) -> inspect.BoundArguments:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound


@functools.wraps(sparse.paged_decode)
def stale_out_and_base2_lse(*args: Any, **kwargs: Any) -> Any:
    """Two slips. (1) Each token after the first stores the previous token's output row (a store
    pointer one token behind): ``out`` wrong for T > 1 wherever neighbouring tokens differ. (2) The
    lse is returned in base 2, the kernel's internal base, without the final multiplication by
    ln 2: ``lse`` wrong wherever it is finite and not 0. Each slip touches one tensor only."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    result = sparse.paged_decode(**a)
    out, lse = result if a["return_lse"] else (result, None)
    if out.shape[0] > 1:
        out[1:] = out[:-1].clone()
    return (out, lse * LOG2E) if lse is not None else out


@functools.wraps(sparse.paged_decode)
def zero_division_and_dedupe(*args: Any, **kwargs: Any) -> Any:
    """Two slips of different kinds. (1) The mean key count per token is logged with a Python
    division, which raises ZeroDivisionError on a token with an empty list. (2) The key list goes
    through torch.unique, so a row selected twice counts once."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    ptr = a["kv_indptr"].reshape(-1).tolist()
    for t in range(a["q"].shape[0]):
        _ = 1.0 / (ptr[t + 1] - ptr[t])
    return sparse._paged_decode(a["q"], a["unified_kv"], a["kv_indices"], a["kv_indptr"], a["attn_sink"],
                                a["softmax_scale"], a["return_lse"], sparse._Faults(dedupe_rows=True))


class CompilationError(Exception):
    """What Triton raises when a kernel cannot be compiled for a shape."""


@functools.wraps(sparse.paged_decode)
def crashes_below_d16(*args: Any, **kwargs: Any) -> Any:
    """Correct for D >= 16; below, the way a Triton kernel whose tl.dot needs K >= 16 fails: a
    compile error (a crash, not a rejection: upstream's wrapper accepts the call)."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    if a["q"].shape[-1] < 16:
        raise CompilationError("at 115:17: Input shapes should have M >= 1, N >= 1 and K >= 16")
    return sparse.paged_decode(**a)


def d_at_least_16(call: Any) -> bool | str:
    """The declared domain of crashes_below_d16."""
    return True if call.dims["D"] >= 16 else f"D = {call.dims['D']} < 16"


@functools.wraps(sparse.paged_decode)
def rejects_strided_q_and_dedupes(*args: Any, **kwargs: Any) -> Any:
    """A wrapper stricter than upstream: it raises its own ValueError for a q that is not
    contiguous (upstream reads q through its strides), which is a rejection of valid calls; inside
    that domain, a row selected twice counts once (torch.unique on the list)."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    if not a["q"].is_contiguous():
        raise ValueError("`q` must be contiguous.")
    return sparse._paged_decode(a["q"], a["unified_kv"], a["kv_indices"], a["kv_indptr"], a["attn_sink"],
                                a["softmax_scale"], a["return_lse"], sparse._Faults(dedupe_rows=True))


TWO_TENSOR_SLIPS = ("sparse/paged_decode", stale_out_and_base2_lse)
CRASH_AND_SLIP = ("sparse/paged_decode", zero_division_and_dedupe)
REJECTS_STRIDED_Q_AND_DEDUPES = ("sparse/paged_decode", rejects_strided_q_and_dedupes)


# ---- one slip each, for the explain step (issue 33; tests/python/test_fuzz_explain.py) ----------

def _csr_without_fifth_keys(indptr: torch.Tensor, indices: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The CSR lists with the last entry of every list of five or more dropped."""
    ptr = indptr.reshape(-1).tolist()
    idx = indices.reshape(-1).tolist()
    new_ptr, new_idx = [0], []
    for t in range(len(ptr) - 1):
        b, e = ptr[t], ptr[t + 1]
        lst = idx[b:e] if e > b else []
        if len(lst) >= 5:
            lst = lst[:-1]
        new_idx.extend(lst)
        new_ptr.append(len(new_idx))
    return (torch.tensor(new_ptr, dtype=indptr.dtype), torch.tensor(new_idx, dtype=indices.dtype))


@functools.wraps(sparse.paged_decode)
def drops_fifth_key(*args: Any, **kwargs: Any) -> Any:
    """Leaves out the last selected key of any token with five or more keys (a key loop whose tile
    of four is handled and whose remainder is not): right for four keys or fewer."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    a["kv_indptr"], a["kv_indices"] = _csr_without_fifth_keys(a["kv_indptr"], a["kv_indices"])
    return sparse.paged_decode(**a)


@functools.wraps(sparse.paged_decode)
def ignores_inf_sink(*args: Any, **kwargs: Any) -> Any:
    """Reads a +inf attention sink as -inf (no sink), where upstream's +inf sink zeroes the output."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    sink = a["attn_sink"].clone()
    sink[sink == float("inf")] = float("-inf")
    a["attn_sink"] = sink
    return sparse.paged_decode(**a)


@functools.wraps(sparse.paged_decode)
def ignores_q_strides(*args: Any, **kwargs: Any) -> Any:
    """Reads q as if it were contiguous from q.data_ptr() (a kernel handed the pointer and no
    strides): right for a compact q, at any storage offset."""
    a = _args(sparse.paged_decode, args, kwargs).arguments
    q = a["q"]
    if not q.is_contiguous():
        a["q"] = torch.as_strided(q, q.shape, torch.empty(q.shape).stride(), q.storage_offset())
    return sparse.paged_decode(**a)


DROPS_FIFTH_KEY = ("sparse/paged_decode", drops_fifth_key)
IGNORES_INF_SINK = ("sparse/paged_decode", ignores_inf_sink)
IGNORES_Q_STRIDES = ("sparse/paged_decode", ignores_q_strides)


@functools.wraps(kda.recurrent)
def wrong_last_chunk(*args: Any, **kwargs: Any) -> Any:
    """A chunked kda/recurrent whose tail chunk (the last 64 tokens or fewer of each sequence) is
    scaled by a stale factor: ``out`` 1/16 too large there, everything else and the state right."""
    a = _args(kda.recurrent, args, kwargs).arguments
    out, final = kda.recurrent(**a)
    T = out.shape[0]
    cu = a["cu_seqlens"].reshape(-1).tolist() if a["cu_seqlens"] is not None else [0, T]
    for b, e in zip(cu[:-1], cu[1:]):
        if e > b:
            tail = b + (e - 1 - b) // 64 * 64
            out[tail:e] = (out[tail:e].float() * (1 + 1 / 16)).to(out.dtype)
    return out, final


WRONG_LAST_CHUNK = ("kda/recurrent", wrong_last_chunk)


def _off(x: torch.Tensor) -> torch.Tensor:
    """1/16 too large plus 1/4: wrong whatever the values and the bound."""
    return (x.float() * (1 + 1 / 16) + 0.25).to(x.dtype)


@functools.wraps(kda.recurrent)
def gqa_only(*args: Any, **kwargs: Any) -> Any:
    """kda/recurrent whose output is wrong whenever value heads are grouped (HV > H): a kernel whose
    grouped-head path scales by a stale factor."""
    a = _args(kda.recurrent, args, kwargs).arguments
    out, final = kda.recurrent(**a)
    if a["v"].shape[1] > a["q"].shape[1]:
        out.copy_(_off(out))
    return out, final


@functools.wraps(kda.packed_decode)
def fp16_only(*args: Any, **kwargs: Any) -> Any:
    """kda/packed_decode whose output is wrong for fp16 activations only (bf16 and fp32 right)."""
    a = _args(kda.packed_decode, args, kwargs).arguments
    out, state = kda.packed_decode(**a)
    if a["mixed_qkv"].dtype == torch.float16:
        out.copy_(_off(out))
    return out, state


GQA_ONLY = ("kda/recurrent", gqa_only)
FP16_ONLY = ("kda/packed_decode", fp16_only)
