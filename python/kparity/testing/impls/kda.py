"""Plain-PyTorch implementations of the three KDA ops, written the way a real kernel differs from
kparity's faithful reference: vectorised fp32 math whose reductions run in torch's own order
(matmul tiles), the upstream rounding points and nothing else. They pass ``check_implementation``
under the ``faithful`` profile and are the starting point of the planted bugs (``planted.py``).

Calling conventions are upstream's (spec kda.md B.1, B.2.1; flash-linear-attention's
``fused_recurrent_kda`` for the recurrence): state, rings and ``out`` are updated in place and the
decode ops return ``(out, initial_state)``, the same objects; the recurrence allocates and returns
``(o, final_state)``.

``_Faults`` holds the switches the planted bugs flip; every public function runs with none.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

F32 = torch.float32


@dataclass(frozen=True)
class _Faults:
    """Deliberate bugs, one switch each (planted.py documents the failure class each must cause)."""
    gqa_modulo: bool = False             # value head hv reads q/k head hv % H instead of hv // G
    skip_padding_rows: bool = False      # padding rows' out is left as it was (poison)
    normalise_in_place: bool = False     # L2-normalises q/k inside mixed_qkv (an input)
    random_reduction_order: bool = False  # the K reduction in a shuffled order each call
    ring_read_past_cursor: bool = False  # ReplaySSM folds ring positions 0..c instead of 0..c-1
    state_on_append: bool = False        # ReplaySSM writes the checkpoint on append steps too
    beta_unrounded: bool = False         # ReplaySSM keeps beta in fp32 although b is 16-bit
    carry_state_across_sequences: bool = False  # recurrence ignores cu_seqlens boundaries
    log1p_softplus_below: float | None = None   # softplus as log1p(exp(x)) for x below this


NO_FAULTS = _Faults()


def _rt(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A rounding point: fp32 rounded to ``dtype`` (round to nearest even) and widened back."""
    return x if dtype == F32 else x.to(dtype).to(F32)


def _softplus(x: torch.Tensor, faults: _Faults) -> torch.Tensor:
    # sglang's literal log(1 + exp(x)) with threshold 20 (kda.md A.3), not torch's log1p form.
    lit = torch.log(1.0 + torch.exp(x))
    if faults.log1p_softplus_below is not None:
        lit = torch.where(x < faults.log1p_softplus_below, torch.log1p(torch.exp(x)), lit)
    return torch.where(x > 20.0, x, lit)


def _gate(x: torch.Tensor, A_log: torch.Tensor, lower_bound: float | None, faults: _Faults) -> torch.Tensor:
    """kda.md A.3: ``x`` [..., HV, K] (a + dt_bias), ``A_log`` [HV]; returns the log-decay g."""
    A = torch.exp(A_log.to(F32))[:, None]
    if lower_bound is not None:
        return torch.tensor(lower_bound, dtype=F32) * torch.sigmoid(A * x)
    return -A * _softplus(x, faults)


def _l2(x: torch.Tensor, multiply: bool) -> torch.Tensor:
    """kda.md A.5: epsilon on the sum of squares; divide by the root, or multiply by its inverse."""
    n = (x * x).sum(-1, keepdim=True) + 1e-6
    return x * (1.0 / torch.sqrt(n)) if multiply else x / torch.sqrt(n)


def _dot_k(a: torch.Tensor, b: torch.Tensor, faults: _Faults) -> torch.Tensor:
    """Sum over the last axis (K) of a * b, broadcast; a shuffled order when the fault asks."""
    if faults.random_reduction_order:
        perm = torch.randperm(a.shape[-1])
        prod = (a * b)[..., perm]
        acc = torch.zeros(prod.shape[:-1], dtype=F32, device=prod.device)
        for c in range(prod.shape[-1]):
            acc = acc + prod[..., c]
        return acc
    return (a * b).sum(-1)


def _split_packed(mixed_qkv: torch.Tensor, rows: torch.Tensor, H: int, HV: int, K: int, V: int):
    """B.0: row b of mixed_qkv is [q (H*K) | k (H*K) | v (HV*V)]; q/k per q/k head, v per value head."""
    x = mixed_qkv[rows].to(F32)
    n = x.shape[0]
    q = x[:, : H * K].reshape(n, H, K)
    k = x[:, H * K: 2 * H * K].reshape(n, H, K)
    v = x[:, 2 * H * K:].reshape(n, HV, V)
    return q, k, v


