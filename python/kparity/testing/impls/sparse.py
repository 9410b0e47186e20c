"""Plain-PyTorch implementations of DeepSeek-V4 sparse paged attention (spec sparse_attention.md C.1,
C.3, C.4, F.0), with the Triton kernels' rounding points: QK in fp32 from the storage dtype, the
softmax weights rounded to the storage dtype for P.V while the denominator sums them unrounded, the
sink folded in once at the end, ``-FLT_MAX`` as the running-max seed, ``max(Z, 1e-30)``; prefill in
base e, decode in base 2 with log2(e) folded into the scale on the host. One token at a time,
reductions in torch's order.

Upstream allocates ``out`` (``empty_like(q)``) and, with ``return_lse``, an fp32 ``lse``; these
functions do the same and return ``out`` or ``(out, lse)``.

``_Faults`` holds the switches the planted bugs flip; every public function runs with none.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

F32 = torch.float32
FLT_MAX = 3.4028234663852886e38
LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453


@dataclass(frozen=True)
class _Faults:
    """Deliberate bugs, one switch each (planted.py documents the failure class each must cause)."""
    dedupe_rows: bool = False          # each selected row counted once (duplicates dropped)
    sink_outside_denominator: bool = False  # the sink's exp(sigma - M) left out of Z
    negative_index_wraps: bool = False  # a -1 sentinel read as the last row (Python indexing)
    shuffled_keys: bool = False         # keys summed in a random order on each call
    out_in_fp32: bool = False           # returns out as fp32 instead of q's dtype


NO_FAULTS = _Faults()


def _span(indptr: torch.Tensor, indices: torch.Tensor, t: int) -> torch.Tensor:
    """Token t's CSR span of the flat index array (C.1 item 1): empty when it does not increase."""
    ptr = indptr.reshape(-1)
    b, e = int(ptr[t]), int(ptr[t + 1])
    return indices.reshape(-1)[b:e] if e > b else indices.reshape(-1)[:0]


def _attend(q_t: torch.Tensor, rows: torch.Tensor, shifted: torch.Tensor, sink: torch.Tensor, scale: float,
            shift: float, base2: bool, storage: torch.dtype, faults: _Faults):
    """One token, every head (C.6): q_t [H, D] fp32, rows [n, D] fp32, shifted [n] bool.
    Returns (out [H, D] fp32, lse [H] fp32, natural log)."""
    H, D = q_t.shape
    dev = q_t.device
    if faults.shuffled_keys and rows.shape[0] > 1:
        perm = torch.randperm(rows.shape[0], device=dev)
        rows, shifted = rows[perm], shifted[perm]
    # The kernel gets fp32 constants; decode folds log2(e) into the scale on the host (F.0 item 4).
    sc = torch.tensor(scale * LOG2E if base2 else scale, dtype=F32, device=dev)
    sh = torch.tensor(shift * LOG2E if base2 else shift, dtype=F32, device=dev)
    s = (q_t @ rows.T) * sc + torch.where(shifted, sh, 0.0)[None, :]  # [H, n]
    sig = sink * torch.tensor(LOG2E, dtype=F32, device=dev) + sh if base2 else sink + sh
    exp = torch.exp2 if base2 else torch.exp

    seed = torch.full((H,), -FLT_MAX, dtype=F32, device=dev)  # finite seed: an empty set must not give -inf - -inf
    # The max drops NaN like tl.max, so a NaN logit or sink reaches only Z.
    s_max = torch.where(torch.isnan(s), seed[:, None], s).amax(dim=1) if s.shape[1] else seed
    M = torch.maximum(torch.maximum(seed, s_max), torch.where(torch.isnan(sig), seed, sig))
    w = exp(s - M[:, None])
    w_sink = exp(sig - M)
    Z = w.sum(dim=1) + (0.0 if faults.sink_outside_denominator else w_sink)
    num = w.to(storage).to(F32) @ rows  # P rounded to the storage dtype for P.V (C.4 item 4)
    out = num / torch.clamp(Z, min=1e-30)[:, None]
    lse = (M + torch.log2(Z)) * LN2 if base2 else M + torch.log(Z)
    # Upstream's finalisation (docs/upstream_conventions.md): where(Z > 0, ..., 0). Z is NaN for a
    # NaN logit or sink and for a +inf logit or sink (inf - inf): zeros and lse -inf, as is Z = 0.
    pos = Z > 0
    out = torch.where(pos[:, None], out, 0.0)
    lse = torch.where(pos, lse, -math.inf)
    return out, lse