def _per_value_head(x: torch.Tensor, G: int, H: int, faults: _Faults) -> torch.Tensor:
    """[n, H, K] -> [n, HV, K]: value head hv uses q/k head hv // G (kda.md A.1)."""
    if faults.gqa_modulo:
        return x.repeat(1, G, 1)  # hv -> hv % H: the classic GQA slip
    return x.repeat_interleave(G, dim=1)


def _dims(mixed_qkv: torch.Tensor, initial_state: torch.Tensor):
    _, HV, V, K = initial_state.shape
    H = (mixed_qkv.shape[1] - HV * V) // 2 // K  # B.0 item 2: H is inferred
    return H, HV, K, V, HV // H


def _normalise_input_in_place(mixed_qkv: torch.Tensor, rows: torch.Tensor, H: int, K: int) -> None:
    """Planted bug: the L2 norm written back into the caller's mixed_qkv."""
    for r in rows.tolist():
        for off in (0, H * K):
            seg = mixed_qkv[r, off: off + H * K].view(H, K)
            seg.copy_(_l2(seg.to(F32), multiply=False).to(mixed_qkv.dtype))


def packed_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                  use_qk_l2norm_in_kernel=False, lower_bound=None):
    """sglang ``helion_fused_recurrent_kda_packed_decode`` (kda.md B.1); returns (out, initial_state)."""
    return _packed_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                          use_qk_l2norm_in_kernel, lower_bound, NO_FAULTS)


def _packed_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, out, ssm_state_indices,
                   use_qk_l2norm_in_kernel, lower_bound, faults: _Faults):
    H, HV, K, V, G = _dims(mixed_qkv, initial_state)
    idx = ssm_state_indices.to(torch.int64)
    live = torch.nonzero(idx >= 0).flatten()
    pad = torch.nonzero(idx < 0).flatten()
    if not faults.skip_padding_rows:
        out[pad] = 0  # B.1 item 1: padding rows read and write nothing else
    if live.numel() == 0:
        return out, initial_state
    slots = idx[live]
    q, k, v = _split_packed(mixed_qkv, live, H, HV, K, V)
    if use_qk_l2norm_in_kernel:
        # A.5 table: the Helion kernel multiplies by rsqrt for a bf16 state, divides otherwise.
        mul = initial_state.dtype == torch.bfloat16
        q, k = _l2(q, mul), _l2(k, mul)
        if faults.normalise_in_place:
            _normalise_input_in_place(mixed_qkv, live, H, K)
    q = _per_value_head(q, G, H, faults) * torch.tensor(scale, dtype=F32)
    k = _per_value_head(k, G, H, faults)
    x = a[live].to(F32).reshape(-1, HV, K) + dt_bias.to(F32).reshape(HV, K)
    alpha = torch.exp(_gate(x, A_log, lower_bound, faults))
    beta = torch.sigmoid(b[live].to(F32))  # B.1 item 3: fp32, never rounded

    S = initial_state[slots].to(F32) * alpha[:, :, None, :]        # A.7 1. decay
    u = _dot_k(S, k[:, :, None, :], faults)                          # 2. predict
    d = beta[:, :, None] * (v - u)                                   # 3. delta
    S = S + d[..., None] * k[:, :, None, :]                          # 4. rank-1 update
    o = _dot_k(S, q[:, :, None, :], faults)                          # 5. readout
    out[live, 0] = o.to(out.dtype)
    initial_state[slots] = S.to(initial_state.dtype)  # B.1 item 4: written back every step
    return out, initial_state


def replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache, out,
                     ssm_state_indices, write_pos, force_flush=None, use_qk_l2norm_in_kernel=False,
                     lower_bound=None, *, beta_in_fp32=False):
    """sglang ``helion_fused_recurrent_kda_replayssm_decode`` (kda.md B.2); returns (out, initial_state).
    ``beta_in_fp32`` is kparity's keyword for the fixed beta rounding (A.4 item 6)."""
    return _replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache,
                             out, ssm_state_indices, write_pos, force_flush, use_qk_l2norm_in_kernel,
                             lower_bound, beta_in_fp32, NO_FAULTS)