def _gather(src: torch.Tensor, idx: torch.Tensor, sentinels: bool, faults: _Faults) -> torch.Tensor:
    idx = idx.to(torch.int64)
    if sentinels and faults.negative_index_wraps and src.shape[0] > 0:
        idx = idx.remainder(src.shape[0])  # Python-style wrap-around: -1 is the last row
    elif sentinels:
        idx = idx[idx >= 0]  # any negative entry is a sentinel (C.1 item 3)
    if faults.dedupe_rows:
        idx = torch.unique(idx)
    return src[idx].to(F32)


def _run(q, sources, attn_sink, softmax_scale, shift, base2, return_lse, faults: _Faults):
    """sources: [(rows tensor, indices, indptr, sentinels, shifted)] in list order."""
    T, H, D = q.shape
    out = torch.empty_like(q, dtype=F32 if faults.out_in_fp32 else q.dtype)
    lse = torch.empty((T, H), dtype=F32, device=q.device) if return_lse else None
    sink = attn_sink.reshape(-1)[:H].to(F32)  # widened to fp32 whatever its dtype (B.1)
    for t in range(T):
        rows, shifted = [], []
        for src, indices, indptr, sentinels, is_shifted in sources:
            r = _gather(src, _span(indptr, indices, t), sentinels, faults)
            rows.append(r)
            shifted.append(torch.full((r.shape[0],), is_shifted, dtype=torch.bool, device=q.device))
        o, l = _attend(q[t].to(F32), torch.cat(rows), torch.cat(shifted), sink, softmax_scale, shift, base2,
                       q.dtype, faults)
        out[t] = o.to(out.dtype)
        if lse is not None:
            lse[t] = l
    return (out, lse) if return_lse else out


def paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend, kv_indptr_extend,
                  attn_sink, softmax_scale, *, return_lse=False, replicated_logit_shift=0.0):
    """sglang ``sparse_attn_v4_paged_prefill`` (V-lse, sparse_attention.md A.2): one softmax over the
    prefix rows of ``unified_kv`` then the extend rows of ``kv`` plus a zero-value sink."""
    return _paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend,
                          kv_indptr_extend, attn_sink, softmax_scale, return_lse, replicated_logit_shift, NO_FAULTS)


def _paged_prefill(q, unified_kv, kv_indices_prefix, kv_indptr_prefix, kv, kv_indices_extend, kv_indptr_extend,
                   attn_sink, softmax_scale, return_lse, replicated_logit_shift, faults: _Faults):
    sources = [(unified_kv, kv_indices_prefix, kv_indptr_prefix, True, False),
               (kv, kv_indices_extend, kv_indptr_extend, True, True)]
    return _run(q, sources, attn_sink, softmax_scale, float(replicated_logit_shift), False, return_lse, faults)


def paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, *, return_lse=False):
    """sglang ``sparse_attn_v4_paged_decode`` (sparse_attention.md F.0): one source, no sentinels
    (every entry is a valid row), base 2. ``return_lse`` is the newer variant's keyword."""
    return _paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, return_lse, NO_FAULTS)


def _paged_decode(q, unified_kv, kv_indices, kv_indptr, attn_sink, softmax_scale, return_lse, faults: _Faults):
    sources = [(unified_kv, kv_indices, kv_indptr, False, False)]
    return _run(q, sources, attn_sink, softmax_scale, 0.0, True, return_lse, faults)