def replayssm_decode_triton_k_ring(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache,
                                   out, ssm_state_indices, write_pos, force_flush=None, use_qk_l2norm_in_kernel=False,
                                   lower_bound=None, *, beta_in_fp32=False):
    """``replayssm_decode`` with sglang's Triton k ring store: k_hat rounded to ``out``'s dtype, then
    converted to the ring's (fused_recurrent_linear_replayssm.py @03a70bf3, line 414
    ``k_c.to(p_o.dtype.element_ty)``), a second rounding when the ring is wider than ``out``. Correct
    under the ``tf32-dot`` (sglang-triton) profile, which models that point; ``faithful`` flags it."""
    return _replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache,
                             out, ssm_state_indices, write_pos, force_flush, use_qk_l2norm_in_kernel,
                             lower_bound, beta_in_fp32, NO_FAULTS, k_through_out=True)


def _replayssm_decode(mixed_qkv, a, b, A_log, dt_bias, scale, initial_state, d_cache, k_cache, g_cache, out,
                      ssm_state_indices, write_pos, force_flush, use_qk_l2norm_in_kernel, lower_bound,
                      beta_in_fp32, faults: _Faults, k_through_out: bool = False):
    H, HV, K, V, G = _dims(mixed_qkv, initial_state)
    L = d_cache.shape[2]
    io = out.dtype
    idx = ssm_state_indices.to(torch.int64)
    live = torch.nonzero(idx >= 0).flatten()
    if not faults.skip_padding_rows:
        out[torch.nonzero(idx < 0).flatten()] = 0  # B.2.3 item 1
    if live.numel() == 0:
        return out, initial_state
    slots = idx[live]
    c = write_pos.to(torch.int64)[live]  # cursors of padding rows are never read
    flush = c == L - 1
    if force_flush is not None:
        flush = flush | (force_flush.to(torch.int64)[live] != 0)

    q, k, v = _split_packed(mixed_qkv, live, H, HV, K, V)
    if use_qk_l2norm_in_kernel:  # B.2.9: r = 1/sqrt(n) once, then x * r
        q, k = _l2(q, True), _l2(k, True)
    k_head = k  # [n, H, K]: what the k ring stores
    q = _per_value_head(q, G, H, faults) * torch.tensor(scale, dtype=F32)
    k = _per_value_head(k, G, H, faults)
    kq = _dot_k(k, q, faults)  # B.2.5: current, undecayed k and q
    # a.view(batch, -1) and dt_bias.view(-1) as upstream reads them (kda.md C.1 #3)
    x = a.reshape(mixed_qkv.shape[0], -1)[live].to(F32).reshape(-1, HV, K) + dt_bias.to(F32).reshape(HV, K)
    g = _gate(x, A_log, lower_bound, faults)
    alpha = torch.exp(g)
    beta = torch.sigmoid(b[live].to(F32))
    if not beta_in_fp32 and not faults.beta_unrounded:
        beta = _rt(beta, b.dtype)  # A.4 item 3: Helion rounds beta through b's dtype

    # B.2.4: S_prev = S0 diag(exp(Gtot)) + sum_{i<c} rt(d_i) rt(k_i * W_i), W_i = exp(Gtot - P_i).
    m = c + 1 if faults.ring_read_past_cursor else c
    valid = torch.arange(L, device=m.device)[None, :] < m[:, None]                   # [n, L]
    vmask = valid[:, None, :, None]
    gr = torch.where(vmask, g_cache[slots].to(F32), 0.0)  # stale entries never read
    P = torch.cumsum(gr, dim=2)                                      # inclusive prefix, fp32
    Gtot = P[:, :, -1, :]
    W = torch.exp(Gtot[:, :, None, :] - P)
    dr = torch.where(vmask, _rt(d_cache[slots].to(F32), io), 0.0)
    kr = k_cache[slots].to(F32).repeat_interleave(G, dim=1)
    kw = torch.where(vmask, _rt(kr * W, io), 0.0)
    S = initial_state[slots].to(F32) * torch.exp(Gtot)[:, :, None, :] + torch.einsum("nhlv,nhlk->nhvk", dr, kw)

    sq = _dot_k(S, (q * alpha)[:, :, None, :], faults)              # B.2.5
    sk = _dot_k(S, (k * alpha)[:, :, None, :], faults)
    d = beta[:, :, None] * (v - sk)
    out[live, 0] = (sq + d * kq[:, :, None]).to(io)

    fl = torch.nonzero(flush | faults.state_on_append).flatten()
    if fl.numel():  # B.2.7: fold into the checkpoint, multiply first, then add
        S_new = S[fl] * alpha[fl][:, :, None, :] + d[fl][..., None] * k[fl][:, :, None, :]
        initial_state[slots[fl]] = S_new.to(initial_state.dtype)
    ap = torch.nonzero(~flush).flatten()
    if ap.numel():  # B.2.6: append at the cursor; nothing written on a flush
        s_ap, c_ap = slots[ap], c[ap]
        d_cache[s_ap, :, c_ap, :] = d[ap].to(d_cache.dtype)
        g_cache[s_ap, :, c_ap, :] = g[ap]
        k_entry = _rt(k_head[ap], io) if k_through_out else k_head[ap]  # sglang Triton: through out's dtype
        k_cache[s_ap, :, c_ap, :] = k_entry.to(k_cache.dtype)
    return out, initial_state


def recurrent(q, k, v, g=None, beta=None, scale=None, initial_state=None, output_final_state=False,
              use_qk_l2norm_in_kernel=False, cu_seqlens=None, *, a=None, dt_bias=None, A_log=None,
              lower_bound=None, beta_is_logits=False):
    """The KDA recurrence (kda.md A.7) over variable-length sequences, flash-linear-attention's
    ``fused_recurrent_kda`` without the batch axis: q, k [T, H, K], v [T, HV, V], the gate as ``g``
    [T, HV, K] or kparity's in-kernel form ``a`` + ``dt_bias`` + ``A_log``; state [N, HV, V, K]
    (sglang's V-first orientation). Returns ``(o, final_state)``: o like v, final_state fp32 (as fla
    allocates it) or None without ``output_final_state``."""
    return _recurrent(q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel,
                      cu_seqlens, a, dt_bias, A_log, lower_bound, beta_is_logits, NO_FAULTS)


def _recurrent(q, k, v, g, beta, scale, initial_state, output_final_state, use_qk_l2norm_in_kernel, cu_seqlens,
               a, dt_bias, A_log, lower_bound, beta_is_logits, faults: _Faults):
    T, H, K = q.shape
    HV, V = v.shape[1], v.shape[2]
    G = HV // H
    bounds = [0, T] if cu_seqlens is None else [int(x) for x in cu_seqlens.tolist()]
    N = len(bounds) - 1
    qf, kf = q.to(F32), k.to(F32)
    if use_qk_l2norm_in_kernel:  # A.5 table: fla divides by sqrt(n)
        qf, kf = _l2(qf, False), _l2(kf, False)
    sc = scale if scale is not None else 1.0 / math.sqrt(K)  # fla's default K^-0.5
    qf = _per_value_head(qf, G, H, faults) * torch.tensor(sc, dtype=F32)
    kf = _per_value_head(kf, G, H, faults)
    if g is not None:
        logdecay = g.to(F32)
    else:
        logdecay = _gate(a.to(F32).reshape(T, HV, K) + dt_bias.to(F32).reshape(HV, K), A_log, lower_bound, faults)
    alpha = torch.exp(logdecay)
    bt = beta.to(F32)
    if beta_is_logits:
        bt = torch.sigmoid(bt)
    vf = v.to(F32)

    o = torch.empty(v.shape, dtype=v.dtype, device=v.device)
    final = torch.empty((N, HV, V, K), dtype=F32, device=v.device) if output_final_state else None
    S = None
    for n in range(N):
        if S is None or not faults.carry_state_across_sequences:
            S = (initial_state[n].to(F32) if initial_state is not None
                 else torch.zeros((HV, V, K), dtype=F32, device=v.device))
        for t in range(bounds[n], bounds[n + 1]):
            S = S * alpha[t][:, None, :]
            u = _dot_k(S, kf[t][:, None, :], faults)
            d = bt[t][:, None] * (vf[t] - u)
            S = S + d[..., None] * kf[t][:, None, :]
            o[t] = _dot_k(S, qf[t][:, None, :], faults).to(v.dtype)
        if final is not None:
            final[n] = S
    return o, final
